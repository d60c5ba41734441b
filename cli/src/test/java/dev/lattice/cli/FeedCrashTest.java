package dev.lattice.cli;

import dev.lattice.engine.FeedKillHarness;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's change-feed kill check ({@code FeedKillHarness}) on an embedded PostgreSQL ({@code fsync=on}): the
 * producer JVM is killed with SIGKILL at random moments while a registered consumer in this JVM reads the same
 * backend concurrently and is restarted at random points; its sequence per partition must equal the log's. Rounds:
 * {@code -Dlattice.feedcrash.rounds=N} (default 3; a soak is 30+), {@code -Dlattice.feedcrash.seed=S},
 * {@code -Dlattice.feedcrash.maxDelayMs} (default 3000).
 */
class FeedCrashTest {

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // a backstop against a hang; every wait inside is bounded
    void aConsumerReadingBesideAKilledProducerSeesTheLogWithoutGapOrDuplicate() throws Exception {
        String schema = "feedcrash" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on").start()) {
            String uri = "postgres://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres&schema=" + schema;
            int changes = new FeedKillHarness(uri, Map.of(), dir,
                    Long.getLong("lattice.feedcrash.seed", new Random().nextLong()),
                    Long.getLong("lattice.feedcrash.maxDelayMs", 3000), true)
                    .run(Integer.getInteger("lattice.feedcrash.rounds", 3));
            assertThat(changes).isPositive();
        }
    }
}
