package dev.lattice.bench.jmh;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Smoke test: the JMH suite runs in-process (no fork) for a few milliseconds and renders its tables and charts. */
class JmhSuiteSmokeTest {

    @Test
    void tinyRunProducesTableAndChart(@TempDir Path img) {
        JmhSuite.Settings s = new JmhSuite.Settings(0, 0, 10, 1, 100, List.of(1, 2), List.of("get", "scan100"),
                List.of(), 1000, false, img);
        JmhSuite.Report r = JmhSuite.run(s, m -> { });
        assertThat(r.figures()).hasSize(8).allSatisfy(f -> assertThat(f.p50Us()).isPositive());
        assertThat(r.markdown()).contains("| get | 1 |", "| scan of 100 keys | 2 |", "1.84 us", "`atomic-jmh` table");
        assertThat(r.atomicMarkdown()).isEmpty();
        assertThat(img.resolve("jmh-p50.png")).isNotEmptyFile();
        assertThat(img.resolve("jmh-atomic-p50.png")).doesNotExist();
    }

    @Test
    void tinyAtomicRunProducesTableAndChart(@TempDir Path img) {
        JmhSuite.Settings s = new JmhSuite.Settings(0, 0, 10, 1, 100, List.of(1), List.of("put"), List.of(2),
                1000, false, img);
        JmhSuite.Report r = JmhSuite.run(s, m -> { });
        // put, atomic one tree and atomic two trees, each on the engine and on the skip list
        assertThat(r.figures()).hasSize(6).allSatisfy(f -> assertThat(f.p50Us()).isPositive());
        assertThat(r.figures()).filteredOn(JmhSuite.Figure::atomic).hasSize(4)
                .allSatisfy(f -> assertThat(f.keysPerWrite()).isEqualTo(2));
        assertThat(r.atomicMarkdown()).contains("| put (1 key) | 1 | 1 |", "| atomic, 1 tree | 2 | 1 |",
                "| atomic, 2 trees (half each) | 2 | 1 |", "64.68 us, 19 KB", "138.24 us, 42 KB", "3.79 us, 872 B",
                "another machine");
        assertThat(img.resolve("jmh-atomic-p50.png")).isNotEmptyFile();
        assertThat(img.resolve("jmh-p50.png")).doesNotExist();
    }
}
