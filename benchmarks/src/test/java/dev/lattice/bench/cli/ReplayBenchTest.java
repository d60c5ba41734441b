package dev.lattice.bench.cli;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code lattice bench replay} on the in-memory provider with small sizes. */
class ReplayBenchTest {

    @Test
    void benchReplayRunsOnMemoryAndPrintsOneVerifiedRowPerCase() {
        Cli.Run r = Cli.run("bench", "replay", "--provider", Cli.freshMemoryUri(), "--sizes", "50,200",
                "--writers", "8", "--partitions", "2", "--warmup", "0");
        assertThat(r.code()).as(r.toString()).isZero();
        List<String> rows = r.out().lines().filter(l -> l.startsWith("sequential") || l.startsWith("concurrent"))
                .toList();
        assertThat(rows).hasSize(4).allMatch(l -> l.endsWith("yes"));
        assertThat(r.out()).contains("stage calls").contains("keys/stage").contains("replay entries")
                .contains("checkpoint bytes");
    }

    @Test
    void markdownOutputIsATableWithRatios() {
        Cli.Run r = Cli.run("bench", "replay", "--provider", Cli.freshMemoryUri(), "--sizes", "100",
                "--writers", "4", "--markdown", "--warmup", "0");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("| case | N |").contains("|---|---:|").contains("| sequential | 100 |")
                .contains("ratios to those of the first case");
    }

    @Test
    void cleanReopenLoadsTheCloseCheckpointAndReadsNoEntry() {
        List<ReplayBenchmark.CaseResult> rs = ReplayBenchmark.run(settings(List.of(300), ReplayBenchmark.Reopen.CLEAN,
                0, Duration.ZERO, 2), m -> { });
        assertThat(rs).hasSize(2).allMatch(ReplayBenchmark.CaseResult::verified);
        for (ReplayBenchmark.CaseResult c : rs) {
            assertThat(c.written().entriesCommitted()).isEqualTo(300);
            assertThat(c.written().stageCalls()).isBetween(1L, 300L);
            assertThat(c.replayed().replayEntries()).isZero();
            assertThat(c.replayed().replayCheckpointBytes()).isPositive();
            assertThat(c.physicalBytes()).isPositive();
        }
        assertThat(rs.get(0).written().stageCalls()).as("sequential: one stage per key").isEqualTo(300);
    }

    @Test
    void crashReopenReadsOnlyTheEntriesAfterTheLastCheckpoint() {
        int n = 2_000;
        int partitions = 2;
        long every = 100;
        List<ReplayBenchmark.CaseResult> rs = ReplayBenchmark.run(settings(List.of(n),
                ReplayBenchmark.Reopen.CRASH, every, Duration.ZERO, partitions), m -> { });
        for (ReplayBenchmark.CaseResult c : rs) {
            assertThat(c.verified()).as(c.toString()).isTrue();
            assertThat(c.replayed().replayCheckpointBytes()).as("a policy checkpoint was loaded").isPositive();
            assertThat(c.replayed().replayEntries()).as("replay read less than the whole log").isLessThan(n);
            assertThat(c.replayed().replayEntries()).as("exactly the entries after the latest checkpoints")
                    .isEqualTo(c.entriesAfterCheckpoint());
            assertThat(c.replayed().replayCheckpointBytes()).as("one checkpoint per log")
                    .isEqualTo(c.latestCheckpointBytes());
        }
        // sequential writes commit one entry per batch, so each partition is at most `every` entries past its
        // latest checkpoint (plus what arrived while a checkpoint was being published)
        assertThat(rs.get(0).replayed().replayEntries()).isLessThanOrEqualTo(partitions * every * 2);
        // without any policy checkpoint, a crash reopen reads every entry
        List<ReplayBenchmark.CaseResult> none = ReplayBenchmark.run(settings(List.of(n),
                ReplayBenchmark.Reopen.CRASH, 1_000_000, Duration.ZERO, partitions), m -> { });
        assertThat(none).allMatch(c -> c.replayed().replayEntries() == n && c.verified());
    }

    @Test
    void injectedLatencyStillCoalescesConcurrentWrites() {
        ReplayBenchmark.Settings s = new ReplayBenchmark.Settings(Cli.freshMemoryUri(), List.of(200),
                List.of(ReplayBenchmark.Mode.CONCURRENT), 16, 1, Duration.ofMillis(1), List.of(0L),
                List.of(ReplayBenchmark.Reopen.CLEAN), 32, false, 0, "t");
        ReplayBenchmark.CaseResult c = ReplayBenchmark.run(s, m -> { }).get(0);
        assertThat(c.verified()).isTrue();
        assertThat(c.written().entriesCommitted()).isEqualTo(200);
        // 16 writers wait on one log behind a 1 ms stage: batches carry several keys
        assertThat(c.written().stageCalls()).isLessThan(200);
    }

    private static ReplayBenchmark.Settings settings(List<Integer> sizes, ReplayBenchmark.Reopen reopen,
                                                     long every, Duration latency, int partitions) {
        return new ReplayBenchmark.Settings(Cli.freshMemoryUri(), sizes,
                List.of(ReplayBenchmark.Mode.SEQUENTIAL, ReplayBenchmark.Mode.CONCURRENT), 8, partitions, latency,
                List.of(every), List.of(reopen), 40, false, 0, "t");
    }
}
