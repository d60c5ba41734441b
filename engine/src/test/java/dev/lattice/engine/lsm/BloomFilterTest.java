package dev.lattice.engine.lsm;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter's probe positions are part of the run format: a filter built now must set the same bits as the
 * division-per-probe formula {@code floorMod(h + i * ((h >>> 32) | 1), bits)} that wrote the existing runs, and
 * answer for filters written by it.
 */
class BloomFilterTest {

    /** The bit array of the original formula (one division per probe). */
    private static long[] reference(long[] hashes, int count, int bitsPerKey) {
        int k = Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * 0.69)));
        long nbits = Math.max(64, (long) count * bitsPerKey);
        long[] bits = new long[(int) ((nbits + 63) / 64)];
        long n = (long) bits.length * 64;
        for (int j = 0; j < count; j++) {
            long h1 = hashes[j];
            long h2 = (h1 >>> 32) | 1;
            for (int i = 0; i < k; i++) {
                long bit = Math.floorMod(h1 + i * h2, n);
                bits[(int) (bit >>> 6)] |= 1L << bit;
            }
        }
        return bits;
    }

    private static long[] words(BloomFilter f) {
        RunFormat.ByteSink out = new RunFormat.ByteSink(64);
        f.encode(out);
        ByteBuffer in = ByteBuffer.wrap(out.array(), 0, out.size());
        in.get();
        long[] w = new long[RunFormat.getVarInt(in)];
        for (int i = 0; i < w.length; i++) {
            w[i] = in.getLong();
        }
        return w;
    }

    @Test
    void setsTheSameBitsAsTheOriginalFormulaIncludingWhereTheSumWraps() {
        SplittableRandom r = new SplittableRandom(17);
        int[] counts = {1, 3, 7, 64, 100, 1_000, 6_553, 65_536, 100_003};
        int[] bitsPerKey = {1, 5, 10, 16, 43};
        for (int count : counts) {
            for (int bpk : bitsPerKey) {
                long[] hashes = new long[count];
                for (int i = 0; i < count; i++) {
                    // plenty of hashes near Long.MAX_VALUE, where h + i * h2 wraps to negative
                    hashes[i] = i % 4 == 0 ? Long.MAX_VALUE - r.nextLong(1L << 35) : r.nextLong();
                }
                BloomFilter f = BloomFilter.build(hashes, count, bpk);
                assertThat(words(f)).as("%d keys, %d bits per key", count, bpk)
                        .isEqualTo(reference(hashes, count, bpk));
                for (int i = 0; i < count; i++) {
                    assertThat(f.mightContain(hashes[i])).isTrue();
                }
            }
        }
    }

    @Test
    void answersForAFilterWrittenByTheOriginalFormula() {
        SplittableRandom r = new SplittableRandom(5);
        int count = 20_000;
        long[] hashes = new long[count];
        for (int i = 0; i < count; i++) {
            hashes[i] = i % 3 == 0 ? Long.MAX_VALUE - r.nextLong(1L << 36) : r.nextLong();
        }
        long[] ref = reference(hashes, count, 10);
        RunFormat.ByteSink out = new RunFormat.ByteSink(ref.length * 8 + 16);
        out.write(7);
        RunFormat.putVarLong(out, ref.length);
        for (long w : ref) {
            out.writeLong(w);
        }
        BloomFilter f = BloomFilter.decode(ByteBuffer.wrap(out.array(), 0, out.size()));
        int falsePositives = 0;
        for (int i = 0; i < count; i++) {
            assertThat(f.mightContain(hashes[i])).isTrue();
            long absent = r.nextLong();
            boolean refSays = true;
            long h2 = (absent >>> 32) | 1;
            for (int p = 0; p < 7 && refSays; p++) {
                long bit = Math.floorMod(absent + p * h2, (long) ref.length * 64);
                refSays = (ref[(int) (bit >>> 6)] & (1L << bit)) != 0;
            }
            assertThat(f.mightContain(absent)).isEqualTo(refSays);
            falsePositives += refSays ? 1 : 0;
        }
        assertThat(falsePositives).as("false positives of %d", count).isBetween(1, count / 50);
    }
}
