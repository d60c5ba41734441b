package dev.lattice.pekko.persistence;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.spi.Providers;
import dev.lattice.testkit.CountingProvider;
import dev.lattice.testkit.SpiOperation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** The journal's storage logic on a real (memory) provider: bounded replay, deletes, highest, key layout. */
class JournalStoreTest {

    private static final int BATCH = 250;
    private Lattice lattice;
    private JournalStore store;

    @BeforeEach
    void open() {
        lattice = Lattice.open(TestProviders.fresh(TestProviders.Kind.MEMORY, "store").uri());
        store = new JournalStore(lattice.tree("j", 4), BATCH, 1000, 256 * 1024);
    }

    @AfterEach
    void close() {
        lattice.close();
    }

    private void writeEvents(String pid, int n) {
        int per = 100;
        for (int from = 1; from <= n; from += per * 5) {
            List<JournalStore.Batch> batches = new ArrayList<>();
            for (int b = 0; b < 5 && from + b * per <= n; b++) {
                int lo = from + b * per;
                int hi = Math.min(n, lo + per - 1);
                long[] seqs = new long[hi - lo + 1];
                List<byte[]> ev = new ArrayList<>();
                for (int s = lo; s <= hi; s++) {
                    seqs[s - lo] = s;
                    ev.add(("e" + s).getBytes(StandardCharsets.UTF_8));
                }
                batches.add(new JournalStore.Batch(pid, seqs, ev));
            }
            assertThat(store.write(batches)).allMatch(Optional::isEmpty);
        }
    }

    @Test
    void replayReadsInBoundedBatchesAndDeliversInOrder() {
        writeEvents("big", 20_000);
        long before = store.scannedEntries();
        long[] expected = {1};
        long[] scannedAtFirst = {-1};
        long n = store.replay("big", 1, Long.MAX_VALUE, Long.MAX_VALUE, (seq, bytes) -> {
            if (scannedAtFirst[0] < 0) {
                scannedAtFirst[0] = store.scannedEntries() - before;
            }
            assertThat(seq).isEqualTo(expected[0]++);
            assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo("e" + seq);
        });
        assertThat(n).isEqualTo(20_000);
        // the first event is delivered after reading one batch, not the whole id
        assertThat(scannedAtFirst[0]).isEqualTo(BATCH);
        assertThat(store.replay("big", 100, 10_000, 7, (s, b) -> { })).isEqualTo(7);
        assertThat(store.replay("big", 19_990, 30_000, Long.MAX_VALUE, (s, b) -> { })).isEqualTo(11);
    }

    @Test
    void idsThatArePrefixesOfEachOtherDoNotMix() {
        writeEvents("a", 3);
        writeEvents("a:0000000000000000001", 2);
        writeEvents("a:", 2);
        List<Long> seen = new ArrayList<>();
        store.replay("a", 1, Long.MAX_VALUE, Long.MAX_VALUE, (s, b) -> seen.add(s));
        assertThat(seen).containsExactly(1L, 2L, 3L);
    }

    @Test
    void deletingKeepsTheHighestAndRemovesTheKeysInBatches() {
        writeEvents("d", 1_234);
        store.deleteTo("d", 1_000);
        assertThat(store.highest("d")).isEqualTo(1_234);
        assertThat(store.deletedTo("d")).isEqualTo(1_000);
        List<Long> seen = new ArrayList<>();
        store.replay("d", 1, Long.MAX_VALUE, Long.MAX_VALUE, (s, b) -> seen.add(s));
        assertThat(seen).hasSize(234).first().isEqualTo(1_001L);
        store.deleteTo("d", Long.MAX_VALUE);
        assertThat(store.highest("d")).isEqualTo(1_234);
        assertThat(store.replay("d", 1, Long.MAX_VALUE, Long.MAX_VALUE, (s, b) -> { })).isZero();
        // 1,234 events + highest + marker written; only the two counters remain
        assertThat(store.tree().count()).isEqualTo(2);
        // a lower delete never lowers the marker
        store.deleteTo("d", 10);
        assertThat(store.deletedTo("d")).isEqualTo(1_234);
    }

    @Test
    void aWriteBelowTheHighestIsRejectedAndItsNeighboursAreWritten() {
        writeEvents("r", 5);
        List<Optional<Exception>> out = store.write(List.of(
                new JournalStore.Batch("r", new long[]{6}, List.of(new byte[1])),
                new JournalStore.Batch("r", new long[]{3}, List.of(new byte[1])),
                new JournalStore.Batch("r", new long[]{7, 8}, List.of(new byte[1], new byte[1]))));
        assertThat(out.get(0)).isEmpty();
        assertThat(out.get(1)).get().isInstanceOf(IllegalStateException.class);
        assertThat(out.get(2)).isEmpty();
        assertThat(store.highest("r")).isEqualTo(8);
    }

    @Test
    void combinedWritesFillTheKeyLimitWithOneHighestKeyPerPersistenceId() {
        CountingProvider counting = new CountingProvider(
                Providers.open(TestProviders.fresh(TestProviders.Kind.MEMORY, "keys").uri()));
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(counting, true).partitions(1).build())) {
            JournalStore s = new JournalStore(l.tree("j", 1), BATCH, 1000, 256 * 1024);
            // 999 one-event writes of one id + its highest key = 1,000 keys: one Lattice atomic write (one stage)
            long before = counting.snapshot().calls(SpiOperation.STAGE);
            assertThat(s.write(singleEventWrites(List.of("a"), 1, 999))).hasSize(999).allMatch(Optional::isEmpty);
            assertThat(counting.snapshot().calls(SpiOperation.STAGE) - before).isEqualTo(1);
            // 1,000 of them: 1,001 keys, so two writes
            before = counting.snapshot().calls(SpiOperation.STAGE);
            assertThat(s.write(singleEventWrites(List.of("a"), 1000, 1000))).allMatch(Optional::isEmpty);
            assertThat(counting.snapshot().calls(SpiOperation.STAGE) - before).isEqualTo(2);
            // two ids alternating: 998 events + 2 highest keys = 1,000 keys, one write
            before = counting.snapshot().calls(SpiOperation.STAGE);
            assertThat(s.write(singleEventWrites(List.of("b", "c"), 1, 998))).allMatch(Optional::isEmpty);
            assertThat(counting.snapshot().calls(SpiOperation.STAGE) - before).isEqualTo(1);
            assertThat(s.highest("a")).isEqualTo(1999);
            assertThat(s.highest("b")).isEqualTo(499);
            assertThat(s.highest("c")).isEqualTo(499);
            assertThat(s.replay("a", 1, Long.MAX_VALUE, Long.MAX_VALUE, (q, b) -> { })).isEqualTo(1999);
        }
    }

    /** {@code n} one-event writes, round robin over {@code ids}, each id counting up from {@code first}. */
    private static List<JournalStore.Batch> singleEventWrites(List<String> ids, long first, int n) {
        List<JournalStore.Batch> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long seq = first + i / ids.size();
            out.add(new JournalStore.Batch(ids.get(i % ids.size()), new long[]{seq},
                    List.of(("e" + seq).getBytes(StandardCharsets.UTF_8))));
        }
        return out;
    }
}
