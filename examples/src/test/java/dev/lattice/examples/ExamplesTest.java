package dev.lattice.examples;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.Tree;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs every example program through its {@code main} (and its result method) on real providers. */
class ExamplesTest {

    @TempDir
    Path dir;

    private static String captureOut(Runnable r) {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setOut(old);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    @Test
    void embeddedChronicleMainWritesScansAndTheDataSurvivesReopen() {
        String data = dir.resolve("data").toString();
        String out = captureOut(() -> EmbeddedChronicleExample.main(new String[]{data}));
        assertThat(out).contains("o-1 = paid");
        try (Lattice lattice = Lattice.open("chronicle:" + data)) {
            Tree orders = lattice.tree("orders");
            assertThat(orders.count()).isEqualTo(2);
            assertThat(new String(orders.get("o-1").orElseThrow(), StandardCharsets.UTF_8)).isEqualTo("paid");
            assertThat(new String(orders.get("o-2").orElseThrow(), StandardCharsets.UTF_8)).isEqualTo("sku-9 x1");
            assertThat(new String(lattice.tree("stock").get("sku-9").orElseThrow(), StandardCharsets.UTF_8))
                    .isEqualTo("2");
        }
    }

    @Test
    void postgresExampleOnAnEmbeddedServer() throws Exception {
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
            String uri = "postgres://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres&schema=examples";
            assertThat(PostgresExample.run(uri, Map.of())).isEqualTo("paid");
            String out = captureOut(() -> PostgresExample.main(new String[]{uri}));
            assertThat(out).contains("o-1 = paid");
        }
    }

    @Test
    void atomicWritesPlaceThreeOrdersAndRefuseTheRest() {
        String uri = "chronicle:" + dir.resolve("atomic");
        String out = captureOut(() -> AtomicWritesExample.main(new String[]{uri}));
        assertThat(out).contains("order o-1: placed", "order o-3: placed", "order o-4: out of stock",
                "stale write refused: precondition failed", "stock left: 0");
        try (Lattice lattice = Lattice.open(uri)) {
            assertThat(lattice.tree("orders").count()).isEqualTo(3);
            assertThat(lattice.tree("orders").exists("o-stale")).isFalse();
        }
    }

    @Test
    void prometheusScrapeHasLatticeSeries() {
        String scrape = PrometheusMetricsExample.run("memory:examples-metrics");
        assertThat(scrape).contains("lattice_");
        assertThat(scrape.lines().filter(l -> !l.startsWith("#")).count()).isPositive();
        assertThat(captureOut(() -> PrometheusMetricsExample.main(new String[]{"memory:examples-metrics-2"})))
                .contains("lattice_");
    }
}
