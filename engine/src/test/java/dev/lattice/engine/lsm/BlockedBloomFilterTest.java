package dev.lattice.engine.lsm;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The blocked Bloom filter of run format 3: no false negatives, a false-positive rate near the theory for 512-bit
 * blocks, the bit positions docs/wal-format.md describes (they are part of the format), and a damaged header refused.
 */
class BlockedBloomFilterTest {

    private static long[] keyHashes(String prefix, int count) {
        long[] h = new long[count];
        for (int i = 0; i < count; i++) {
            h[i] = BloomFilter.hash(prefix + String.format("%09d", i));
        }
        return h;
    }

    private static byte[] encode(BlockedBloomFilter f) {
        RunFormat.ByteSink out = new RunFormat.ByteSink(64);
        f.encode(out);
        return java.util.Arrays.copyOf(out.array(), out.size());
    }

    private static long[] words(BlockedBloomFilter f) {
        ByteBuffer in = ByteBuffer.wrap(encode(f));
        in.get();
        in.get();
        long[] w = new long[RunFormat.getVarInt(in)];
        for (int i = 0; i < w.length; i++) {
            w[i] = in.getLong();
        }
        return w;
    }

    /** The layout as docs/wal-format.md states it, written out independently of the filter's own loop. */
    private static long[] reference(long[] hashes, int count, int bitsPerKey) {
        long blocks = Math.max(1, ((long) count * bitsPerKey + 511) / 512);
        int k = Math.max(1, Math.min(16, (int) Math.round(bitsPerKey * 0.6)));
        long[] bits = new long[(int) blocks * 8];
        for (int j = 0; j < count; j++) {
            long h = hashes[j];
            long block = Long.divideUnsigned((h >>> 32) * blocks, 1L << 32);
            long[] g = new long[(k + 6) / 7];
            g[0] = murmur3Fmix64(h);
            for (int w = 1; w < g.length; w++) {
                g[w] = murmur3Fmix64(g[w - 1]);
            }
            for (int i = 0; i < k; i++) {
                int bit = (int) ((g[i / 7] >>> (9 * (i % 7))) & 511);
                bits[(int) (block * 8 + bit / 64)] |= 1L << (bit % 64);
            }
        }
        return bits;
    }

    private static long murmur3Fmix64(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        x ^= x >>> 33;
        return x;
    }

    /** Expected false-positive rate of a blocked filter: keys per block are Poisson with mean 512 / bitsPerKey. */
    private static double theory(int bitsPerKey, int k) {
        double mean = 512.0 / bitsPerKey;
        double rate = 0;
        for (int j = 0; j < 2_000; j++) {
            double p = Math.exp(-mean + j * Math.log(mean) - logFactorial(j));
            rate += p * Math.pow(1 - Math.pow(1 - 1 / 512.0, (double) k * j), k);
        }
        return rate;
    }

    private static double logFactorial(int n) {
        double s = 0;
        for (int i = 2; i <= n; i++) {
            s += Math.log(i);
        }
        return s;
    }

    @Test
    void setsTheBitsTheFormatDescribesInOneBlockPerKey() {
        SplittableRandom r = new SplittableRandom(23);
        for (int count : new int[] {0, 1, 5, 51, 52, 1_000, 65_537}) {
            for (int bpk : new int[] {1, 4, 10, 13, 16, 30}) {
                long[] hashes = new long[count];
                for (int i = 0; i < count; i++) {
                    hashes[i] = i % 5 == 0 ? -1L - r.nextLong(1L << 40) : r.nextLong(); // high bits all set too
                }
                BlockedBloomFilter f = BlockedBloomFilter.build(hashes, count, bpk);
                assertThat(f.probes()).isEqualTo(BlockedBloomFilter.probesFor(bpk));
                assertThat(words(f)).as("%d keys, %d bits per key", count, bpk)
                        .isEqualTo(reference(hashes, count, bpk));
            }
        }
        assertThat(BlockedBloomFilter.probesFor(10)).isEqualTo(6);
        // one key: its bits lie in one 8-word block
        long[] one = {BloomFilter.hash("only")};
        long[] w = words(BlockedBloomFilter.build(one, 1, 10_000));
        int firstWord = -1;
        int lastWord = -1;
        int set = 0;
        for (int i = 0; i < w.length; i++) {
            if (w[i] != 0) {
                firstWord = firstWord < 0 ? i : firstWord;
                lastWord = i;
                set += Long.bitCount(w[i]);
            }
        }
        assertThat(set).isBetween(1, BlockedBloomFilter.MAX_K);
        assertThat(firstWord / 8).as("block of the first and last word set").isEqualTo(lastWord / 8);
    }

    @Test
    void everyAddedKeyIsFound() {
        for (int bpk : new int[] {1, 3, 10, 20}) {
            long[] hashes = keyHashes("user", 300_000);
            BlockedBloomFilter f = BlockedBloomFilter.build(hashes, hashes.length, bpk);
            for (long h : hashes) {
                if (!f.mightContain(h)) {
                    throw new AssertionError("false negative at " + bpk + " bits per key");
                }
            }
        }
        BlockedBloomFilter empty = BlockedBloomFilter.build(new long[0], 0, 10);
        assertThat(empty.sizeBytes()).isEqualTo(64);
        assertThat(empty.mightContain(BloomFilter.hash("a"))).isFalse();
    }

