package dev.lattice.provider.chronicle;

import dev.lattice.spi.DurabilityLevel;

/**
 * The durability modes of the Chronicle provider, chosen with the {@code durability} option.
 */
public enum ChronicleDurability {
    /**
     * A commit returns once its frames are in the memory-mapped queue file, i.e. in the OS page cache. Survives a
     * crash or kill of the process, not an OS crash or power loss ({@link DurabilityLevel#PROCESS_CRASH}). The
     * default.
     */
    PROCESS(DurabilityLevel.PROCESS_CRASH),
    /**
     * A commit returns only after {@code FileChannel.force} (fdatasync) of every queue file it wrote, and an fsync
     * of the queue directory when it created a cycle file. Survives an OS crash or power loss
     * ({@link DurabilityLevel#OS_CRASH}), at the cost of one forced write per commit.
     */
    FSYNC(DurabilityLevel.OS_CRASH);

    private final DurabilityLevel level;

    ChronicleDurability(DurabilityLevel level) {
        this.level = level;
    }

    /** @return the SPI durability level this mode delivers, as declared in {@code describe()} */
    public DurabilityLevel level() {
        return level;
    }
}
