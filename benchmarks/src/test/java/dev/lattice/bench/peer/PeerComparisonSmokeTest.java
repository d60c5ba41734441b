package dev.lattice.bench.peer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Smoke test: every part of the peer comparison runs a tiny workload on both stores and renders its tables. */
class PeerComparisonSmokeTest {

    @Test
    void tinyPeerRunProducesTablesAndCharts(@TempDir Path tmp) {
        PeerComparison.Settings s = new PeerComparison.Settings(tmp.resolve("work"), tmp.resolve("img"),
                List.of("a", "e"), List.of(1, 2), 200, 200, Durability.PAGE_CACHE,
                List.of(Durability.PAGE_CACHE, Durability.FSYNC), 200, 20, 200, 100, 500, 2, 1);
        PeerComparison.Report r = PeerComparison.run(s, m -> { });
        assertThat(r.ycsb()).hasSize(8);
        assertThat(r.direct()).hasSize(16);
        assertThat(r.recovery()).hasSize(4).allSatisfy(x -> assertThat(x.verified()).isTrue());
        assertThat(r.markdown()).contains("**YCSB run phase**", "**Direct put/get**", "**Open/recovery**", "| A |",
                "after SIGKILL", "SCAN");
        assertThat(tmp.resolve("img/peer-ycsb-throughput.png")).isNotEmptyFile();
        assertThat(tmp.resolve("img/peer-direct-throughput.png")).isNotEmptyFile();
        assertThat(tmp.resolve("img/peer-recovery.png")).isNotEmptyFile();
        assertThat(tmp.resolve("work")).satisfies(w -> assertThat(Files.exists(w) ? w.toFile().list() : new String[0])
                .isEmpty());
    }

    @Test
    void directHarnessOnMemoryProvider() {
        try (KvStore store = KvStore.openLattice("memory:direct-smoke", 2)) {
            List<DirectHarness.PhaseResult> r = DirectHarness.run(store, 2, 100, 100, 50);
            assertThat(r).extracting(DirectHarness.PhaseResult::operation).containsExactly("put", "get");
            assertThat(r).allSatisfy(p -> assertThat(p.operations()).isEqualTo(100));
            assertThat(store.count()).isEqualTo(100);
        } finally {
            dev.lattice.spi.memory.InMemoryStorage.dropNamed("direct-smoke");
        }
    }
}
