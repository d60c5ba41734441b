package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.open;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;

class ReplayAndCheckpointTest {

    @Test
    void reopenReproducesStateAndVersionsContinueAbove() {
        InMemoryStorage storage = new InMemoryStorage();
        Map<String, String> model = new HashMap<>();
        long lastVersion;
        try (Lattice l = open(storage, LatticeConfig.builder().partitions(4).checkpointEveryEntries(1_000_000))) {
            Tree t = l.tree("r");
            for (int i = 0; i < 2_000; i++) {
                String k = "k" + (i % 300);
                if (i % 7 == 0) {
                    t.delete(k);
                    model.remove(k);
                } else {
                    t.put(k, b("v" + i));
                    model.put(k, "v" + i);
                }
            }
            lastVersion = t.put("last", b("x"));
            model.put("last", "x");
        }
        try (Lattice l = open(storage)) {
            Tree t = l.tree("r");
            assertThat(t.count()).isEqualTo(model.size());
            model.forEach((k, v) -> assertThat(s(t.get(k).orElseThrow())).isEqualTo(v));
            assertThat(t.getVersioned("last").orElseThrow().version()).isEqualTo(lastVersion);
            assertThat(t.put("after", b("y"))).isGreaterThan(lastVersion);
            // clean close checkpointed every partition, so replay read only checkpoints
            assertThat(l.stats().replayEntries()).isZero();
            assertThat(l.stats().replayCheckpointBytes()).isPositive();
        }
    }

    @Test
    void checkpointPolicyBoundsReplayAndTrimsTheLog() {
        InMemoryStorage storage = new InMemoryStorage();
        int every = 500;
        InMemoryWalStorageProvider provider = new InMemoryWalStorageProvider(storage);
        Lattice l = Lattice.open(LatticeConfig.builder().provider(provider, false).partitions(1)
                .checkpointEveryEntries(every).build());
        Tree t = l.tree("cp");
        for (int i = 0; i < 5_200; i++) {
            t.put("k" + (i % 1000), b("v" + i));
        }
        // flushes run in the background: once they caught up, the last one started within `every` entries of the
        // tail (a flush that was running when a threshold passed is followed by another one)
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() ->
                provider.state(new LogId("cp", 0)).trimWatermark() >= 5_199 - every);
        // crash: drop the lattice without close (no final checkpoint); the provider keeps its data
        LogState st = provider.state(new LogId("cp", 0));
        assertThat(st.committedTail()).isEqualTo(5_199);
        assertThat(st.trimWatermark()).as("log trimmed up to a checkpoint").isGreaterThanOrEqualTo(4_000);
        assertThat(provider.latest(new LogId("cp", 0))).isPresent();

        try (Lattice reopened = open(storage)) {
            Tree r = reopened.tree("cp");
            assertThat(r.count()).isEqualTo(1000);
            for (int i = 4_200; i < 5_200; i++) {
                assertThat(s(r.get("k" + (i % 1000)).orElseThrow())).isEqualTo("v" + i);
            }
            LatticeStats stats = reopened.stats();
            assertThat(stats.replayEntries()).as("replay reads only entries after the last checkpoint")
                    .isLessThanOrEqualTo(2L * every);
            assertThat(stats.replayCheckpointBytes()).isPositive();
        }
    }

    /** A provider that declares a per-batch replay cost gets checkpointed before its replay passes the budget. */
    @Test
    void replayCostModelDrivesCheckpoints() {
        InMemoryStorage storage = new InMemoryStorage();
        dev.lattice.spi.WalStorageProvider slowToReplay =
                new dev.lattice.testkit.ForwardingProvider(new InMemoryWalStorageProvider(storage)) {
                    @Override
                    public dev.lattice.spi.ProviderDescriptor describe() {
                        var d = delegate.describe();
                        return new dev.lattice.spi.ProviderDescriptor(d.name(), d.version(), d.limits(),
                                d.durability(), d.features(), new dev.lattice.spi.ReplayCostModel(10, 0));
                    }
                };
        Lattice l = Lattice.open(LatticeConfig.builder().provider(slowToReplay, false).partitions(1)
                .checkpointReplayBudget(java.time.Duration.ofMillis(250)).build());
        Tree t = l.tree("cost");
        // 10 ms per batch against a 250 ms budget: a checkpoint each time 25 batches are past the last one (the entry
        // and byte thresholds, 50,000 entries and 64 MiB, are far away, so every checkpoint here is the cost model's)
        for (int round = 1; round <= 8; round++) {
            for (int i = 0; i < 25; i++) {
                t.put("k" + round + "-" + i, b("v"));
            }
            int expected = round;
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(l.stats().checkpoints()).as("checkpoints after %d writes (%s)", 25 * expected,
                            l.stats()).isGreaterThanOrEqualTo(expected));
        }
        // a burst faster than checkpoints: writes that arrive while one is published gather for the next, and a
        // checkpoint that finishes checks the policy again, so at rest the tail is within one budget
        for (int i = 0; i < 200; i++) {
            t.put("burst-" + i, b("v"));
        }
        LogId log = new LogId("cost", 0);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() -> {
            LogState st = slowToReplay.state(log);
            assertThat(st.committedTail() - st.trimWatermark()).as("entries left to replay (%s)", st)
                    .isLessThanOrEqualTo(25);
        });
    }
}
