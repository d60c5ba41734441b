package dev.lattice.bench.jmh;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Smoke test: the JMH suite runs in-process (no fork) for a few milliseconds and renders its table and chart. */
class JmhSuiteSmokeTest {

    @Test
    void tinyRunProducesTableAndChart(@TempDir Path img) {
        JmhSuite.Settings s = new JmhSuite.Settings(0, 0, 10, 1, 100, List.of(1, 2), List.of("get", "scan100"),
                1000, false, img);
        JmhSuite.Report r = JmhSuite.run(s, m -> { });
        assertThat(r.figures()).hasSize(8).allSatisfy(f -> assertThat(f.p50Us()).isPositive());
        assertThat(r.markdown()).contains("| get | 1 |", "| scan of 100 keys | 2 |", "1.84 us", "not yet");
        assertThat(img.resolve("jmh-p50.png")).isNotEmptyFile();
    }
}
