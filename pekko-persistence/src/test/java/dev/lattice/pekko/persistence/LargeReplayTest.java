package dev.lattice.pekko.persistence;

import dev.lattice.engine.Lattice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A persistence id of 1,000,000 events (about 100 MB of event bytes) written to Chronicle, then replayed by a freshly
 * opened Lattice in a JVM whose heap is smaller than the data. Opt-in (several minutes; needs a small heap):
 * {@code -Dlattice.pekko.replay1m=true -Dsurefire.extra.argLine=-Xmx128m}; reported as skipped otherwise.
 */
@EnabledIfSystemProperty(named = "lattice.pekko.replay1m", matches = "true")
class LargeReplayTest {

    private static final int EVENTS = 1_000_000;

    @Test
    void aMillionEventIdReplaysInOrderUnderASmallHeap() {
        assertThat(Runtime.getRuntime().maxMemory()).as("run with a heap smaller than the data, e.g. -Xmx128m")
                .isLessThan(160L << 20);
        String uri = TestProviders.fresh(TestProviders.Kind.CHRONICLE, "replay1m").uri();
        byte[] pad = new byte[80];
        long t0 = System.nanoTime();
        try (Lattice lattice = Lattice.open(uri)) {
            JournalStore store = new JournalStore(lattice.tree("pekko-journal", 1), 500, 1000, 256 * 1024);
            List<JournalStore.Batch> call = new ArrayList<>();
            for (int seq = 1; seq <= EVENTS; seq += 100) {
                long[] seqs = new long[100];
                List<byte[]> ev = new ArrayList<>(100);
                for (int i = 0; i < 100; i++) {
                    seqs[i] = seq + i;
                    byte[] e = pad.clone();
                    byte[] n = Integer.toString(seq + i).getBytes(StandardCharsets.US_ASCII);
                    System.arraycopy(n, 0, e, 0, n.length);
                    ev.add(e);
                }
                call.add(new JournalStore.Batch("big", seqs, ev));
                if (call.size() == 9) {
                    assertThat(store.write(call)).allMatch(Optional::isEmpty);
                    call.clear();
                }
            }
            assertThat(store.write(call)).allMatch(Optional::isEmpty);
        }
        long t1 = System.nanoTime();
        try (Lattice lattice = Lattice.open(uri)) {
            JournalStore store = new JournalStore(lattice.tree("pekko-journal", 1), 500, 1000, 256 * 1024);
            assertThat(store.highest("big")).isEqualTo(EVENTS);
            long[] next = {1};
            long n = store.replay("big", 1, Long.MAX_VALUE, Long.MAX_VALUE, (seq, bytes) -> {
                if (seq != next[0]) {
                    throw new AssertionError("expected " + next[0] + ", got " + seq);
                }
                next[0]++;
            });
            assertThat(n).isEqualTo(EVENTS);
        }
        long t2 = System.nanoTime();
        System.out.printf("1,000,000 events: write %d ms, open + replay %d ms, max heap %d MB%n",
                (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, Runtime.getRuntime().maxMemory() >> 20);
    }
}
