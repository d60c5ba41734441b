package dev.lattice.engine;

import dev.lattice.engine.feed.Change;
import dev.lattice.engine.feed.ChangeCursor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** Helpers of the change-feed tests: draining cursors, applying changes to a model, the order checks. */
final class FeedChecks {

    private FeedChecks() {
    }

    /** Polls until a poll of {@code quietMillis} returns nothing; returns every batch. */
    static List<List<Change>> drain(ChangeCursor c, long quietMillis) {
        List<List<Change>> out = new ArrayList<>();
        while (true) {
            List<Change> b = c.poll(Duration.ofMillis(quietMillis));
            if (b.isEmpty()) {
                return out;
            }
            out.add(b);
        }
    }

    static List<Change> flat(List<List<Change>> batches) {
        List<Change> out = new ArrayList<>();
        batches.forEach(out::addAll);
        return out;
    }

    /** Offsets rise per partition: within a batch an entry's changes share an offset, batches never go back. */
    static void assertLogOrder(List<List<Change>> batches) {
        Map<Integer, Long> last = new HashMap<>();
        for (List<Change> b : batches) {
            Map<Integer, Long> firstInBatch = new HashMap<>();
            for (Change c : b) {
                Long prev = last.get(c.partition());
                Long first = firstInBatch.putIfAbsent(c.partition(), c.offset());
                if (first == null && prev != null) {
                    assertThat(c.offset()).as("partition %d: an entry after offset %d", c.partition(), prev)
                            .isGreaterThan(prev);
                } else if (prev != null) {
                    assertThat(c.offset()).as("partition %d inside a batch", c.partition()).isGreaterThanOrEqualTo(prev);
                }
                last.put(c.partition(), c.offset());
            }
        }
    }

    /** A key's value and version in a model built from changes. */
    record Val(byte[] value, long version) {
    }

    /**
     * Applies changes to a model with the version rule of {@link dev.lattice.engine.feed.ChangeSnapshot}: a put or
     * delete wins only over an older version; a range delete removes older keys in its range.
     */
    static void apply(Map<String, Val> model, Map<String, Long> deletedAt, List<Change> changes) {
        for (Change c : changes) {
            switch (c.kind()) {
                case PUT -> {
                    Val cur = model.get(c.key());
                    long del = deletedAt.getOrDefault(c.key(), 0L);
                    if ((cur == null || cur.version() < c.version()) && del < c.version()) {
                        model.put(c.key(), new Val(c.value(), c.version()));
                    }
                }
                case DELETE -> {
                    Val cur = model.get(c.key());
                    if (cur == null || cur.version() < c.version()) {
                        model.remove(c.key());
                        deletedAt.merge(c.key(), c.version(), Math::max);
                    }
                }
                case DELETE_RANGE -> {
                    List<String> gone = new ArrayList<>();
                    for (Map.Entry<String, Val> e : model.entrySet()) {
                        if (e.getKey().compareTo(c.key()) >= 0 && e.getKey().compareTo(c.toKeyExclusive()) < 0
                                && e.getValue().version() < c.version()) {
                            gone.add(e.getKey());
                        }
                    }
                    gone.forEach(model::remove);
                }
                default -> throw new AssertionError(c);
            }
        }
    }

    /** The tree's state by scan, as key to (value, version). */
    static Map<String, Val> scan(Tree t) {
        Map<String, Val> out = new TreeMap<>();
        try (ScanCursor c = t.scan(null, null, false)) {
            c.forEachRemaining(e -> out.put(e.key(), new Val(e.value(), e.version())));
        }
        return out;
    }

    static void assertSameState(Map<String, Val> model, Map<String, Val> expected) {
        assertThat(model.keySet()).isEqualTo(expected.keySet());
        expected.forEach((k, v) -> {
            assertThat(model.get(k).version()).as("version of %s", k).isEqualTo(v.version());
            assertThat(model.get(k).value()).as("value of %s", k).isEqualTo(v.value());
        });
    }
}
