package dev.lattice.spi.support;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.LogId;
import dev.lattice.spi.StagedBatch;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link StagedBatchTable}'s offset index (a sorted list since session 25) against a {@link TreeMap} model: random
 * restores (in and out of order, replacing a batch at the same first offset), removes (by identity, of batches
 * present and gone), aborts, drops by epoch and by offset, with {@code at}, {@code overlapping}, {@code all} and
 * {@code size} compared after every step.
 */
class StagedBatchTableTest {

    private static final LogId LOG = new LogId("t", 0);

    @Test
    void theIndexAnswersAsASortedMapWould() {
        SplittableRandom r = new SplittableRandom(11);
        for (int round = 0; round < 200; round++) {
            StagedBatchTable<String> table = new StagedBatchTable<>();
            TreeMap<Long, StagedBatchTable.Staged<String>> model = new TreeMap<>();
            for (int step = 0; step < 60; step++) {
                int op = r.nextInt(10);
                if (op < 4) {
                    long first = r.nextInt(40) * 4L; // disjoint ranges of up to 4 offsets
                    StagedBatchTable.Staged<String> s = new StagedBatchTable.Staged<>(first, first + r.nextInt(4),
                            1 + r.nextInt(3), new BatchId(round, step), "p" + step);
                    table.restore(s);
                    model.put(first, s);
                } else if (op < 6 && !model.isEmpty()) {
                    List<StagedBatchTable.Staged<String>> some = new ArrayList<>();
                    for (StagedBatchTable.Staged<String> s : model.values()) {
                        if (r.nextBoolean()) {
                            some.add(s);
                        }
                    }
                    some.add(new StagedBatchTable.Staged<>(1_000, 1_000, 1, new BatchId(-1, -1), "gone"));
                    table.remove(some);
                    for (StagedBatchTable.Staged<String> s : some) {
                        model.remove(s.firstOffset(), s);
                    }
                } else if (op == 6 && !model.isEmpty()) {
                    List<StagedBatchTable.Staged<String>> all = new ArrayList<>(model.values());
                    StagedBatchTable.Staged<String> s = all.get(r.nextInt(all.size()));
                    StagedBatch wrongEpoch = new StagedBatch(LOG, s.epoch() + 1, s.firstOffset(), s.lastOffset(),
                            s.batchId());
                    assertThat(table.abort(wrongEpoch)).as("abort with another epoch").isNull();
                    StagedBatch receipt = new StagedBatch(LOG, s.epoch(), s.firstOffset(), s.lastOffset(), s.batchId());
                    assertThat(table.abort(receipt)).isSameAs(s);
                    model.remove(s.firstOffset());
                } else if (op == 7) {
                    long epoch = 1 + r.nextInt(3);
                    List<StagedBatchTable.Staged<String>> dropped = table.dropOlderThan(epoch);
                    List<StagedBatchTable.Staged<String>> expected = new ArrayList<>();
                    model.values().removeIf(s -> s.epoch() < epoch && expected.add(s));
                    assertThat(dropped).containsExactlyElementsOf(expected);
                } else if (op == 8) {
                    long through = r.nextInt(170) - 5;
                    table.dropStartingThrough(through);
                    model.headMap(through, true).clear();
                } else {
                    table.remove(List.of(new StagedBatchTable.Staged<>(0, 0, 9, new BatchId(-2, -2), "other")));
                }
                check(table, model, r);
            }
        }
    }

    private static void check(StagedBatchTable<String> table, TreeMap<Long, StagedBatchTable.Staged<String>> model,
                              SplittableRandom r) {
        assertThat(table.size()).isEqualTo(model.size());
        assertThat(table.isEmpty()).isEqualTo(model.isEmpty());
        assertThat(table.all()).containsExactlyElementsOf(model.values());
        for (int i = 0; i < 5; i++) {
            long at = r.nextInt(170) - 5;
            assertThat(table.at(at)).as("at(%d)", at).isSameAs(model.get(at));
            long last = at + r.nextInt(12);
            List<StagedBatchTable.Staged<String>> expected = new ArrayList<>();
            Map.Entry<Long, StagedBatchTable.Staged<String>> below = model.floorEntry(at);
            if (below != null && below.getValue().lastOffset() >= at) {
                expected.add(below.getValue());
            }
            expected.addAll(model.subMap(at, false, last, true).values());
            assertThat(table.overlapping(at, last)).as("overlapping(%d, %d)", at, last)
                    .containsExactlyElementsOf(expected);
        }
    }
}
