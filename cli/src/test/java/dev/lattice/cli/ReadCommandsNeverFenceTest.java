package dev.lattice.cli;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.Tree;
import dev.lattice.spi.LogId;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reported bug: {@code lattice get} against a running application's tree claimed its logs, and the application's
 * next put failed with a stale epoch. The reading commands (get, scan, tree list, tree info) now read as read-only
 * followers: the application's epochs stay where they were and its writes keep working (on Chronicle through
 * read-only provider instances, which open beside the application's locked directory).
 */
class ReadCommandsNeverFenceTest {

    @Test
    void readingCommandsLeaveAPostgresApplicationWriting() throws Exception {
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
            String uri = "postgres://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres&schema=fence"
                    + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
            readsWhileTheApplicationWrites(uri);
        }
    }

    @Test
    void readingCommandsLeaveAChronicleApplicationWriting(@TempDir Path dir) {
        // the application holds the directory lock; the commands open read-only Chronicle instances beside it
        readsWhileTheApplicationWrites("chronicle:" + dir);
    }

    @Test
    void readingCommandsLeaveAMemoryApplicationWriting() {
        readsWhileTheApplicationWrites(Cli.freshMemoryUri());
    }

    private static void readsWhileTheApplicationWrites(String uri) {
        try (Lattice app = Lattice.open(uri)) {
            Tree orders = app.tree("orders");
            orders.put("o-1", "first".getBytes(StandardCharsets.UTF_8));
            int partitions = orders.partitions();
            long[] epochs = new long[partitions];
            for (int p = 0; p < partitions; p++) {
                epochs[p] = app.provider().state(new LogId("orders", p)).epoch();
            }
            for (int round = 0; round < 3; round++) {
                Cli.Run get = Cli.run("get", "--provider", uri, "orders", "o-1");
                assertThat(get.code()).as(get.toString()).isZero();
                assertThat(get.out().strip()).isEqualTo(round == 0 ? "first" : "v" + (round - 1));
                Cli.Run scan = Cli.run("scan", "--provider", uri, "orders");
                assertThat(scan.code()).as(scan.toString()).isZero();
                assertThat(Cli.run("tree", "list", "--provider", uri).out()).contains("orders");
                assertThat(Cli.run("tree", "info", "--provider", uri, "orders").out()).contains("partitions: "
                        + partitions);
                // the application's next write still works: nobody fenced it
                orders.put("o-1", ("v" + round).getBytes(StandardCharsets.UTF_8));
            }
            for (int p = 0; p < partitions; p++) {
                assertThat(app.provider().state(new LogId("orders", p)).epoch()).as("epoch of partition " + p)
                        .isEqualTo(epochs[p]);
            }
            assertThat(orders.healthIssues()).isEmpty();
            Cli.Run missing = Cli.run("get", "--provider", uri, "nope", "k");
            assertThat(missing.code()).isEqualTo(ExitCodes.NOT_FOUND);
            assertThat(app.exists("nope")).as("a read never creates a tree").isFalse();
        }
    }
}
