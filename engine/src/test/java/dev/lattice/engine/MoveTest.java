package dev.lattice.engine;

import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.FaultInjectingProvider.FaultRule;
import dev.lattice.testkit.SpiOperation;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Live moves of logs between provider keys (three Chronicle directories standing for three accounts). */
class MoveTest {

    @TempDir
    Path dir;

    private WalStorageProvider chronicle(String name) {
        return Providers.open("chronicle:" + dir.resolve(name));
    }

    private LatticeConfig.Builder config(WalStorageProvider def, WalStorageProvider b, WalStorageProvider c) {
        return LatticeConfig.builder().provider(def, true).partitions(4).checkpointEveryEntries(300)
                .namedProvider("b", b, true).namedProvider("c", c, true);
    }

    @Test
    void moveUnderLoadKeepsEveryAcknowledgedWriteAndOffsetsContinue() throws Exception {
        Map<String, String> acked = new ConcurrentHashMap<>();
        LogId moved = new LogId("mv", 1);
        long tailAtFlip;
        try (Lattice l = Lattice.open(config(chronicle("default"), chronicle("b"), chronicle("c")).build())) {
            Tree t = l.tree("mv");
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                int id = w;
                fs.add(pool.submit(() -> {
                    for (int i = 0; !stop.get() || i < 300; i++) {
                        String k = "w" + id + "-" + (i % 200);
                        String v = "v" + i;
                        t.put(k, b(v));
                        acked.put(k, v);
                    }
                    return null;
                }));
            }
            while (acked.size() < 200) {
                Thread.onSpinWait();
            }
            MovePlan plan = l.planMove("mv", Map.of(1, "b", 2, "c", 3, "default"));
            assertThat(plan.logs()).extracting(m -> m.log().partition()).containsExactly(1, 2);
            assertThat(plan.logs().get(0).from()).isEqualTo("default");
            Placement next = l.move("mv", Map.of(1, "b", 2, "c"), Duration.ofSeconds(30));
            tailAtFlip = l.provider("default").state(moved).committedTail();
            assertThat(next.version()).isEqualTo(2);
            assertThat(next.keys()).containsExactly("default", "b", "c", "default");
            stop.set(true);
            pool.shutdown();
            for (Future<?> f : fs) {
                f.get(2, TimeUnit.MINUTES);
            }
            // whatever the writers did after the flip, write some keys of the moved log now
            int extra = 0;
            for (int i = 0; extra < 20; i++) {
                String k = "after-move-" + i;
                if (TreeImpl.partitionOf(k, 4) == moved.partition()) {
                    t.put(k, b("x"));
                    acked.put(k, "x");
                    extra++;
                }
            }
            LogState target = l.provider("b").state(moved);
            assertThat(target.committedTail()).as("writes continued on the target after the move")
                    .isGreaterThan(tailAtFlip);
            assertThat(l.provider("default").state(moved).committedTail()).as("source copy frozen at the flip")
                    .isEqualTo(tailAtFlip);
            acked.forEach((k, v) -> assertThat(s(t.get(k).orElseThrow())).isEqualTo(v));

            assertThatThrownBy(() -> l.reclaim("mv", 1, "b")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("placed on 'b'");
            assertThat(l.reclaim("mv", 1, "default")).isPositive();
            assertThat(l.provider("default").state(moved).retainedEntries()).isZero();
            assertThat(l.provider("default").runs().list(moved)).as("source runs deleted").isEmpty();
        }
        try (Lattice l = Lattice.open(config(chronicle("default"), chronicle("b"), chronicle("c")).build())) {
            Tree t = l.tree("mv");
            assertThat(l.placements().get("mv").keys()).containsExactly("default", "b", "c", "default");
            assertThat(t.count()).isEqualTo(acked.size());
            acked.forEach((k, v) -> assertThat(s(t.get(k).orElseThrow())).as(k).isEqualTo(v));
        }
    }

    @Test
    void aFaultInAnyPhaseLeavesThePlacementUnflippedAndTheLogUsable() {
        List<FaultRule> faults = List.of(
                FaultRule.failBefore(SpiOperation.CLAIM),
                FaultRule.failBefore(SpiOperation.STAGE),
                FaultRule.failAfter(SpiOperation.COMMIT),
                FaultRule.failBefore(SpiOperation.TRIM),
                FaultRule.failBefore(SpiOperation.CHECKPOINT_PUBLISH));
        WalStorageProvider def = chronicle("default");
        FaultInjectingProvider defFaulty = new FaultInjectingProvider(def);
        FaultInjectingProvider b = new FaultInjectingProvider(chronicle("b"));
        FaultInjectingProvider c = new FaultInjectingProvider(chronicle("c"));
        int written = 0;
        LatticeConfig.Builder cfg = config(defFaulty, b, c).partitions(8).checkpointEveryEntries(100);
        try (Lattice l = Lattice.open(cfg.build())) {
            Tree t = l.tree("mf");
            for (; written < 2_000; written++) {
                t.put("k" + written, b("v" + written));
            }
            // every log flushed and trimmed (flushes run in the background), so each move copies runs, a manifest,
            // a trimmed source and a tail of entries: every phase below has work to do
            assertThat(((TreeImpl) t).flushNow(60_000)).isTrue();
            for (; written < 2_200; written++) { // and a log tail after the manifests (fewer than 100 per log)
                t.put("k" + written, b("v" + written));
            }
            for (int i = 0; i < faults.size(); i++) {
                FaultRule rule = faults.get(i);
                int partition = i + 1; // a fresh log per fault, so every phase of its move runs
                // batch move: partition 6 to b (fault-free) and this partition to c, where the fault strikes
                c.inject(rule.always());
                assertThatThrownBy(() -> l.move("mf", Map.of(6, "b", partition, "c"), Duration.ofSeconds(30)))
                        .as("move with %s on the target", rule).isInstanceOf(RuntimeException.class);
                c.clearFaults();
                assertThat(l.placements().get("mf").version()).as("unflipped after %s", rule).isEqualTo(1);
                t.put("after-" + rule.operation(), b("x"));
                assertThat(t.get("after-" + rule.operation())).isPresent();
            }
            assertThat(c.injectedFaultCount()).as("every fault struck").isGreaterThanOrEqualTo(faults.size());
            // the catalog's compare-and-set itself fails: still unflipped
            defFaulty.inject(FaultRule.failBefore(SpiOperation.COMMIT).onLog(Catalog.LOG).always());
            assertThatThrownBy(() -> l.move("mf", Map.of(6, "b"), Duration.ofSeconds(30)))
                    .isInstanceOf(RuntimeException.class);
            defFaulty.clearFaults();
            assertThat(l.placements().get("mf").version()).isEqualTo(1);
            // without faults the same moves complete, continuing the partial copies
            Placement p = l.move("mf", Map.of(1, "c", 2, "c", 6, "b"), Duration.ofSeconds(30));
            assertThat(p.keys()).containsExactly("default", "c", "c", "default", "default", "default", "b",
                    "default");
            t.put("final", b("y"));
        }
        try (Lattice l = Lattice.open(config(chronicle("default"), chronicle("b"), chronicle("c")).build())) {
            Tree t = l.tree("mf");
            for (int i = 0; i < written; i++) {
                assertThat(s(t.get("k" + i).orElseThrow())).isEqualTo("v" + i);
            }
            for (FaultRule rule : faults) {
                assertThat(t.get("after-" + rule.operation())).isPresent();
            }
            assertThat(t.get("final")).isPresent();
            assertThat(t.count()).isEqualTo(written + faults.size() + 1);
        }
    }
}
