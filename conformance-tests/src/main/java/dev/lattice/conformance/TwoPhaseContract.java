package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.StagedBatch;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Stage then commit: invisible until committed, committed exactly up to the offset asked, aborts drop. A staged,
 * uncommitted batch across reopen is either rolled back or rolled forward, whole; the two variants are separate
 * tests, and the one the provider did not take is reported as skipped.
 */
public abstract class TwoPhaseContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected TwoPhaseContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** A staged batch is invisible to read and state until committed. */
    @Test
    void stagedBatchesAreInvisible() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> committed = appendBatches(provider(), f, 1, 3, SMALL);
        LogSnapshot before = snapshot(provider(), log);
        StagedBatch receipt = provider().stage(log, f, batch(SEED + 1, 3, 4, SMALL));
        assertThat(receipt.log()).as("receipt of stage 3..6: log").isEqualTo(log);
        assertThat(receipt.epoch()).as("receipt of stage 3..6: epoch of the stager's fence").isEqualTo(f.epoch());
        assertThat(receipt.firstOffset()).as("receipt of stage 3..6: first offset").isEqualTo(3);
        assertThat(receipt.lastOffset()).as("receipt of stage 3..6: last offset").isEqualTo(6);
        assertUnchanged("after stage 3..6 (not committed)", before, snapshot(provider(), log));
        ReadPage page = provider().read(log, 2, 10, 1 << 20);
        assertThat(page.entries()).as("read after tail 2 with 3..6 staged, not committed, must be empty").isEmpty();
        assertThat(page.committedTail()).as("ReadPage.committedTail with 3..6 staged, not committed").isEqualTo(2);
        assertLogHolds(provider(), log, entriesOf(committed), 2);
    }

    /** commit(through) publishes exactly the staged batches up to through, in order; later ones stay invisible. */
    @Test
    void commitPublishesExactlyUpToThrough() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = batch(SEED, 0, 2, SMALL);
        EncodedBatch b = variedBatch(SEED, 2, 5, 11);
        EncodedBatch c = batch(SEED, 7, 3, SMALL);
        EncodedBatch d = batch(SEED, 10, 1, SMALL);
        provider().stage(log, f, a);
        provider().stage(log, f, b);
        provider().stage(log, f, c);
        provider().stage(log, f, d);
        provider().commit(log, f, 6);
        assertLogHolds(provider(), log, entriesOf(a, b), 6);
        assertThat(provider().read(log, 6, 100, 1 << 20).entries())
                .as("read after 6 once commit(6) published 0..6 and 7..10 stay staged must be empty").isEmpty();
        provider().commit(log, f, 9);
        assertLogHolds(provider(), log, entriesOf(a, b, c), 9);
        provider().commit(log, f, 10);
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(a, b, c, d), 10));
    }

    /** Committing an offset at or below the tail is a no-op, any number of times. */
    @Test
    void commitIsIdempotent() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        provider().commit(log, f, -1);
        assertThat(provider().state(log).committedTail()).as("tail after commit(-1) on an empty log").isEqualTo(-1);
        EncodedBatch a = batch(SEED, 0, 3, SMALL);
        provider().stage(log, f, a);
        provider().commit(log, f, 2);
        LogSnapshot after = snapshot(provider(), log);
        provider().commit(log, f, 2);
        provider().commit(log, f, 2);
        provider().commit(log, f, 0);
        provider().commit(log, f, -1);
        assertUnchanged("after repeated commits at or below tail 2", after, snapshot(provider(), log));
        assertLogHolds(provider(), log, entriesOf(a), 2);
    }

    /** abort drops a staged batch; other content can then be staged and committed at those offsets. */
    @Test
    void abortDropsAStagedBatch() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> committed = appendBatches(provider(), f, 1, 2, SMALL);
        EncodedBatch a = batch(SEED + 1, 2, 3, SMALL);
        StagedBatch receipt = provider().stage(log, f, a);
        LogSnapshot before = snapshot(provider(), log);
        provider().abort(log, f, receipt);
        assertUnchanged("after abort of staged 2..4", before, snapshot(provider(), log));
        assertConflict("commit(4) after staged 2..4 was aborted", () -> provider().commit(log, f, 4));
        provider().abort(log, f, receipt); // already aborted: ignored
        EncodedBatch other = batch(SEED + 2, 2, 2, SMALL * 2);
        provider().stage(log, f, other);
        provider().commit(log, f, 3);
        assertLogHolds(provider(), log, entriesOf(committed.get(0), other), 3);
        provider().abort(log, f, receipt); // now overlaps committed data: still ignored
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(committed.get(0), other), 3));
    }

    /** abort of a committed batch's receipt changes nothing. */
    @Test
    void abortOfACommittedBatchIsIgnored() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = batch(SEED, 0, 3, SMALL);
        StagedBatch receipt = provider().stage(log, f, a);
        provider().commit(log, f, 2);
        LogSnapshot before = snapshot(provider(), log);
        provider().abort(log, f, receipt);
        assertUnchanged("after abort of the receipt of committed batch 0..2", before, snapshot(provider(), log));
    }

    /** abort drops only the batch it names: a neighbouring staged batch still commits. */
    @Test
    void abortLeavesOtherStagedBatches() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = batch(SEED, 0, 2, SMALL);
        EncodedBatch b = batch(SEED, 2, 2, SMALL);
        provider().stage(log, f, a);
        StagedBatch rb = provider().stage(log, f, b);
        provider().abort(log, f, rb);
        provider().commit(log, f, 1);
        assertLogHolds(provider(), log, entriesOf(a), 1);
        assertConflict("commit(3) after staged 2..3 was aborted", () -> provider().commit(log, f, 3));
    }

    /**
     * Variant "rolled back": two batches staged and never committed, then close, reopen, claim and reconcile; the
     * log holds none of them and the next append continues densely after the old tail. Required of a provider with
     * {@link ProviderFeature#DEFERRED_STAGE} (its staged batches live in memory only); for any other provider it
     * applies when it rolled back, and is reported as skipped when it rolled forward.
     */
    @Test
    void stagedBatchesAcrossReopenAreRolledBack() throws Exception {
        StagedAcrossReopen r = stageTwoBatchesAndReopen();
        if (declares(ProviderFeature.DEFERRED_STAGE)) {
            assertThat(r.kept).as("a DEFERRED_STAGE provider keeps staged batches in memory only: after reopen +"
                    + " claim + reconcile none of the 2 staged batches (6..9, 10..12) may be committed").isZero();
        } else {
            Assumptions.assumeTrue(r.kept == 0, () -> "variant for a provider that rolls staged batches back; "
                    + provider().describe().name() + " rolled forward " + r.kept + " of 2 staged batches (allowed"
                    + " without DEFERRED_STAGE), verified by stagedBatchesAcrossReopenAreRolledForward");
        }
        continueDensely(r);
    }

    /**
     * Variant "rolled forward": two batches staged and never committed, then close, reopen, claim and reconcile;
     * reconcile committed a whole-batch prefix of them (the first, or both), never a part, and the next append
     * continues densely. Does not apply to {@link ProviderFeature#DEFERRED_STAGE}; for any other provider it applies
     * when it rolled forward, and is reported as skipped when it rolled back.
     */
    @Test
    void stagedBatchesAcrossReopenAreRolledForward() throws Exception {
        assumeNotDeclared(ProviderFeature.DEFERRED_STAGE, "its staged batches live in memory only and must be rolled"
                + " back, verified by stagedBatchesAcrossReopenAreRolledBack");
        StagedAcrossReopen r = stageTwoBatchesAndReopen();
        Assumptions.assumeTrue(r.kept > 0, () -> "variant for a provider that rolls staged batches forward; "
                + provider().describe().name() + " rolled both staged batches back (allowed), verified by"
                + " stagedBatchesAcrossReopenAreRolledBack");
        assertThat(provider().state(log(0)).committedTail())
                .as("tail after rolling forward a whole-batch prefix of 6..9, 10..12").isIn(9L, 12L);
        continueDensely(r);
    }

    /** What {@link #stageTwoBatchesAndReopen()} left: the committed and pending batches, the new fence, kept count. */
    private record StagedAcrossReopen(List<EncodedBatch> committed, List<EncodedBatch> pending, Fence fence,
                                      int kept) {
    }

    /** Appends 0..5, stages 6..9 and 10..12, reopens and recovers; asserts a whole-batch prefix is visible. */
    private StagedAcrossReopen stageTwoBatchesAndReopen() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> committed = appendBatches(provider(), f, 2, 3, SMALL);
        EncodedBatch pending1 = batch(SEED + 1, 6, 4, SMALL);
        EncodedBatch pending2 = batch(SEED + 1, 10, 3, SMALL);
        provider().stage(log, f, pending1);
        provider().stage(log, f, pending2);
        Fence f2 = reopenAndRecover(log);
        List<EncodedBatch> pending = List.of(pending1, pending2);
        int kept = assertBasePlusWholeBatchPrefix(provider(), log, entriesOf(committed), pending);
        return new StagedAcrossReopen(committed, pending, f2, kept);
    }

    /** After recovery: the tail is at a batch boundary, a gap is refused, the next append lands densely. */
    private void continueDensely(StagedAcrossReopen r) {
        LogId log = log(0);
        LogState s = provider().state(log);
        assertThat(s.committedTail()).as("tail after recovery: 5 (rolled back) or the end of a whole staged batch")
                .isIn(5L, 9L, 12L);
        EncodedBatch next = batch(SEED + 2, s.nextOffset(), 2, SMALL);
        assertConflict("append at " + (s.nextOffset() + 1) + " after recovered tail " + s.committedTail(),
                () -> provider().append(log, r.fence, batch(SEED + 3, s.nextOffset() + 1, 2, SMALL)));
        provider().append(log, r.fence, next);
        List<EncodedBatch> expected = new ArrayList<>(r.committed);
        expected.addAll(r.pending.subList(0, r.kept));
        expected.add(next);
        assertLogHolds(provider(), log, entriesOf(expected), next.lastOffset());
    }

    /**
     * A batch staged by a writer that is then replaced (a new claim, same instance) never becomes visible
     * through the new writer's commit; after reconcile the new writer continues densely.
     */
    @Test
    void stagedBatchOfAReplacedWriterIsNotCommittedByTheNewOne() {
        LogId log = log(0);
        Fence f1 = claimAndReconcile(provider(), log);
        List<EncodedBatch> committed = appendBatches(provider(), f1, 1, 3, SMALL);
        EncodedBatch pending = batch(SEED + 1, 3, 3, SMALL);
        provider().stage(log, f1, pending);
        Fence f2 = claimAndReconcile(provider(), log);
        assertConflict("the new writer's commit(5) over 3..5 staged by the replaced writer",
                () -> provider().commit(log, f2, 5));
        assertLogHolds(provider(), log, entriesOf(committed), 2);
        EncodedBatch next = batch(SEED + 2, 3, 2, SMALL);
        provider().append(log, f2, next);
        assertLogHolds(provider(), log, entriesOf(committed.get(0), next), 4);
    }
}
