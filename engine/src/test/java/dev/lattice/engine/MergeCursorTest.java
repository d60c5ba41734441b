package dev.lattice.engine;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The loser-tree merge of partition scans: every partition count (one, odd, powers of two), both directions. */
class MergeCursorTest {

    @Test
    void mergesDisjointPartitionsInOrderForEveryPartitionCount() {
        Random rnd = new Random(16);
        for (int k = 1; k <= 9; k++) {
            for (boolean reverse : new boolean[] {false, true}) {
                List<TreeMap<String, Object>> parts = new ArrayList<>();
                for (int p = 0; p < k; p++) {
                    parts.add(new TreeMap<>());
                }
                TreeMap<String, Long> model = new TreeMap<>();
                int n = rnd.nextInt(200);
                for (int i = 0; i < n; i++) {
                    String key = "k" + rnd.nextInt(1000);
                    if (model.containsKey(key)) {
                        continue;
                    }
                    long version = i + 1;
                    model.put(key, version);
                    // some partitions stay empty; a key lives in one partition only
                    parts.get(Math.floorMod(key.hashCode(), Math.max(1, k - 1))).put(key,
                            new Versioned(new byte[] {(byte) i}, version));
                }
                Visibility vis = new Visibility();
                long snapshot = vis.openSnapshot();
                MergeCursor c = new MergeCursor(iterators(parts, reverse), reverse, vis, snapshot);
                List<String> keys = new ArrayList<>();
                while (c.hasNext()) {
                    TreeEntry e = c.next();
                    assertThat(e.version()).isEqualTo(model.get(e.key()));
                    keys.add(e.key());
                }
                List<String> expected = new ArrayList<>(reverse ? model.descendingKeySet() : model.keySet());
                assertThat(keys).as("k=%d reverse=%s", k, reverse).isEqualTo(expected);
                assertThat(vis.horizon()).as("an exhausted scan releases its snapshot").isEqualTo(Long.MAX_VALUE);
                assertThatThrownBy(c::next).isInstanceOf(NoSuchElementException.class);
            }
        }
    }

    @Test
    void skipsKeysInvisibleInTheSnapshotAndReleasesOnClose() {
        TreeMap<String, Object> a = new TreeMap<>();
        TreeMap<String, Object> b = new TreeMap<>();
        a.put("a", new Versioned(new byte[] {1}, 1));
        a.put("c", Tombstone.ABSENT);
        b.put("b", new Versioned(new byte[] {2}, 2));
        b.put("d", new Versioned(new byte[] {3}, 3));
        Visibility vis = new Visibility();
        long snapshot = vis.openSnapshot();
        MergeCursor c = new MergeCursor(iterators(List.of(a, b), false), false, vis, snapshot);
        assertThat(c.next().key()).isEqualTo("a");
        assertThat(c.next().key()).isEqualTo("b");
        assertThat(c.next().key()).isEqualTo("d");
        assertThat(c.hasNext()).isFalse();

        long s2 = vis.openSnapshot();
        MergeCursor open = new MergeCursor(iterators(List.of(a, b), true), true, vis, s2);
        assertThat(open.next().key()).isEqualTo("d");
        assertThat(vis.horizon()).isEqualTo(s2);
        open.close();
        assertThat(open.hasNext()).isFalse();
        assertThat(vis.horizon()).isEqualTo(Long.MAX_VALUE);

        MergeCursor none = new MergeCursor(List.of(), false, vis, vis.openSnapshot());
        assertThat(none.hasNext()).isFalse();
        assertThat(vis.horizon()).isEqualTo(Long.MAX_VALUE);
    }

    private static List<Iterator<Map.Entry<String, Object>>> iterators(List<TreeMap<String, Object>> parts,
                                                                       boolean reverse) {
        List<Iterator<Map.Entry<String, Object>>> its = new ArrayList<>();
        for (TreeMap<String, Object> p : parts) {
            NavigableMap<String, Object> m = reverse ? p.descendingMap() : p;
            its.add(m.entrySet().iterator());
        }
        return its;
    }
}
