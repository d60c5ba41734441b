package dev.lattice.spi;

import java.util.Objects;

/**
 * One committed entry read back from a log.
 *
 * <p>The payload array belongs to the caller; a provider returns a fresh array per entry (or one it never
 * touches again).
 *
 * @param offset the entry's offset, {@code >= 0}
 * @param payload the entry's bytes, exactly as appended
 */
public record LogEntry(long offset, byte[] payload) {

    /**
     * Creates an entry.
     *
     * @param offset the entry's offset, {@code >= 0}
     * @param payload the entry's bytes, exactly as appended
     * @throws NullPointerException if {@code payload} is null
     * @throws IllegalArgumentException if {@code offset < 0}
     */
    public LogEntry {
        Objects.requireNonNull(payload, "payload");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0, got " + offset);
        }
    }

    @Override
    public String toString() {
        return "LogEntry[" + offset + ", " + payload.length + " bytes]";
    }
}
