package dev.lattice.engine.lsm;

import java.util.Objects;

/**
 * One key's version in a run: a value or a tombstone.
 *
 * @param key the key
 * @param version the version the write was given (the engine's sequence), non-negative
 * @param tombstone true for a delete; then {@code value} is empty
 * @param value the value's bytes (not copied)
 * @param expiresAtMillis when a value expires (epoch ms, the writer's wall clock), {@code 0} for never (run format 2;
 *     always 0 for a tombstone)
 */
public record RunEntry(String key, long version, boolean tombstone, byte[] value, long expiresAtMillis) {

    private static final byte[] NONE = new byte[0];

    /**
     * Creates an entry.
     *
     * @param key the key
     * @param version the version the write was given (the engine's sequence), non-negative
     * @param tombstone true for a delete; then {@code value} is empty
     * @param value the value's bytes (not copied)
     * @param expiresAtMillis when a value expires (epoch ms), {@code 0} for never
     * @throws NullPointerException if {@code key} or {@code value} is null
     * @throws IllegalArgumentException if {@code version} or {@code expiresAtMillis} is negative, or a tombstone
     *     carries bytes or an expiry
     */
    public RunEntry {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        if (version < 0) {
            throw new IllegalArgumentException("negative version " + version);
        }
        if (tombstone && (value.length > 0 || expiresAtMillis != 0)) {
            throw new IllegalArgumentException("a tombstone has no value and no expiry");
        }
        if (expiresAtMillis < 0) {
            throw new IllegalArgumentException("negative expiry " + expiresAtMillis);
        }
    }

    /**
     * Creates an entry that never expires.
     *
     * @param key the key
     * @param version the version the write was given, non-negative
     * @param tombstone true for a delete; then {@code value} is empty
     * @param value the value's bytes (not copied)
     * @throws NullPointerException if {@code key} or {@code value} is null
     * @throws IllegalArgumentException if {@code version} is negative or a tombstone carries bytes
     */
    public RunEntry(String key, long version, boolean tombstone, byte[] value) {
        this(key, version, tombstone, value, 0);
    }

    /**
     * A value that expires.
     *
     * @param key the key
     * @param version its version
     * @param value its bytes
     * @param expiresAtMillis when it expires (epoch ms), {@code 0} for never
     * @return the entry
     */
    public static RunEntry put(String key, long version, byte[] value, long expiresAtMillis) {
        return new RunEntry(key, version, false, value, expiresAtMillis);
    }

    /**
     * Whether the value has expired.
     *
     * @param nowMillis the reader's wall clock (epoch ms)
     * @return true when it carries an expiry at or before {@code nowMillis}
     */
    public boolean expiredAt(long nowMillis) {
        return expiresAtMillis != 0 && expiresAtMillis <= nowMillis;
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
        return "RunEntry[" + key + " v" + version + (tombstone ? " deleted" : ", " + value.length + " bytes")
                + (expiresAtMillis != 0 ? ", expires " + expiresAtMillis : "") + "]";
    }
}
