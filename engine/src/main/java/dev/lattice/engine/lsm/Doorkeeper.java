package dev.lattice.engine.lsm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The admission filter in front of a full block cache: a block read on a miss enters the cache only if it missed
 * before within the current window, so blocks read once (most misses of a uniform or scan-heavy load) are not
 * inserted and evicted again right away. A small Bloom filter of block hashes (two probes, eight bits per entry the
 * cache holds), cleared once as many blocks have been marked as the cache holds. This is the "doorkeeper" of the
 * TinyLFU admission policy (Einziger, Friedman and Manes, 2017), in front of Caffeine's own.
 *
 * <p>Thread-safe; races between readers only let a block in one miss earlier or later.
 */
final class Doorkeeper {

    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] words;
    private final int mask;
    private final int window;
    private final AtomicInteger marked = new AtomicInteger();

    /** @param entries about how many blocks the cache holds (the window length, in marked blocks) */
    Doorkeeper(int entries) {
        int e = Math.max(64, Math.min(entries, 1 << 24));
        int bits = Integer.highestOneBit(e * 8 - 1) << 1;
        this.words = new long[bits >>> 6];
        this.mask = bits - 1;
        this.window = e;
    }

    /**
     * Marks a block and says whether it was marked already.
     *
     * @param hash the block's hash
     * @return true when the block missed before in this window (admit it)
     */
    boolean admit(int hash) {
        int a = hash & mask;
        int b = Integer.rotateLeft(hash * 0x9E3779B9, 16) & mask;
        if (isSet(a) && isSet(b)) {
            return true;
        }
        set(a);
        set(b);
        if (marked.incrementAndGet() >= window) {
            marked.set(0);
            java.util.Arrays.fill(words, 0L);
        }
        return false;
    }

    private boolean isSet(int bit) {
        return ((long) WORDS.getOpaque(words, bit >>> 6) & (1L << bit)) != 0;
    }

    private void set(int bit) {
        int i = bit >>> 6;
        long m = 1L << bit;
        if (((long) WORDS.getOpaque(words, i) & m) == 0) {
            WORDS.getAndBitwiseOr(words, i, m);
        }
    }
}
