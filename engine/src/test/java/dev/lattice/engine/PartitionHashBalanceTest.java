package dev.lattice.engine;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Partition balance of the hash versions on short related key sets (the figures of docs/engine.md, "Partition
 * hash"): for 1,000 random ids the 8 keys {@code <id>-k0..k7} over 8 partitions, and the keys {@code a..z} over 4.
 * Deterministic (seeded); prints the figures.
 */
class PartitionHashBalanceTest {

    /** @return histogram: index d = number of ids whose 8 keys use d distinct partitions */
    private static int[] distinctPartitions(PartitionHash hash, String prefix) {
        Random rnd = new Random(20261202L);
        int[] hist = new int[9];
        for (int i = 0; i < 1000; i++) {
            String id = prefix + (rnd.nextInt(900_000) + 100_000);
            Set<Integer> used = new HashSet<>();
            for (int k = 0; k < 8; k++) {
                used.add(hash.partition(id + "-k" + k, 8));
            }
            hist[used.size()]++;
        }
        return hist;
    }

    private static double mean(int[] hist) {
        double sum = 0;
        for (int d = 0; d < hist.length; d++) {
            sum += d * hist[d];
        }
        return sum / 1000;
    }

    private static int[] letters(PartitionHash hash) {
        int[] counts = new int[4];
        for (char c = 'a'; c <= 'z'; c++) {
            counts[hash.partition(String.valueOf(c), 4)]++;
        }
        return counts;
    }

    @Test
    void newHashSpreadsShortSuffixes() {
        for (String prefix : new String[] {"", "w"}) {
            int[] v1 = distinctPartitions(PartitionHash.V1, prefix);
            int[] v2 = distinctPartitions(PartitionHash.V2, prefix);
            System.out.printf("ids '%s<6 digits>': 8 keys over 8 partitions, ids by distinct partitions used 1..8:"
                    + "%n  v1 %s mean %.2f%n  v2 %s mean %.2f (uniform random: mean 5.25)%n", prefix,
                    Arrays.toString(Arrays.copyOfRange(v1, 1, 9)), mean(v1),
                    Arrays.toString(Arrays.copyOfRange(v2, 1, 9)), mean(v2));
            assertThat(v2[1]).as("ids whose 8 keys all land on one partition (v2)").isZero();
            assertThat(v2[1] + v2[2]).as("ids whose 8 keys use at most 2 partitions (v2)").isLessThanOrEqualTo(2);
            assertThat(mean(v2)).as("mean distinct partitions (v2)").isBetween(5.0, 5.5);
        }
        int[] l1 = letters(PartitionHash.V1);
        int[] l2 = letters(PartitionHash.V2);
        System.out.printf("keys a..z over 4 partitions: v1 %s, v2 %s%n", Arrays.toString(l1), Arrays.toString(l2));
        assertThat(Arrays.stream(l2).max().getAsInt()).as("largest partition of a..z (v2)").isLessThanOrEqualTo(10);
        assertThat(Arrays.stream(l2).min().getAsInt()).as("smallest partition of a..z (v2)").isGreaterThanOrEqualTo(4);
    }

    @Test
    void hashesAreStableFormulas() {
        // pinned values: a change of either formula would re-route every stored key
        assertThat(PartitionHash.V1.partition("a", 4)).isEqualTo(PartitionHash.V1.partition("d", 4));
        int[] pinned = new int[4];
        for (int i = 0; i < 4; i++) {
            pinned[i] = PartitionHash.V2.partition("key-" + i, 1024);
        }
        assertThat(pinned).containsExactly(96, 640, 929, 306);
        assertThat(PartitionHash.V2.partition("a", 4)).isEqualTo(2);
        assertThat(PartitionHash.V2.partition("b", 4)).isEqualTo(1);
        assertThat(PartitionHash.V1.partition("a", 4)).as("the old hash: a..d on partition 3 of 4").isEqualTo(3);
        assertThat(PartitionHash.of(1)).isSameAs(PartitionHash.V1);
        assertThat(PartitionHash.of(2)).isSameAs(PartitionHash.LATEST);
        for (int n = 1; n <= 4096; n *= 3) {
            for (int i = 0; i < 100; i++) {
                assertThat(PartitionHash.V2.partition("k" + i, n)).isBetween(0, n - 1);
            }
        }
    }
}
