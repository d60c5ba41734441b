package dev.lattice.engine.feed;

import java.util.Objects;

/**
 * One committed mutation of a tree, as delivered by a change feed.
 *
 * @param partition the partition (log) it was written in
 * @param offset the offset of the log entry that holds it (for a multi-log atomic write: its PREPARE entry in this
 *     partition; all changes of one entry share the offset)
 * @param kind what it does
 * @param key the key; for {@link Kind#DELETE_RANGE} the inclusive lower bound
 * @param value the new value for {@link Kind#PUT}, else null (shared: do not modify)
 * @param toKeyExclusive the exclusive upper bound of a {@link Kind#DELETE_RANGE}, else null
 * @param expiresAtMillis when a put with a time-to-live expires (epoch ms), 0 for none
 * @param version the version the mutation gave the key (every key of one atomic write shares it)
 * @param atomicWriteId null for a single-key write; for an atomic write its id: the 32 hex digits of a multi-log
 *     write (the same in every partition it touched), {@code "<tree>/<partition>@<offset>"} for a single-log one
 */
public record Change(int partition, long offset, Kind kind, String key, byte[] value, String toKeyExclusive,
                     long expiresAtMillis, long version, String atomicWriteId) {

    /** What a change does. */
    public enum Kind {
        /** The key now has {@code value} (with {@code expiresAtMillis} when written with a time-to-live). */
        PUT,
        /** The key was deleted (a tombstone; logged and delivered whether or not the key existed). */
        DELETE,
        /** Every key in {@code [key, toKeyExclusive)} of this partition was deleted. */
        DELETE_RANGE
    }

    /**
     * Creates a change.
     *
     * @param partition the partition
     * @param offset the log offset
     * @param kind the kind
     * @param key the key or lower bound
     * @param value the value of a put
     * @param toKeyExclusive the upper bound of a range delete
     * @param expiresAtMillis expiry (epoch ms) or 0
     * @param version the version
     * @param atomicWriteId the atomic write's id or null
     * @throws NullPointerException if {@code kind} or {@code key} is null, or a put has no value
     */
    public Change {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(key, "key");
        if (kind == Kind.PUT) {
            Objects.requireNonNull(value, "value");
        }
    }

    @Override
    public String toString() {
        return "Change[p" + partition + "@" + offset + " " + kind + " " + key
                + (kind == Kind.PUT ? " (" + value.length + " bytes)" : "")
                + (toKeyExclusive != null ? " .. " + toKeyExclusive : "")
                + (expiresAtMillis != 0 ? " expires " + expiresAtMillis : "") + " v" + version
                + (atomicWriteId != null ? " txn " + atomicWriteId : "") + "]";
    }
}
