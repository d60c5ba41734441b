package dev.lattice.engine;

import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;

/** The engine on the embedded default provider (Chronicle Queue in a temp directory), found by URI scheme. */
class ChronicleEngineTest {

    @TempDir
    Path dir;

    private Lattice open(LatticeConfig.Builder b) {
        return Lattice.open(b.uri("chronicle:" + dir.resolve("data")).build());
    }

    @Test
    void providerIsFoundByScheme() {
        try (Lattice l = open(LatticeConfig.builder())) {
            assertThat(l.providerDescriptor().name()).containsIgnoringCase("chronicle");
            assertThat(l.providerDescriptor().durability()).isIn(DurabilityLevel.PROCESS_CRASH, DurabilityLevel.OS_CRASH);
        }
    }

    @Test
    void randomWorkloadSurvivesReopensWithCheckpointsAndTrim() {
        Random random = new Random(11);
        Map<String, String> model = new HashMap<>();
        LatticeConfig.Builder cfg = LatticeConfig.builder().partitions(4).checkpointEveryEntries(400);
        for (int session = 0; session < 4; session++) {
            try (Lattice l = open(cfg)) {
                Tree t = l.tree("chron");
                model.forEach((k, v) -> assertThat(t.get(k).map(EngineBasicsTest::s)).as(k).contains(v));
                assertThat(t.count()).isEqualTo(model.size());
                for (int i = 0; i < 1_500; i++) {
                    String k = "k" + random.nextInt(500);
                    int op = random.nextInt(10);
                    if (op < 7) {
                        String v = "s" + session + "-" + i;
                        t.put(k, b(v));
                        model.put(k, v);
                    } else if (op < 9) {
                        assertThat(t.delete(k)).isEqualTo(model.remove(k) != null);
                    } else {
                        String v = "pia" + i;
                        assertThat(t.putIfAbsent(k, b(v))).isEqualTo(model.putIfAbsent(k, v) == null);
                    }
                }
                if (session > 0) {
                    LogId log = new LogId("chron", 0);
                    assertThat(l.provider().state(log).trimWatermark()).as("trimmed to the last checkpoint")
                            .isGreaterThanOrEqualTo(0);
                }
            }
        }
        try (Lattice l = open(cfg)) {
            Tree t = l.tree("chron");
            model.forEach((k, v) -> assertThat(s(t.get(k).orElseThrow())).isEqualTo(v));
            assertThat(t.count()).isEqualTo(model.size());
        }
    }

    @Test
    void concurrentWritersReadersAndScans() throws Exception {
        ConcurrencyTest.runConcurrentScenario(
                () -> open(LatticeConfig.builder().partitions(4).checkpointEveryEntries(2_000)));
    }

    /** Atomic writes on Chronicle: single-log, multi-log and cross-tree, through checkpoints, trims and reopens. */
    @Test
    void atomicWritesSurviveCheckpointsAndReopens() {
        LatticeConfig.Builder cfg = LatticeConfig.builder().partitions(4).checkpointEveryEntries(50);
        Map<String, String> model = new HashMap<>();
        for (int session = 0; session < 3; session++) {
            try (Lattice l = open(cfg)) {
                Tree a = l.tree("atom");
                Tree c = l.tree("atom2", 2);
                model.forEach((k, v) -> {
                    Tree t = k.startsWith("c:") ? c : a;
                    assertThat(t.get(k.substring(2)).map(EngineBasicsTest::s)).as(k).contains(v);
                });
                for (int i = 0; i < 120; i++) {
                    String v = session + "-" + i;
                    AtomicWrite w = l.atomic();
                    for (int k = 0; k < 8; k++) {
                        String key = "k" + ((i * 3 + k) % 40);
                        if (k == 7 && i % 4 == 0) {
                            w.delete(a, key);
                            model.remove("a:" + key);
                        } else {
                            w.put(a, key, b(v));
                            model.put("a:" + key, v);
                        }
                    }
                    if (i % 2 == 0) {
                        w.put(c, "x" + (i % 10), b(v));
                        model.put("c:x" + (i % 10), v);
                    }
                    AtomicResult r = w.commit();
                    if (i % 2 == 0) {
                        assertThat(r.logs()).as("cross-tree write").isGreaterThan(1);
                    }
                }
                assertThat(a.count()).isEqualTo(model.keySet().stream().filter(k -> k.startsWith("a:")).count());
            }
        }
    }
}
