package dev.lattice.conformance;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Trim while the log is written: a writer thread stages and commits small batches without pause while another
 * thread (same fence, same instance) trims through the tail the writer last committed, {@value
 * TrimUnderLoadRun#TRIMS} times ({@link TrimUnderLoadRun} has the details and the bounds).
 */
public abstract class TrimUnderLoadContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected TrimUnderLoadContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /**
     * Every trim call succeeds at once ({@value TrimUnderLoadRun#MAX_ATTEMPTS_PER_TRIM} call; a
     * ProviderUnavailableException fails the test), the state after each trim is dense with a retained range of at
     * most {@link TrimUnderLoadRun#MAX_RETAINED_RANGE} entries, and afterwards, also after reopen and recovery,
     * the log holds exactly the untrimmed committed entries, byte-exact.
     */
    @Test
    void everyTrimCompletesWhileTheLogIsWritten() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        TrimUnderLoadRun.Result r = new TrimUnderLoadRun(provider(), f, SEED, HANG_GUARD_SECONDS).run();
        System.out.printf("trim under load on %s: %s%n", provider().describe().name(), r);
        assertThat(r.trims()).as("trims completed under load (%s)", r).isEqualTo(TrimUnderLoadRun.TRIMS);
        assertThat(r.maxAttempts()).as("calls per trim under load: each trim must succeed on its first call (%s)", r)
                .isBetween(1, TrimUnderLoadRun.MAX_ATTEMPTS_PER_TRIM);
        assertThat(r.maxRetainedRange()).as("largest retained range right after a trim (%s)", r)
                .isLessThanOrEqualTo(TrimUnderLoadRun.MAX_RETAINED_RANGE);
        assertThat(r.batches()).as("batches the writer committed while the trims ran (%s)", r)
                .isGreaterThanOrEqualTo(TrimUnderLoadRun.TRIMS * TrimUnderLoadRun.MIN_BATCHES_BETWEEN_TRIMS);
        List<LogEntry> expected = new ArrayList<>();
        for (LogEntry e : entriesOf(r.retained())) {
            if (e.offset() > r.lastWatermark()) {
                expected.add(e);
            }
        }
        long tail = (long) r.batches() * TrimUnderLoadRun.ENTRIES_PER_BATCH - 1;
        assertThat(provider().state(log).trimWatermark()).as("trim watermark after the last trim under load")
                .isEqualTo(r.lastWatermark());
        assertDurable(log, () -> assertLogHolds(provider(), log, expected, tail));
    }
}
