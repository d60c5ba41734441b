package dev.lattice.bench.providers;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Smoke test: the per-provider YCSB harness runs a tiny workload on the Chronicle baseline and {@code memory:} and
 * renders its table and chart (the servers of the remote providers are started by run-all, not by unit tests).
 */
class ProviderYcsbSmokeTest {

    @Test
    void tinyRunOnChronicleAndMemory(@TempDir Path tmp) {
        ProviderYcsb.Settings s = new ProviderYcsb.Settings(tmp.resolve("work"), tmp.resolve("img"),
                List.of("chronicle", "memory"), List.of("a", "e"), 2, 100, 200);
        ProviderYcsb.Report r = ProviderYcsb.run(s, m -> { });
        assertThat(r.skipped()).isEmpty();
        assertThat(r.cases()).hasSize(4);
        assertThat(r.markdown()).contains("| chronicle | PROCESS_CRASH | A | 1.00x", "| memory |", "SCAN");
        assertThat(tmp.resolve("img/providers-ycsb.png")).isNotEmptyFile();
    }

    @Test
    void unknownProviderIsSkippedWithTheReason(@TempDir Path tmp) {
        ProviderYcsb.Settings s = new ProviderYcsb.Settings(tmp.resolve("work"), null, List.of("nosuch"),
                List.of("c"), 1, 10, 10);
        ProviderYcsb.Report r = ProviderYcsb.run(s, m -> { });
        assertThat(r.skipped()).singleElement().asString().contains("nosuch").contains("unknown provider");
    }
}
