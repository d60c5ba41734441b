package dev.lattice.engine;

import java.util.Objects;

/**
 * A value with the version of the write that wrote it. Versions are positive, increase with every committed write
 * of a key, and are unique per write within a tree (all keys of one atomic write carry its one version); a reopened
 * tree continues above the highest version it replayed. Version {@code 0} stands for "absent" in {@link Tree#putIfVersion}.
 *
 * @param value the value bytes (the caller must not modify them; they are shared with the engine's state)
 * @param version the version, {@code >= 1}
 */
public record Versioned(byte[] value, long version) {

    /**
     * @param value the value bytes (the caller must not modify them; they are shared with the engine's state)
     * @param version the version, {@code >= 1}
     * @throws NullPointerException if {@code value} is null
     */
    public Versioned {
        Objects.requireNonNull(value, "value");
    }

    @Override
    public String toString() {
        return "Versioned[" + value.length + " bytes, v" + version + "]";
    }
}
