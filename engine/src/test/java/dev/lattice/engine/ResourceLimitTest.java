package dev.lattice.engine;

import dev.lattice.testkit.CountingProvider;
import dev.lattice.testkit.LimitEnforcingProvider;
import dev.lattice.testkit.SpiOperation;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.open;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Typed errors instead of {@code Error}s (issue 14 item 7): an open that cannot fit the memory budget is refused
 * before (checkpoint) or while (log tail) it replays, and a checkpoint larger than the provider stores is never
 * uploaded, with the condition visible as a health issue, a meter and a saturation state.
 */
class ResourceLimitTest {

    static final int VALUE_BYTES = 1024;

    static void fill(Tree t, int keys) {
        byte[] v = new byte[VALUE_BYTES];
        java.util.Map<String, byte[]> m = new java.util.HashMap<>();
        for (int i = 0; i < keys; i++) {
            m.put("key-" + i, v);
            if (m.size() == 500) {
                t.putAll(m);
                m.clear();
            }
        }
        t.putAll(m);
    }

    /** On a provider without a run store, all data lives in the heap: an open that cannot fit is refused early. */
    @Test
    void anOpenWhoseCheckpointsExceedTheBudgetIsRefusedBeforeReadingThem() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice l = Lattice.open(LatticeConfig.builder().partitions(4)
                .provider(new WithoutRunStore(new InMemoryWalStorageProvider(storage)), true).build())) {
            fill(l.tree("big"), 4_000); // ~4 MB, checkpointed at close
        }
        CountingProvider counting = new CountingProvider(new WithoutRunStore(new InMemoryWalStorageProvider(storage)));
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(counting, true)
                .memoryBudgetBytes(1L << 20).build())) {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> l.tree("big")).isInstanceOf(MemoryBudgetExceededException.class)
                    .hasMessageContaining("memory budget of " + (1L << 20) + " bytes")
                    .hasMessageContaining("big/");
            System.out.println("[budget] open of ~4 MB under a 1 MiB budget refused after "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms, "
                    + counting.snapshot().calls(SpiOperation.CHECKPOINT_OPEN) + " checkpoint opens");
            assertThat(l.liveDataBytes()).as("a refused open gives its memory back").isZero();
        }
        try (Lattice l = open(storage)) {
            assertThat(l.tree("big").count()).isEqualTo(4_000); // nothing was harmed
        }
    }

    /** With a run store the same tree opens under the same budget: the open reads manifests, not the data. */
    @Test
    void aTreeLargerThanTheBudgetOpensFromItsManifests() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice l = open(storage, LatticeConfig.builder().partitions(4))) {
            fill(l.tree("big"), 4_000); // ~4 MB, flushed into runs at close
        }
        try (Lattice l = open(storage, LatticeConfig.builder().memoryBudgetBytes(1L << 20))) {
            Tree t = l.tree("big");
            assertThat(t.count()).isEqualTo(4_000);
            assertThat(t.get("key-3999")).isPresent();
            assertThat(l.stats().replayCheckpointBytes()).as("manifests only").isLessThan(8 * 1024);
            assertThat(l.liveDataBytes()).isLessThan(1L << 20);
        }
    }

    @Test
    void anOpenWhoseLogTailExceedsTheBudgetStopsDuringReplay() {
        InMemoryStorage storage = new InMemoryStorage();
        Lattice crashed = open(storage, LatticeConfig.builder().partitions(1).checkpointEveryEntries(1_000_000)
                .checkpointEveryBytes(1L << 40).closeTimeout(Duration.ZERO));
        fill(crashed.tree("tail"), 3_000); // only in the log: no checkpoint yet
        // no close: another process takes over, as after a crash
        try (Lattice l = open(storage, LatticeConfig.builder().memoryBudgetBytes(1L << 20)
                .replayPage(100, 1L << 20))) {
            assertThatThrownBy(() -> l.tree("tail")).isInstanceOf(MemoryBudgetExceededException.class)
                    .hasMessageContaining("memoryBudgetBytes");
            assertThat(l.liveDataBytes()).isZero();
        }
        crashed.close();
    }

    /** With a run store the data goes into runs and the manifest stays small: the same limit never binds. */
    @Test
    void withRunsAPartitionGrowsPastTheCheckpointLimitAndItsLogIsStillTrimmed() {
        InMemoryStorage storage = new InMemoryStorage();
        long limit = 64 * 1024;
        LimitEnforcingProvider limited = LimitEnforcingProvider.clamping(new InMemoryWalStorageProvider(storage),
                LimitEnforcingProvider.serviceLimits().maxCheckpointBytes(limit).build());
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(limited, true).partitions(1)
                .checkpointEveryEntries(50).build())) {
            Tree t = l.tree("cp");
            for (int i = 0; i < 1_000; i++) {
                t.put("grow-" + i, new byte[VALUE_BYTES]); // ~1 MB: 16 times the checkpoint limit
            }
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(l.provider().state(new dev.lattice.spi.LogId("cp", 0)).trimWatermark())
                            .isGreaterThanOrEqualTo(950));
            assertThat(t.healthIssues()).isEmpty();
            assertThat(l.stats().checkpointFailures()).isZero();
        }
        try (Lattice l = open(storage)) {
            assertThat(l.tree("cp").count()).isEqualTo(1_000);
        }
    }

    /** Without a run store a checkpoint is the whole partition: past the provider's limit it is refused, visibly. */
    @Test
    void aCheckpointLargerThanTheProviderStoresIsNeverUploadedAndIsVisible() {
        InMemoryStorage storage = new InMemoryStorage();
        long limit = 64 * 1024;
        // the decorator declares the limit and throws an Error if anything larger reached the provider
        LimitEnforcingProvider limited = LimitEnforcingProvider.clamping(new InMemoryWalStorageProvider(storage),
                LimitEnforcingProvider.serviceLimits().maxCheckpointBytes(limit).build());
        CountingProvider counting = new CountingProvider(limited);
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(new WithoutRunStore(counting), true)
                .partitions(1).checkpointEveryEntries(50).build())) {
            Tree t = l.tree("cp");
            for (int i = 0; i < 40; i++) {
                t.put("key-" + i, new byte[VALUE_BYTES]); // one entry each (a putAll would share entries)
            }
            for (int i = 0; i < 15; i++) {
                t.put("small-" + i, b("x")); // the checkpoint at 50 entries (~41 KB) fits
            }
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(counting.snapshot().calls(SpiOperation.CHECKPOINT_PUBLISH)).isEqualTo(1));
            long publishedSmall = counting.snapshot().calls(SpiOperation.CHECKPOINT_PUBLISH);
            for (int i = 0; i < 200; i++) {
                t.put("grow-" + i, new byte[VALUE_BYTES]); // now ~240 KB: every checkpoint is too large
            }
            // checkpoints are taken in the background: wait until one was refused
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() ->
                    l.meterRegistry().find("lattice.checkpoint.refused").counter() != null
                    && l.meterRegistry().find("lattice.checkpoint.refused").counter().count() > 0);
            assertThat(counting.snapshot().calls(SpiOperation.CHECKPOINT_PUBLISH)).isEqualTo(publishedSmall);
            assertThat(t.healthIssues()).anySatisfy(i -> {
                assertThat(i.kind()).isEqualTo(HealthIssue.Kind.CHECKPOINT_TOO_LARGE);
                assertThat(i.detail()).contains(Long.toString(limit)).contains("maxCheckpointBytes");
            });
            assertThat(l.meterRegistry().find("lattice.checkpoint.refused").counter().count()).isGreaterThan(0);
            assertThat(t.saturation()).isEqualTo(SaturationState.THROTTLED);
            assertThat(l.healthIssues("cp")).isNotEmpty();
            // writes still work; the data is intact after a reopen from the log
            t.put("last", b("y"));
        }
        try (Lattice l = open(storage)) {
            assertThat(l.tree("cp").count()).isEqualTo(40 + 15 + 200 + 1);
        }
    }
}
