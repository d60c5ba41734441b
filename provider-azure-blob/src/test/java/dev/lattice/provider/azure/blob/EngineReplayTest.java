package dev.lattice.provider.azure.blob;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reported scenario through the engine (1,000 awaited writes of 500 bytes, then a cold reopen after a
 * crash-like stop and after a clean close), asserting what replay reads: blocks and requests, never time. The
 * harness {@link ReplayBench} prints the same figures with wall times for the docs.
 */
class EngineReplayTest {

    private static void assertBounded(ReplayBench.Result r, int maxBlocks) {
        System.out.println(ReplayBench.format(r));
        for (ReplayBench.Reopen o : new ReplayBench.Reopen[] {r.crash(), r.clean()}) {
            assertThat(o.blocksRead()).as(o.name() + " reopen: blocks read (checkpoint plus tail)")
                    .isLessThanOrEqualTo(maxBlocks);
            assertThat(o.httpRequests()).as(o.name() + " reopen: HTTP requests = provider requests (no SDK retries)")
                    .isEqualTo(o.providerRequests());
        }
        assertThat(r.clean().segmentBlocks()).as("after a clean close the log is checkpointed and trimmed")
                .isLessThanOrEqualTo(1);
    }

    /** One writer, 1,000 distinct keys over the default 8 partitions: at most 50 blocks per cold replay. */
    @Test
    void sequentialWritesReplayFromAtMostFiftyBlocks() throws Exception {
        ReplayBench.Result r = ReplayBench.run(new ReplayBench.Scenario(1000, 500, 1, true, 8, 0, "default",
                b -> b));
        assertBounded(r, 50);
        // 9 logs (8 partitions and the catalog): about 6 requests each, independent of the number of writes
        assertThat(r.crash().providerRequests()).isLessThanOrEqualTo(9 * 7);
    }

    /** 64 concurrent writers (coalesced by the engine), same bound. */
    @Test
    void concurrentWritesReplayFromAtMostFiftyBlocks() throws Exception {
        ReplayBench.Result r = ReplayBench.run(new ReplayBench.Scenario(1000, 500, 64, true, 8, 0, "default",
                b -> b));
        assertBounded(r, 50);
    }

    /**
     * With the inline tail off every commit is one block, as in the reported journal. The declared replay model
     * (5.7 ms per block) then makes the engine checkpoint each log before its tail passes its 250 ms budget, so no
     * log's tail exceeds 44 blocks (250 / 5.7).
     */
    @Test
    void withOneBlockPerCommitTheReplayModelBoundsEachLogsTail() throws Exception {
        ReplayBench.Result r = ReplayBench.run(new ReplayBench.Scenario(1000, 500, 1, true, 1, 0,
                "inline tail off", b -> b.inlineTailBytes(0)));
        System.out.println(ReplayBench.format(r));
        assertThat(r.checkpointsDuringWrites()).as("checkpoints forced by the replay model").isGreaterThanOrEqualTo(20);
        assertThat(r.crash().segmentBlocks()).isLessThanOrEqualTo(44);
        assertThat(r.crash().blocksRead()).isLessThanOrEqualTo(50);
    }
}
