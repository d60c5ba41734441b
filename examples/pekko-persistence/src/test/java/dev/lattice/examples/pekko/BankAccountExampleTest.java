package dev.lattice.examples.pekko;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs the Pekko example on Chronicle (through {@code main}) and on an embedded PostgreSQL. */
class BankAccountExampleTest {

    @TempDir
    Path dir;

    @Test
    void onChronicleTheBalanceSurvivesARestartAndASecondRunAddsToIt() throws Exception {
        String uri = "chronicle:" + dir.resolve("bank");
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            BankAccountExample.main(new String[]{uri});
        } finally {
            System.setOut(old);
        }
        assertThat(buf.toString(StandardCharsets.UTF_8)).contains("deposited 70, balance 280",
                "recovered balance 280");
        // a second run recovers from the snapshot at event 5 plus the events after it, then adds
        assertThat(BankAccountExample.run(uri, Map.of(), 1, 2)).isEqualTo(283);
    }

    @Test
    void onPostgres() throws Exception {
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
            String uri = "postgres://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres&schema=bank";
            assertThat(BankAccountExample.run(uri, Map.of(), 5, 5, 5, 5, 5, 5)).isEqualTo(30);
            assertThat(BankAccountExample.run(uri, Map.of(), 10)).isEqualTo(40);
        }
    }
}
