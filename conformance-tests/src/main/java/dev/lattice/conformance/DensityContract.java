package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static org.assertj.core.api.Assertions.assertThat;

/** Offsets stay dense: gaps and overlaps are refused and leave the log unchanged, also after reopen. */
public abstract class DensityContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected DensityContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** An append that leaves a gap after the tail is refused; the log is unchanged, also after reopen. */
    @Test
    void appendWithGapAfterTailIsRefused() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 2, 3, SMALL);                                       // 0..5
        LogSnapshot before = snapshot(provider(), log);
        assertConflict("append at 7..8 after tail 5 (gap at 6)",
                () -> provider().append(log, f, batch(SEED, 7, 2, SMALL)));
        assertUnchanged("after the refused append at 7..8", before, snapshot(provider(), log));
        assertConflict("append at 1000 after tail 5", () -> provider().append(log, f, batch(SEED, 1000, 1, SMALL)));
        assertUnchanged("after the refused append at 1000", before, snapshot(provider(), log));
        Fence f2 = reopenAndRecover(log);
        assertSameData("after refused gaps, reopen + claim + reconcile", before, snapshot(provider(), log));
        EncodedBatch next = batch(SEED, 6, 2, SMALL);
        provider().append(log, f2, next);
        List<LogEntry> expected = new ArrayList<>(before.entries());
        expected.addAll(entriesOf(next));
        assertLogHolds(provider(), log, expected, 7);
    }

    /** A gap on a never-written log (first offset above 0) is refused too. */
    @Test
    void appendWithGapOnEmptyLogIsRefused() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        LogSnapshot before = snapshot(provider(), log);
        assertConflict("append at 1..2 on a never-written log", () -> provider().append(log, f, batch(SEED, 1, 2,
                SMALL)));
        assertUnchanged("after the refused append at 1..2", before, snapshot(provider(), log));
        reopenAndRecover(log);
        assertSameData("after a refused gap, reopen + claim + reconcile", before, snapshot(provider(), log));
        assertThat(provider().state(log).committedTail()).as("tail of a log whose only append was refused")
                .isEqualTo(-1);
    }

    /** A batch overlapping committed offsets is refused unless it is that very batch (same id and range). */
    @Test
    void batchOverlappingCommittedOffsetsIsRefused() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> committed = appendBatches(provider(), f, 2, 5, SMALL); // 0..9
        LogSnapshot before = snapshot(provider(), log);
        assertConflict("stage at 8..12 over committed 0..9",
                () -> provider().stage(log, f, batch(SEED + 5, 8, 5, SMALL)));
        assertConflict("stage at 9..9 over committed 0..9",
                () -> provider().stage(log, f, batch(SEED + 5, 9, 1, SMALL)));
        assertConflict("stage at 5..9 (a committed batch's range) with another batch id",
                () -> provider().stage(log, f, batch(SEED + 5, 5, 5, SMALL)));
        assertConflict("stage at 0..1 over committed 0..9",
                () -> provider().stage(log, f, batch(SEED + 5, 0, 2, SMALL)));
        EncodedBatch sameIdOtherRange = EncodedBatch.of(5, committed.get(1).batchId(),
                committed.get(1).entries().subList(0, 3));
        assertConflict("stage at 5..7 with the batch id of committed batch 5..9",
                () -> provider().stage(log, f, sameIdOtherRange));
        assertConflict("append at 9..11 over committed 0..9",
                () -> provider().append(log, f, batch(SEED + 5, 9, 3, SMALL)));
        assertUnchanged("after refused overlapping stages", before, snapshot(provider(), log));
        reopenAndRecover(log);
        assertSameData("after refused overlapping stages, reopen + claim + reconcile", before,
                snapshot(provider(), log));
    }

    /** A batch overlapping a staged batch with another id (or another range) is refused; the first survives. */
    @Test
    void batchOverlappingAnotherStagedBatchIsRefused() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> committed = appendBatches(provider(), f, 1, 5, SMALL); // 0..4
        EncodedBatch a = batch(SEED + 1, 5, 5, SMALL);                           // 5..9
        provider().stage(log, f, a);
        LogSnapshot before = snapshot(provider(), log);
        assertConflict("stage at 7..11 over staged 5..9",
                () -> provider().stage(log, f, batch(SEED + 2, 7, 5, SMALL)));
        assertConflict("stage at 5..9 (staged batch's range) with another batch id",
                () -> provider().stage(log, f, batch(SEED + 2, 5, 5, SMALL)));
        assertConflict("stage at 9..9 over staged 5..9",
                () -> provider().stage(log, f, batch(SEED + 2, 9, 1, SMALL)));
        assertConflict("stage at 3..5 over committed 0..4 and staged 5..9",
                () -> provider().stage(log, f, batch(SEED + 2, 3, 3, SMALL)));
        EncodedBatch sameIdShorter = EncodedBatch.of(5, a.batchId(), a.entries().subList(0, 2));
        assertConflict("stage at 5..6 with the batch id of staged batch 5..9",
                () -> provider().stage(log, f, sameIdShorter));
        assertUnchanged("after refused stages over a staged batch", before, snapshot(provider(), log));
        provider().commit(log, f, 9);
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(committed.get(0), a), 9));
    }

    /** Stages of consecutive batches may complete in any order; one commit then covers them all. */
    @Test
    void stagesOfConsecutiveBatchesMayCompleteInAnyOrder() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch b1 = batch(SEED, 0, 3, SMALL);
        EncodedBatch b2 = batch(SEED, 3, 4, SMALL);
        EncodedBatch b3 = batch(SEED, 7, 2, SMALL);
        provider().stage(log, f, b3);
        provider().stage(log, f, b2);
        assertConflict("commit(8) with 3..8 staged but 0..2 not yet", () -> provider().commit(log, f, 8));
        provider().stage(log, f, b1);
        provider().commit(log, f, 8);
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(b1, b2, b3), 8));
    }

    /**
     * A commit through an offset with an unstaged offset at or below it is refused and commits nothing, not even
     * the staged batches below the gap; commit through the last offset before the gap then works.
     */
    @Test
    void commitOverAnUnstagedOffsetIsRefusedAndCommitsNothing() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> committed = appendBatches(provider(), f, 1, 2, SMALL); // 0..1
        EncodedBatch a = batch(SEED + 1, 2, 2, SMALL);   // 2..3
        EncodedBatch c = batch(SEED + 1, 6, 2, SMALL);   // 6..7, gap 4..5
        provider().stage(log, f, a);
        provider().stage(log, f, c);
        LogSnapshot before = snapshot(provider(), log);
        assertConflict("commit(7) over unstaged 4..5", () -> provider().commit(log, f, 7));
        assertUnchanged("after the refused commit(7)", before, snapshot(provider(), log));
        assertConflict("commit(5) over unstaged 4..5", () -> provider().commit(log, f, 5));
        assertConflict("commit(4) over unstaged 4", () -> provider().commit(log, f, 4));
        assertUnchanged("after refused commits over unstaged 4..5", before, snapshot(provider(), log));
        provider().commit(log, f, 3);
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(committed.get(0), a), 3));
    }

    /** Commit through an offset inside a staged batch is refused: batches are committed whole. */
    @Test
    void commitInsideAStagedBatchIsRefused() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = batch(SEED, 0, 4, SMALL);
        provider().stage(log, f, a);
        LogSnapshot before = snapshot(provider(), log);
        assertConflict("commit(0) inside staged batch 0..3", () -> provider().commit(log, f, 0));
        assertConflict("commit(2) inside staged batch 0..3", () -> provider().commit(log, f, 2));
        assertUnchanged("after refused commits inside a staged batch", before, snapshot(provider(), log));
        provider().commit(log, f, 3);
        assertLogHolds(provider(), log, entriesOf(a), 3);
    }

    /** Commit above the tail with nothing staged is refused. */
    @Test
    void commitWithNothingStagedIsRefused() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        assertConflict("commit(0) on an empty log with nothing staged", () -> provider().commit(log, f, 0));
        appendBatches(provider(), f, 1, 2, SMALL);
        LogSnapshot before = snapshot(provider(), log);
        assertConflict("commit(2) after tail 1 with nothing staged", () -> provider().commit(log, f, 2));
        assertConflict("commit(50) after tail 1 with nothing staged", () -> provider().commit(log, f, 50));
        assertUnchanged("after refused commits with nothing staged", before, snapshot(provider(), log));
    }
}
