package dev.lattice.engine.lsm;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The standard Bloom filter over a run's keys, the key filter of run formats 1 and 2 (format 3 runs hold a
 * {@link BlockedBloomFilter}). Double hashing of one 64-bit hash of the key's UTF-8 bytes (FNV-1a, then the SplitMix64
 * finaliser; {@link #hash(String)}, shared by both filters); {@code k} probes into a bit array sized at
 * {@code bitsPerKey} bits per key (10 bits and k = 7 give about 1% false positives). Its bit positions are part of
 * the run format and do not change ({@code BloomFilterTest}).
 *
 * <p>Built by one thread; immutable once built or decoded, then thread-safe.
 */
public final class BloomFilter implements KeyFilter {

    private final long[] bits;
    private final int k;
    /** The filter's size in bits. */
    private final long n;
    /** 2^64 mod {@link #n}: what a probe position loses when its 64-bit sum wraps. */
    private final long wrap;

    private BloomFilter(long[] bits, int k) {
        this.bits = bits;
        this.k = k;
        this.n = (long) bits.length * 64;
        this.wrap = Math.floorMod(2 * Long.remainderUnsigned(Long.MIN_VALUE, n), n);
    }

    /**
     * Builds a filter from key hashes.
     *
     * @param hashes {@link #hash(String)} of every key
     * @param count how many of {@code hashes} are used
     * @param bitsPerKey bits per key, at least 1
     * @return the filter
     * @throws IllegalArgumentException if {@code bitsPerKey} is below 1
     */
    public static BloomFilter build(long[] hashes, int count, int bitsPerKey) {
        if (bitsPerKey < 1) {
            throw new IllegalArgumentException("bitsPerKey must be at least 1, got " + bitsPerKey);
        }
        int k = Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * 0.69)));
        long nbits = Math.max(64, (long) count * bitsPerKey);
        long[] bits = new long[(int) ((nbits + 63) / 64)];
        BloomFilter f = new BloomFilter(bits, k);
        for (int i = 0; i < count; i++) {
            f.add(hashes[i]);
        }
        return f;
    }

    /**
     * The 64-bit hash the filter uses for a key.
     *
     * @param key the key
     * @return its hash
     */
    public static long hash(String key) {
        return hash(key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The 64-bit hash the filter uses for a key, from its UTF-8 bytes.
     *
     * @param utf8 the key's UTF-8 bytes
     * @return its hash, equal to {@link #hash(String)} of the key
     */
    public static long hash(byte[] utf8) {
        return hash(utf8, utf8.length);
    }

    /**
     * The 64-bit hash the filter uses for a key, from the first {@code length} bytes of an array.
     *
     * @param utf8 an array starting with the key's UTF-8 bytes
     * @param length the key's length in bytes, at most {@code utf8.length}
     * @return its hash, equal to {@link #hash(String)} of the key
     */
    public static long hash(byte[] utf8, int length) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < length; i++) {
            h ^= utf8[i] & 0xFF;
            h *= 0x100000001b3L;
        }
        h = (h ^ (h >>> 30)) * 0xbf58476d1ce4e5b9L;
        h = (h ^ (h >>> 27)) * 0x94d049bb133111ebL;
        return h ^ (h >>> 31);
    }

    private void add(long h) {
        long p = Math.floorMod(h, n);
        long h2 = (h >>> 32) | 1;
        long d = h2 % n;
        long x = h;
        for (int i = 0; i < k; i++) {
            bits[(int) (p >>> 6)] |= 1L << p;
            long nx = x + h2;
            p = step(p, d, nx < x);
            x = nx;
        }
    }

    /**
     * The next probe position: {@code floorMod(x + h2, n)} from {@code p = floorMod(x, n)} and {@code d = h2 mod n},
     * without a division ({@code h2 > 0}, so the 64-bit sum wraps exactly when it comes out below {@code x}).
     */
    private long step(long p, long d, boolean wrapped) {
        p += d;
        if (p >= n) {
            p -= n;
        }
        if (wrapped) {
            p -= wrap;
            if (p < 0) {
                p += n;
            }
        }
        return p;
    }

    /**
     * Whether the key may be in the run.
     *
     * @param keyHash {@link #hash(String)} of the key
     * @return false when it is certainly absent
     */
    @Override
    public boolean mightContain(long keyHash) {
        long p = Math.floorMod(keyHash, n);
        long h2 = (keyHash >>> 32) | 1;
        long d = h2 % n;
        long x = keyHash;
        for (int i = 0; i < k; i++) {
            if ((bits[(int) (p >>> 6)] & (1L << p)) == 0) {
                return false;
            }
            long nx = x + h2;
            p = step(p, d, nx < x);
            x = nx;
        }
        return true;
    }

    /**
     * The filter's size in memory.
     *
     * @return bytes of its bit array
     */
    @Override
    public long sizeBytes() {
        return bits.length * 8L;
    }

    void encode(RunFormat.ByteSink out) {
        out.write(k);
        RunFormat.putVarLong(out, bits.length);
        for (long w : bits) {
            out.writeLong(w);
        }
    }

    static BloomFilter decode(ByteBuffer in) {
        int k = in.get() & 0xFF;
        int words = RunFormat.getVarInt(in);
        if (k < 1 || k > 30 || words < 1 || words * 8L > in.remaining()) {
            throw new IllegalStateException("bad filter header (k " + k + ", " + words + " words)");
        }
        long[] bits = new long[words];
        for (int i = 0; i < words; i++) {
            bits[i] = in.getLong();
        }
        return new BloomFilter(bits, k);
    }
}
