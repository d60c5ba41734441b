package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;

/** trim: inclusive, idempotent, durable; state's counters follow. */
public abstract class TrimContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected TrimContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** trim(k) drops offsets up to and including k; lowestOffset, retainedEntries and bytes follow. */
    @Test
    void trimIsInclusiveAndCountersFollow() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = variedBatch(SEED, 0, 10, 13);
        provider().append(log, f, a);
        List<LogEntry> all = entriesOf(a);
        provider().trim(log, f, 3);
        LogState s = provider().state(log);
        assertThat(s.trimWatermark()).as("trim watermark after trim(3)").isEqualTo(3);
        assertThat(s.lowestOffset()).as("lowest offset after trim(3) (inclusive)").isEqualTo(4);
        assertLogHolds(provider(), log, all.subList(4, 10), 9);
        provider().trim(log, f, 0);
        assertLogHolds(provider(), log, all.subList(4, 10), 9);
        provider().trim(log, f, 8);
        assertLogHolds(provider(), log, all.subList(9, 10), 9);
        assertThat(provider().state(log).retainedPayloadBytes()).as("retained payload bytes of entry 9 after trim(8)")
                .isEqualTo(9 * 13);
        assertDurable(log, () -> {
            assertLogHolds(provider(), log, all.subList(9, 10), 9);
            assertThat(provider().state(log).trimWatermark()).as("trim watermark after trim(8)").isEqualTo(8);
        });
    }

    /** Repeating a trim, or trimming lower than the watermark, changes nothing. */
    @Test
    void trimIsIdempotentAndNeverLowersTheWatermark() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 2, 5, SMALL);
        provider().trim(log, f, 6);
        LogSnapshot after = snapshot(provider(), log);
        provider().trim(log, f, 6);
        provider().trim(log, f, 2);
        provider().trim(log, f, 0);
        assertUnchanged("after repeating trim(6) and trims below watermark 6", after, snapshot(provider(), log));
        assertThat(after.trimWatermark()).as("trim watermark after trim(6)").isEqualTo(6);
    }

    /** Trims survive reopen: the watermark, the counters and what reads return. */
    @Test
    void trimIsDurableAcrossReopen() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 3, 4, SMALL);
        provider().trim(log, f, 5);
        LogSnapshot before = snapshot(provider(), log);
        reopen();
        assertSameData("after trim(5) and reopen (no claim)", before, snapshot(provider(), log));
        Fence g = claimAndReconcile(provider(), log);
        assertSameData("after trim(5), reopen + claim + reconcile", before, snapshot(provider(), log));
        provider().trim(log, g, 11);
        LogSnapshot empty = snapshot(provider(), log);
        assertThat(empty.entries()).as("entries after the full trim(11) of 0..11").isEmpty();
        reopenAndRecover(log);
        assertSameData("after the full trim(11), reopen + claim + reconcile", empty, snapshot(provider(), log));
    }

    /** A trim beyond the tail drops staged batches at or below it; staged batches above it stay committable. */
    @Test
    void trimBeyondTailDropsStagedBatchesBelowIt() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 3, SMALL);                 // 0..2
        provider().stage(log, f, batch(SEED + 1, 3, 3, SMALL));    // 3..5
        provider().trim(log, f, 5);
        assertThat(provider().state(log).committedTail()).as("tail after trim(5) beyond tail 2").isEqualTo(5);
        provider().commit(log, f, 5);                              // at the tail: no-op
        assertThat(readAll(provider(), log)).as("entries after trim(5) dropped 0..2 and staged 3..5, then commit(5)")
                .isEmpty();
        assertThat(provider().state(log).retainedEntries()).as("retained entries after trim(5) and commit(5)")
                .isZero();
        EncodedBatch next = batch(SEED + 2, 6, 2, SMALL);
        provider().stage(log, f, next);
        provider().trim(log, f, 5);
        provider().commit(log, f, 7);
        assertLogHolds(provider(), log, entriesOf(next), 7);
    }

    /** A trim leaves staged batches above the watermark alone. */
    @Test
    void trimKeepsStagedBatchesAboveIt() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> committed = appendBatches(provider(), f, 2, 3, SMALL); // 0..5
        EncodedBatch pending = batch(SEED + 1, 6, 3, SMALL);
        provider().stage(log, f, pending);
        provider().trim(log, f, 4);
        provider().commit(log, f, 8);
        List<LogEntry> expected = new ArrayList<>(entriesOf(committed).subList(5, 6));
        expected.addAll(entriesOf(pending));
        assertLogHolds(provider(), log, expected, 8);
    }
}
