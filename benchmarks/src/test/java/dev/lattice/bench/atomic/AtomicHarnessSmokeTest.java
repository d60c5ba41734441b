package dev.lattice.bench.atomic;

import dev.lattice.bench.peer.Durability;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Smoke test: the atomic-write harness runs a tiny workload on both providers and renders its table and chart. */
class AtomicHarnessSmokeTest {

    private static final List<AtomicHarness.Shape> ALL = List.of(AtomicHarness.Shape.values());

    @Test
    void tinyMemoryRunProducesTableAndChart(@TempDir Path tmp) {
        AtomicHarness.Settings s = new AtomicHarness.Settings(tmp.resolve("work"), tmp.resolve("img"), "memory",
                Durability.PAGE_CACHE, ALL, List.of(2), List.of(1, 2), 100, 500, 1000, 50);
        AtomicHarness.Report r = AtomicHarness.run(s, m -> { });
        // put, putAll(2), atomic 1 tree, atomic 2 trees; for 1 and 2 threads
        assertThat(r.cases()).hasSize(8).allSatisfy(c -> {
            assertThat(c.writes()).isPositive();
            assertThat(c.keysPerSecond()).isCloseTo(c.writesPerSecond() * c.keysPerWrite(),
                    org.assertj.core.data.Percentage.withPercentage(1e-6));
            assertThat(c.providerCallsPerWrite()).isPositive();
        });
        // two keys in two trees always touch two logs; two keys of one 8-partition tree one or two (the meter's count
        // and total are read at the window's edges while writes record, so a mean may be off by one write's share)
        assertThat(r.cases()).filteredOn(c -> c.shape() == AtomicHarness.Shape.TWO_TREES)
                .allSatisfy(c -> assertThat(c.logsPerWrite()).isCloseTo(2.0, org.assertj.core.data.Offset.offset(0.01)));
        assertThat(r.cases()).filteredOn(c -> c.shape() == AtomicHarness.Shape.ONE_TREE)
                .allSatisfy(c -> assertThat(c.logsPerWrite()).isBetween(0.99, 2.01));
        assertThat(r.cases()).filteredOn(c -> c.shape() == AtomicHarness.Shape.PUT)
                .allSatisfy(c -> assertThat(c.logsPerWrite()).isNaN());
        assertThat(r.markdown()).contains("| put | 1 | 1 |", "| putAll | 2 | 2 |", "| atomic, 1 tree | 2 | 1 |",
                "| atomic, 2 trees | 2 | 2 |", "Provider `memory`");
        assertThat(tmp.resolve("img/atomic-memory-keys.png")).isNotEmptyFile();
    }

    @Test
    void tinyChronicleRunCleansUp(@TempDir Path tmp) throws Exception {
        AtomicHarness.Settings s = new AtomicHarness.Settings(tmp.resolve("work"), null, "chronicle",
                Durability.PAGE_CACHE, ALL, List.of(2), List.of(1), 100, 500, 1000, 50);
        AtomicHarness.Report r = AtomicHarness.run(s, m -> { });
        assertThat(r.cases()).hasSize(4).allSatisfy(c -> assertThat(c.writes()).isPositive());
        assertThat(r.markdown()).contains("Provider `chronicle` (durability process: page cache)",
                "| atomic, 2 trees | 2 | 1 |");
        try (var left = Files.list(tmp.resolve("work"))) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void badSettingsAreRejectedWithTheirLimit(@TempDir Path tmp) {
        assertThatThrownBy(() -> new AtomicHarness.Settings(tmp, null, "postgres", Durability.PAGE_CACHE,
                ALL, List.of(2), List.of(1), 0, 100, 1000, 50)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("chronicle or memory");
        assertThatThrownBy(() -> new AtomicHarness.Settings(tmp, null, "memory", Durability.PAGE_CACHE,
                ALL, List.of(1), List.of(1), 0, 100, 1000, 50)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2..1000");
        assertThatThrownBy(() -> new AtomicHarness.Settings(tmp, null, "memory", Durability.PAGE_CACHE,
                ALL, List.of(2), List.of(0), 0, 100, 1000, 50)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(">= 1");
        assertThatThrownBy(() -> new AtomicHarness.Settings(tmp, null, "memory", Durability.PAGE_CACHE, List.of(),
                List.of(2), List.of(1), 0, 100, 1000, 50)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("one shape");
    }

    @Test
    void onlyTheChosenShapesRun(@TempDir Path tmp) {
        AtomicHarness.Settings s = new AtomicHarness.Settings(tmp, null, "memory", Durability.PAGE_CACHE,
                List.of(AtomicHarness.Shape.ONE_TREE), List.of(2, 4), List.of(1), 100, 500, 1000, 50);
        AtomicHarness.Report r = AtomicHarness.run(s, m -> { });
        assertThat(r.cases()).extracting(AtomicHarness.Case::shape).containsOnly(AtomicHarness.Shape.ONE_TREE);
        assertThat(r.cases()).extracting(AtomicHarness.Case::keysPerWrite).containsExactly(2, 4);
        assertThat(r.markdown()).contains("n/a"); // no put row at this thread count: no ratio to it
    }
}
