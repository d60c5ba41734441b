package dev.lattice.engine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Random;

/**
 * {@link FeedKillHarness} on the Chronicle provider in a temporary directory: a producer JVM killed with SIGKILL at
 * random moments, a registered consumer restarted at random points between the rounds; its sequence per partition
 * must equal the log's. Rounds: {@code -Dlattice.feedkill.rounds=N} (default 4 for CI; a soak is 50+);
 * {@code -Dlattice.feedkill.seed=S}; {@code -Dlattice.feedkill.maxDelayMs} (default 1500).
 */
class FeedProcessKillTest {

    @TempDir
    Path dir;

    @Test
    void aRestartedConsumerSeesTheLogWithoutGapOrDuplicateWhileTheProducerIsKilled() throws Exception {
        new FeedKillHarness("chronicle:" + dir.resolve("lattice"), Map.of(), dir,
                Long.getLong("lattice.feedkill.seed", new Random().nextLong()),
                Long.getLong("lattice.feedkill.maxDelayMs", 1500), false)
                .run(Integer.getInteger("lattice.feedkill.rounds", 4));
    }
}