    @Test
    void falsePositiveRateAtTenBitsPerKeyIsAtMostOnePointTwoPercent() {
        int keys = 200_000;
        int absent = 1_000_000;
        long[] present = keyHashes("user", keys);
        BlockedBloomFilter blocked = BlockedBloomFilter.build(present, keys, 10);
        BloomFilter standard = BloomFilter.build(present, keys, 10);
        int blockedFp = 0;
        int standardFp = 0;
        for (int i = 0; i < absent; i++) {
            long h = BloomFilter.hash("absent" + String.format("%09d", i));
            blockedFp += blocked.mightContain(h) ? 1 : 0;
            standardFp += standard.mightContain(h) ? 1 : 0;
        }
        double rate = blockedFp / (double) absent;
        System.out.printf("[bloom fpr] 10 bits/key, %d keys, %d absent probes: blocked k=%d %.4f%% "
                + "(theory %.4f%%), standard k=7 %.4f%%%n", keys, absent, blocked.probes(), 100 * rate,
                100 * theory(10, blocked.probes()), 100.0 * standardFp / absent);
        assertThat(blocked.sizeBytes()).as("whole 64-byte blocks for 10 bits per key")
                .isEqualTo((keys * 10L + 511) / 512 * 64);
        assertThat(rate).as("false-positive rate, blocked, 10 bits per key").isGreaterThan(0).isLessThan(0.012);
    }

    @Test
    void falsePositiveRateIsCloseToTheTheoryAtSeveralDensities() {
        int keys = 100_000;
        int absent = 500_000;
        long[] present = keyHashes("k", keys);
        for (int bpk : new int[] {4, 6, 8, 12, 16}) {
            BlockedBloomFilter f = BlockedBloomFilter.build(present, keys, bpk);
            int fp = 0;
            for (int i = 0; i < absent; i++) {
                fp += f.mightContain(BloomFilter.hash("no" + i)) ? 1 : 0;
            }
            double rate = fp / (double) absent;
            double expected = theory(bpk, f.probes());
            // 4 standard deviations of the count, plus 10% for the filter's own draw of block loads
            double slack = 4 * Math.sqrt(expected / absent) + 0.10 * expected;
            assertThat(rate).as("%d bits per key, k %d: measured vs theory %.5f", bpk, f.probes(), expected)
                    .isLessThan(expected + slack);
        }
    }

    @Test
    void encodesAndDecodesToTheSameFilter() {
        long[] present = keyHashes("rt", 20_000);
        BlockedBloomFilter f = BlockedBloomFilter.build(present, present.length, 10);
        byte[] bytes = encode(f);
        int words = (int) (f.sizeBytes() / 8);
        assertThat(bytes).hasSize(2 + varintLength(words) + words * 8);
        assertThat(bytes[0]).as("kind byte").isEqualTo((byte) 1);
        assertThat(bytes[1]).as("k").isEqualTo((byte) 6);
        BlockedBloomFilter back = BlockedBloomFilter.decode(ByteBuffer.wrap(bytes));
        assertThat(back.probes()).isEqualTo(f.probes());
        assertThat(back.sizeBytes()).isEqualTo(f.sizeBytes());
        assertThat(encode(back)).isEqualTo(bytes);
        for (int i = 0; i < 50_000; i++) {
            long h = i < present.length ? present[i] : BloomFilter.hash("x" + i);
            assertThat(back.mightContain(h)).isEqualTo(f.mightContain(h));
        }
    }

    private static int varintLength(long v) {
        int n = 1;
        while ((v & ~0x7FL) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    private static byte[] header(int kind, int k, int words, int wordsPresent, int extra) {
        RunFormat.ByteSink out = new RunFormat.ByteSink(64);
        out.write(kind);
        out.write(k);
        RunFormat.putVarLong(out, words);
        for (int i = 0; i < wordsPresent; i++) {
            out.writeLong(-1L);
        }
        for (int i = 0; i < extra; i++) {
            out.write(0);
        }
        return java.util.Arrays.copyOf(out.array(), out.size());
    }

    @Test
    void aDamagedHeaderIsRefused() {
        assertThat(BlockedBloomFilter.decode(ByteBuffer.wrap(header(1, 6, 16, 16, 0))).sizeBytes()).isEqualTo(128);
        byte[][] bad = {
            header(0, 6, 8, 8, 0), // kind 0
            header(2, 6, 8, 8, 0), // an unknown kind
            header(7, 8, 8, 8, 0), // a standard filter's header (k first) read as format 3
            header(1, 0, 8, 8, 0), // k 0
            header(1, 17, 8, 8, 0), // k above 16
            header(1, 6, 12, 12, 0), // words not whole blocks
            header(1, 6, 0, 0, 0), // no block
            header(1, 6, 16, 8, 0), // fewer words than the header says
            header(1, 6, 8, 8, 3), // bytes after the words
            {1, 6}, // too short
        };
        for (byte[] b : bad) {
            assertThatThrownBy(() -> BlockedBloomFilter.decode(ByteBuffer.wrap(b)))
                    .as("header %s", java.util.Arrays.toString(java.util.Arrays.copyOf(b, Math.min(b.length, 4))))
                    .isInstanceOf(IllegalStateException.class);
        }
        assertThatThrownBy(() -> BlockedBloomFilter.decode(ByteBuffer.wrap(header(1, 6, 12, 12, 0))))
                .hasMessageContaining("12 words").hasMessageContaining("multiple of 8");
    }

    @Test
    void buildRefusesBadArguments() {
        assertThatThrownBy(() -> BlockedBloomFilter.build(new long[1], 1, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> BlockedBloomFilter.build(new long[1], 2, 10))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
