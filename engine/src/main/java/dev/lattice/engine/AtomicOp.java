package dev.lattice.engine;

import java.util.Objects;

/**
 * One operation of a partition's part of an atomic write prepared by a cluster ({@link PartialTree#prepareAtomic}).
 * Immutable (the value array is not copied).
 *
 * @param kind what it does
 * @param key the key (the range's first key, inclusive, for {@link Kind#DELETE_RANGE})
 * @param value the value for puts; the range's end key (exclusive, UTF-8) for {@link Kind#DELETE_RANGE}; else null
 * @param number the expiry (milliseconds since the epoch) for {@link Kind#PUT_TTL}; the expected version
 *     ({@code 0}: absent) for {@link Kind#EXPECT}; else 0
 */
public record AtomicOp(Kind kind, String key, byte[] value, long number) {

    /** The kinds of operations. */
    public enum Kind {
        /** Write a value. */
        PUT,
        /** Write a value that expires at {@code number}. */
        PUT_TTL,
        /** Delete the key. */
        DELETE,
        /** Precondition: the key's version is {@code number} (0: the key is absent). */
        EXPECT,
        /** Delete the keys from {@code key} (inclusive) to the UTF-8 string in {@code value} (exclusive). */
        DELETE_RANGE
    }

    /**
     * Validates the operation.
     *
     * @param kind what it does
     * @param key the key
     * @param value the value (see the record)
     * @param number the expiry or expected version (see the record)
     * @throws NullPointerException if the kind or key is null, or the value of a put or range delete
     */
    public AtomicOp {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(key, "key");
        if (kind == Kind.PUT || kind == Kind.PUT_TTL || kind == Kind.DELETE_RANGE) {
            Objects.requireNonNull(value, "value");
        }
    }
}
