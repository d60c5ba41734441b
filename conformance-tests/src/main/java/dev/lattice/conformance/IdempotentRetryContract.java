package dev.lattice.conformance;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.StagedBatch;
import org.junit.jupiter.api.Test;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static org.assertj.core.api.Assertions.assertThat;

/** A retried write that had landed (same batch id) is success and is stored once. */
public abstract class IdempotentRetryContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected IdempotentRetryContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** Staging the same batch twice is success; it is committed and stored once. */
    @Test
    void stagingTheSameBatchTwiceStoresItOnce() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = batch(SEED, 0, 4, SMALL);
        StagedBatch r1 = provider().stage(log, f, a);
        StagedBatch r2 = provider().stage(log, f, batch(SEED, 0, 4, SMALL)); // equal rebuild: same id and bytes
        assertThat(r2).as("receipt of the retried stage of 0..3 (same batch id and bytes) must equal the first")
                .isEqualTo(r1);
        provider().commit(log, f, 3);
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(a), 3));
    }

    /** Re-staging a batch that was committed meanwhile (same id) is success, and the commit is a no-op. */
    @Test
    void reStagingACommittedBatchIsSuccessAndCommitIsANoOp() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = batch(SEED, 0, 4, SMALL);
        EncodedBatch b = batch(SEED, 4, 2, SMALL);
        provider().append(log, f, a);
        provider().append(log, f, b);
        LogSnapshot before = snapshot(provider(), log);
        provider().stage(log, f, a);
        provider().commit(log, f, a.lastOffset());
        provider().stage(log, f, b);
        provider().commit(log, f, b.lastOffset());
        provider().append(log, f, b);   // a whole retried append
        assertUnchanged("after re-staging and re-committing committed batches 0..3 and 4..5", before,
                snapshot(provider(), log));
        Fence f2 = reopenAndRecover(log);
        provider().append(log, f2, b);  // a retry by the next writer after recovery
        assertSameData("after the next writer retried append 4..5 after recovery", before,
                snapshot(provider(), log));
    }

    /** The same offsets with another batch id are a conflict, staged or committed. */
    @Test
    void sameOffsetsWithAnotherBatchIdConflict() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = batch(SEED, 0, 3, SMALL);
        provider().append(log, f, a);
        EncodedBatch sameBytesOtherId = EncodedBatch.of(0, BatchId.random(), a.entries());
        assertConflict("stage of committed 0..2's bytes with another batch id",
                () -> provider().stage(log, f, sameBytesOtherId));
        EncodedBatch b = batch(SEED, 3, 3, SMALL);
        provider().stage(log, f, b);
        assertConflict("stage of staged 3..5's bytes with another batch id",
                () -> provider().stage(log, f, EncodedBatch.of(3, BatchId.random(), b.entries())));
        provider().commit(log, f, 5);
        assertLogHolds(provider(), log, entriesOf(a, b), 5);
    }

    /** Retrying each step of a two-phase append any number of times gives one copy of the batch. */
    @Test
    void retryingEveryStepGivesOneCopy() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = batch(SEED, 0, 3, SMALL);
        EncodedBatch b = batch(SEED, 3, 3, SMALL);
        for (int i = 0; i < 3; i++) {
            provider().stage(log, f, b);
            provider().stage(log, f, a);
        }
        for (int i = 0; i < 3; i++) {
            provider().commit(log, f, 5);
            provider().stage(log, f, a);
            provider().stage(log, f, b);
        }
        assertLogHolds(provider(), log, entriesOf(a, b), 5);
    }
}
