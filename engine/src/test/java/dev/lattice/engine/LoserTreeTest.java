package dev.lattice.engine;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LoserTree} against a sort: for 1 to 17 sources (powers of two and not), sorted sources with keys repeated
 * within and across sources and empty sources, the merge hands out every (key, source) pair in key order with ties
 * in source order (the newest layer first), ascending and descending.
 */
class LoserTreeTest {

    @Test
    void mergesInKeyThenSourceOrderForEveryWidth() {
        SplittableRandom r = new SplittableRandom(7);
        for (int k = 1; k <= 17; k++) {
            for (int round = 0; round < 40; round++) {
                for (boolean reverse : new boolean[] {false, true}) {
                    check(k, reverse, r);
                }
            }
        }
    }

    @Test
    void refusesAMergeOfNothing() {
        assertThatThrownBy(() -> new LoserTree(0, false)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one source");
    }

    private static void check(int k, boolean reverse, SplittableRandom r) {
        Comparator<String> order = reverse ? Comparator.reverseOrder() : Comparator.naturalOrder();
        List<List<String>> sources = new ArrayList<>();
        List<List<String>> expected = new ArrayList<>();
        for (int s = 0; s < k; s++) {
            List<String> keys = new ArrayList<>();
            int n = r.nextInt(4) == 0 ? 0 : r.nextInt(30);
            for (int i = 0; i < n; i++) {
                keys.add("k" + r.nextInt(25)); // few distinct keys: many ties, within and across sources
            }
            keys.sort(order);
            sources.add(keys);
            for (String key : keys) {
                expected.add(List.of(key, Integer.toString(s)));
            }
        }
        expected.sort(Comparator.<List<String>, String>comparing(e -> e.get(0), order)
                .thenComparingInt(e -> Integer.parseInt(e.get(1))));

        LoserTree t = new LoserTree(k, reverse);
        int[] pos = new int[k];
        for (int s = 0; s < k; s++) {
            t.init(s, sources.get(s).isEmpty() ? null : sources.get(s).get(0));
        }
        t.start();
        List<List<String>> got = new ArrayList<>();
        while (t.winnerKey() != null) {
            int w = t.winner();
            got.add(List.of(t.winnerKey(), Integer.toString(w)));
            List<String> src = sources.get(w);
            pos[w]++;
            t.advanceWinner(pos[w] < src.size() ? src.get(pos[w]) : null);
        }
        assertThat(got).as("k=%d reverse=%s", k, reverse).containsExactlyElementsOf(expected);
    }
}
