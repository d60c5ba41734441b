package dev.lattice.engine.lsm;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CompactionRulesTest {

    /** What a reader at {@code point} sees for {@code key} in entries (run order): the newest version <= point. */
    private static String visible(List<RunEntry> entries, String key, long point) {
        for (RunEntry e : entries) {
            if (e.key().equals(key) && e.version() <= point) {
                return e.tombstone() ? null : new String(e.value());
            }
        }
        return null;
    }

    private static List<RunEntry> drain(Iterator<RunEntry> it) {
        List<RunEntry> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    @Test
    void aDeletedValueNeverReappearsAndEverySnapshotSeesWhatItSawBefore() {
        Random rnd = new Random(42);
        for (int round = 0; round < 400; round++) {
            int runs = 1 + rnd.nextInt(4);
            List<List<RunEntry>> inputs = new ArrayList<>();
            for (int r = 0; r < runs; r++) {
                inputs.add(new ArrayList<>());
            }
            TreeMap<String, List<RunEntry>> byKey = new TreeMap<>();
            long version = 0;
            for (int i = 0; i < 60; i++) {
                String key = "k" + rnd.nextInt(8);
                version += 1 + rnd.nextInt(2);
                RunEntry e = rnd.nextInt(3) == 0 ? RunEntry.delete(key, version)
                        : RunEntry.put(key, version, ("v" + version).getBytes());
                inputs.get(rnd.nextInt(runs)).add(e);
                byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(e);
            }
            List<Iterator<RunEntry>> sources = new ArrayList<>();
            for (List<RunEntry> in : inputs) {
                in.sort((a, b) -> a.key().equals(b.key()) ? Long.compare(b.version(), a.version())
                        : a.key().compareTo(b.key()));
                sources.add(in.iterator());
            }
            List<RunEntry> merged = drain(new EntryMerger(sources));
            long[] snaps = rnd.longs(rnd.nextInt(4), 0, version + 1).sorted().distinct().toArray();
            boolean bottom = rnd.nextBoolean();
            List<RunEntry> out = drain(EntryMerger.collect(merged.iterator(), snaps, bottom));
            long[] points = Arrays.copyOf(snaps, snaps.length + 1);
            points[snaps.length] = Long.MAX_VALUE;
            for (String key : byKey.keySet()) {
                for (long p : points) {
                    assertThat(visible(out, key, p)).as("round %d key %s at read point %d (snapshots %s, bottommost %s)",
                            round, key, p, Arrays.toString(snaps), bottom).isEqualTo(visible(merged, key, p));
                }
            }
            if (snaps.length == 0) {
                assertThat(out.stream().map(RunEntry::key).distinct().count()).as("one version per key without snapshots")
                        .isEqualTo(out.size());
            }
            if (bottom) {
                for (RunEntry e : out) {
                    if (e.tombstone()) {
                        boolean hidesSomething = out.stream().anyMatch(o -> o.key().equals(e.key())
                                && o.version() < e.version());
                        assertThat(hidesSomething).as("a bottommost tombstone %s is kept only above a version it hides", e)
                                .isTrue();
                    }
                }
            }
        }
    }

    @Test
    void theResurrectionCase() {
        // put, flush (run 1); delete, flush (run 2); a compaction of run 2 alone into a level that is not bottommost
        List<RunEntry> run2 = List.of(RunEntry.delete("a", 2));
        List<RunEntry> partial = drain(EntryMerger.collect(run2.iterator(), new long[0], false));
        assertThat(partial).as("the tombstone survives a compaction that is not bottommost").containsExactly(run2.get(0));
        List<RunEntry> run1 = List.of(RunEntry.put("a", 1, "old".getBytes()));
        List<RunEntry> full = drain(EntryMerger.collect(new EntryMerger(List.of(partial.iterator(), run1.iterator())),
                new long[0], true));
        assertThat(full).as("the bottommost compaction drops both the tombstone and the value it hides").isEmpty();
    }

    @Test
    void manifestsRoundTripAndDamageIsCorruption() {
        LogId log = new LogId("m", 1);
        RunMeta meta = new RunMeta(10, 2, 5, 90, "a", "z\u00e9", 1234, 3);
        Manifest m = new Manifest(77, 91, List.of(new Manifest.RunRef(new RunId("L0-1"), 0, 5000, meta),
                new Manifest.RunRef(new RunId("L1-7"), 1, 9000, new RunMeta(0, 0, -1, -1, null, null, 0, 0))),
                new byte[] {1, 2, 3});
        byte[] bytes = ManifestCodec.encode(m);
        Manifest back = ManifestCodec.decode(log, 77, bytes);
        assertThat(back.throughOffset()).isEqualTo(77);
        assertThat(back.lastVersion()).isEqualTo(91);
        assertThat(back.runs()).isEqualTo(m.runs());
        assertThat(back.engineState()).containsExactly(1, 2, 3);
        assertThat(back.runBytes()).isEqualTo(14_000);
        for (int i = 0; i < bytes.length; i++) {
            byte[] bad = bytes.clone();
            bad[i] ^= 0x10;
            int at = i;
            assertThatThrownBy(() -> ManifestCodec.decode(log, 77, bad)).as("damage at byte %d", at)
                    .isInstanceOf(CorruptLogException.class).hasMessageContaining("manifest");
        }
    }
}
