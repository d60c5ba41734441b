package dev.lattice.engine.lsm;

import java.util.Objects;

/**
 * One key's version in a run: a value or a tombstone.
 *
 * @param key the key
 * @param version the version the write was given (the engine's sequence), non-negative
 * @param tombstone true for a delete; then {@code value} is empty
 * @param value the value's bytes (not copied)
 */
public record RunEntry(String key, long version, boolean tombstone, byte[] value) {

    private static final byte[] NONE = new byte[0];

    /**
     * Creates an entry.
     *
     * @param key the key
     * @param version the version the write was given (the engine's sequence), non-negative
     * @param tombstone true for a delete; then {@code value} is empty
     * @param value the value's bytes (not copied)
     * @throws NullPointerException if {@code key} or {@code value} is null
     * @throws IllegalArgumentException if {@code version} is negative or a tombstone carries bytes
     */
    public RunEntry {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        if (version < 0) {
            throw new IllegalArgumentException("negative version " + version);
        }
        if (tombstone && value.length > 0) {
            throw new IllegalArgumentException("a tombstone has no value");
        }
    }

    /**
     * A value.
     *
     * @param key the key
     * @param version its version
     * @param value its bytes
     * @return the entry
     */
    public static RunEntry put(String key, long version, byte[] value) {
        return new RunEntry(key, version, false, value);
    }

    /**
     * A tombstone.
     *
     * @param key the key
     * @param version the delete's version
     * @return the entry
     */
    public static RunEntry delete(String key, long version) {
        return new RunEntry(key, version, true, NONE);
    }

    @Override
    public String toString() {
        return "RunEntry[" + key + " v" + version + (tombstone ? " deleted" : ", " + value.length + " bytes") + "]";
    }
}
