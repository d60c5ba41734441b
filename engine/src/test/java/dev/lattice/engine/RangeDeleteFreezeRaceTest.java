package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.lattice.engine.EngineBasicsTest.b;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Readers racing a freeze: a key a range delete covers in the memtable must stay hidden while the freeze moves the
 * range delete down into the frozen memtable (readers take the memtable's range deletes, then the memtable, then the
 * layers; a freeze publishes the layers first). Before the fix a get or count in that window saw the covered key.
 */
class RangeDeleteFreezeRaceTest {

    @Test
    void aRangeDeletedKeyStaysHiddenWhileItsMemtableFreezes() throws Exception {
        LatticeConfig.Builder cfg = LatticeConfig.builder().partitions(1).blockCacheBytes(0);
        try (Lattice l = EngineBasicsTest.open(new InMemoryStorage(), cfg)) {
            TreeImpl t = (TreeImpl) l.tree("race");
            AtomicInteger done = new AtomicInteger(-1); // keys 0..done are written and range-deleted
            AtomicInteger epoch = new AtomicInteger(); // odd while a flush runs and no write does
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Thread th = new Thread(() -> {
                    while (!stop.get()) {
                        int d = done.get();
                        for (int j = Math.max(0, d - 4); j <= d; j++) {
                            if (t.get(key(j)).isPresent()) {
                                seen.add("get " + key(j) + " after its range delete (done " + d + ")");
                            }
                        }
                        int e = epoch.get();
                        if (e % 2 == 1) { // no write runs: every key is range-deleted (count is not a snapshot)
                            long n = t.count();
                            if (n != 0 && epoch.get() == e) {
                                seen.add("count " + n + " during a flush (done " + d + ")");
                            }
                        }
                    }
                }, "reader-" + r);
                th.setDaemon(true);
                th.start();
                readers.add(th);
            }
            try {
                for (int i = 0; i < 3_000 && seen.isEmpty(); i++) {
                    t.put(key(i), b("v" + i));
                    t.deleteRange(key(i), key(i) + "~");
                    done.set(i);
                    if (i % 3 == 2) {
                        epoch.incrementAndGet();
                        assertThat(t.flushNow(10_000)).as("flush").isTrue();
                        epoch.incrementAndGet();
                    }
                }
            } finally {
                stop.set(true);
                for (Thread th : readers) {
                    th.join(10_000);
                }
            }
            assertThat(seen).as("reads that saw a range-deleted key").isEmpty();
            assertThat(t.count()).isZero();
        }
    }

    private static String key(int i) {
        return String.format("k%05d", i);
    }
}
