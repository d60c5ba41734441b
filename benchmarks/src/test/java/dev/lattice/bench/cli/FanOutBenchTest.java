package dev.lattice.bench.cli;

import dev.lattice.cli.ExitCodes;
import dev.lattice.testkit.ThrottledProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Smoke test: the fan-out harness runs a tiny case per mode and produces its table and chart. */
class FanOutBenchTest {

    @Test
    void runsAndPrintsATableAndAChart(@TempDir Path dir) {
        Path png = dir.resolve("fan-out.png");
        Cli.Run r = Cli.run("bench", "fan-out", "--accounts", "1,2", "--duration", "400ms", "--writers", "8",
                "--partitions", "4", "--requests-per-second", "2000", "--markdown", "--chart", png.toString());
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("| point | 1 |").contains("| point | 2 |").contains("| batch | 2 |");
        assertThat(png).exists();
        assertThat(png.toFile().length()).isPositive();
        Cli.Run bad = Cli.run("bench", "fan-out", "--accounts", "0");
        assertThat(bad.code()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void throttleCountsRequestsAndBytes() throws Exception {
        try (var raw = dev.lattice.spi.Providers.open("memory:throttle-test-" + java.util.UUID.randomUUID())) {
            ThrottledProvider t = new ThrottledProvider(raw, 1000, 1 << 20);
            dev.lattice.spi.LogId log = new dev.lattice.spi.LogId("t", 0);
            var f = t.claim(log);
            t.append(log, f, dev.lattice.spi.EncodedBatch.of(0, java.util.List.of(new byte[10], new byte[5])));
            t.read(log, -1, 10, 1000);
            assertThat(t.requestCount()).isEqualTo(3); // stage, commit, read
            assertThat(t.byteCount()).isEqualTo(30); // 15 written, 15 read
        }
    }
}
