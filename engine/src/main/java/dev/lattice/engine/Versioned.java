package dev.lattice.engine;

import java.util.Objects;

/**
 * A value with the version of the mutation that wrote it. Versions are positive, unique within a tree and
 * increase with every committed mutation of a log; a reopened tree continues above the highest version it
 * replayed. Version {@code 0} stands for "absent" in {@link Tree#putIfVersion}.
 *
 * @param value the value bytes (the caller must not modify them; they are shared with the engine's state)
 * @param version the version, {@code >= 1}
 */
public record Versioned(byte[] value, long version) {

    /**
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
