package dev.lattice.spi;

/**
 * What a committed entry survives, as declared by a provider in {@link ProviderDescriptor#durability()}. Ordered
 * from weakest to strongest.
 */
public enum DurabilityLevel {
    /** Held in this process's memory only: lost when the provider's storage object is dropped or the JVM exits. */
    MEMORY,
    /** Survives a crash or kill of the process (the bytes reached the OS page cache), not an OS crash or power loss. */
    PROCESS_CRASH,
    /** Forced to local stable storage (fsync) before commit returns: survives an OS crash or power loss. */
    OS_CRASH,
    /** Acknowledged by a remote storage service that replicates it (the service's own durability promise applies). */
    REPLICATED;

    /**
     * Compares strengths: a later constant in declaration order is a stronger level.
     *
     * @param other another level
     * @return true when this level is at least as strong as {@code other}
     */
    public boolean atLeast(DurabilityLevel other) {
        return compareTo(other) >= 0;
    }
}
