package dev.lattice.examples.cluster;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the cluster example through {@code main} (in-memory storage) and on an embedded PostgreSQL: its nodes run
 * Artery {@code tls-tcp} with mutual authentication, a plain TCP node is refused, and the tree is served.
 */
class ClusterExampleTest {

    @Test
    void mainOnMemory() {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            ClusterExample.main(new String[0]);
        } finally {
            System.setOut(old);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        System.out.print(out);
        assertThat(out).contains("3 nodes up on 127.0.0.1", "transport tls-tcp with mutual authentication",
                "a node without the cluster's certificate (plain TCP) tried to join for 8 s: refused", "order-07 read through node 3: amount 70",
                "count through node 3: 30", "node 2 left", "order-00 after the leave: paid, count 30");
    }

    @Test
    void onPostgres() throws Exception {
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
            String uri = "postgres://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres&schema=orders";
            Map<String, Object> seen = ClusterExample.run(uri);
            assertThat(seen).containsEntry("transport", "tls-tcp").containsEntry("mutual authentication", true)
                    .containsEntry("intruder joined", false)
                    .containsEntry("order-07", "amount 70").containsEntry("count", 30L)
                    .containsEntry("order-29", "paid").containsEntry("order-00 after leave", "paid")
                    .containsEntry("count after leave", 30L);
        }
    }
}
