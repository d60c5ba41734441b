package dev.lattice.spi;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * A 128-bit batch identifier. Providers store it with a batch so that a retried {@code stage} or {@code append}
 * whose first attempt did land is recognised (same id, same offsets: success) and told apart from a conflicting
 * write (other id, same offsets: {@link OffsetConflictException}).
 *
 * <p>Immutable and thread-safe.
 *
 * @param high the upper 64 bits
 * @param low the lower 64 bits
 */
public record BatchId(long high, long low) {

    /** Drawn once per JVM from a {@link SecureRandom}: tells this process's ids from every other's. */
    private static final long PROCESS_BITS;
    private static final java.util.concurrent.atomic.AtomicLong SEQUENCE;

    static {
        SecureRandom seed = new SecureRandom();
        PROCESS_BITS = seed.nextLong();
        SEQUENCE = new java.util.concurrent.atomic.AtomicLong(seed.nextLong());
    }

    /**
     * A new unique batch id: 64 bits drawn once per JVM from a {@link SecureRandom} (so two processes collide with
     * probability 2^-64) and a per-JVM 64-bit sequence passed through a bijective mix (so ids of one process never
     * repeat and still look random). One atomic increment, no lock: the write path calls it once per batch.
     *
     * @return a new id, unique within this JVM
     */
    public static BatchId random() {
        return new BatchId(PROCESS_BITS, mix(SEQUENCE.getAndIncrement()));
    }

    /** A bijection on 64-bit values (the SplitMix64 finaliser): distinct inputs give distinct outputs. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * Reads an id from its 16-byte big-endian form, as written by {@link #toBytes()}.
     *
     * @param bytes exactly 16 bytes
     * @return the id
     * @throws NullPointerException if {@code bytes} is null
     * @throws IllegalArgumentException if {@code bytes.length != 16}
     */
    public static BatchId fromBytes(byte[] bytes) {
        if (bytes.length != 16) {
            throw new IllegalArgumentException("a batch id is 16 bytes, got " + bytes.length);
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = (hi << 8) | (bytes[i] & 0xFF);
            lo = (lo << 8) | (bytes[i + 8] & 0xFF);
        }
        return new BatchId(hi, lo);
    }

    /**
     * Parses the 32-hex-digit form written by {@link #toString()}.
     *
     * @param hex 32 hexadecimal digits
     * @return the id
     * @throws IllegalArgumentException if the text is not 32 hex digits
     */
    public static BatchId parse(String hex) {
        if (hex == null || hex.length() != 32) {
            throw new IllegalArgumentException("a batch id is 32 hex digits, got '" + hex + "'");
        }
        return fromBytes(HexFormat.of().parseHex(hex));
    }

    /**
     * The 16-byte big-endian form.
     *
     * @return a new 16-byte array
     */
    public byte[] toBytes() {
        byte[] b = new byte[16];
        for (int i = 7; i >= 0; i--) {
            b[i] = (byte) (high >>> (8 * (7 - i)));
            b[i + 8] = (byte) (low >>> (8 * (7 - i)));
        }
        return b;
    }

    /** @return 32 lower-case hex digits */
    @Override
    public String toString() {
        return HexFormat.of().formatHex(toBytes());
    }
}
