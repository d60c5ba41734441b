package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import org.junit.jupiter.api.Test;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;

/** The committed tail: -1 when empty, never lower, moved up by a trim beyond it. */
public abstract class TailMonotonicityContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected TailMonotonicityContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** A never-written log has tail -1 and reads empty. */
    @Test
    void emptyLogHasTailMinusOne() {
        LogId log = log(0);
        assertThat(provider().state(log).committedTail()).as("tail of a never-written log").isEqualTo(-1);
        assertThat(provider().state(log).nextOffset()).as("next offset of a never-written log").isZero();
        Fence f = provider().claim(log);
        assertThat(provider().state(log).committedTail()).as("tail of an empty log after claim").isEqualTo(-1);
        provider().reconcile(log, f);
        assertThat(provider().state(log).committedTail()).as("tail of an empty log after reconcile").isEqualTo(-1);
        assertThat(provider().read(log, -1, 10, 100).committedTail()).as("ReadPage.committedTail of an empty log")
                .isEqualTo(-1);
    }

    /** The tail never decreases through partial trim, full trim, trim beyond the tail, reopen and reconcile. */
    @Test
    void tailNeverDecreases() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 2, 5, SMALL);                        // 0..9
        assertTail("after appending 0..9", 9, 9, -1);
        provider().trim(log, f, 4);
        assertTail("after trim(4)", 9, 9, 4);
        provider().reconcile(log, f);
        assertTail("after trim(4) and reconcile", 9, 9, 4);
        provider().trim(log, f, 9);                                       // full trim
        assertTail("after the full trim(9)", 9, 9, 9);
        assertThat(provider().state(log).lowestOffset()).as("lowest offset after the full trim(9)").isEqualTo(10);
        assertThat(provider().state(log).retainedEntries()).as("retained entries after the full trim(9)").isZero();
        f = reopenAndRecover(log);
        assertTail("after the full trim(9), reopen + claim + reconcile", 9, 9, 9);
        provider().trim(log, f, 20);                                      // beyond the tail
        assertTail("after trim(20) beyond tail 9", 20, 20, 20);
        assertThat(provider().state(log).lowestOffset()).as("lowest offset after trim(20) beyond the tail")
                .isEqualTo(21);
        provider().trim(log, f, 15);                                      // lower: no-op
        assertTail("after trim(15) below watermark 20", 20, 20, 20);
        f = reopenAndRecover(log);
        assertTail("after trim(20), reopen + claim + reconcile", 20, 20, 20);
        provider().reconcile(log, f);
        assertTail("after a second reconcile", 20, 20, 20);
        assertThat(readAll(provider(), log)).as("entries of a log trimmed through 20 beyond its tail").isEmpty();
    }

    /** A log trimmed empty through N reports tail N, refuses offset N and accepts N + 1. */
    @Test
    void logTrimmedEmptyContinuesAfterTheTrimPoint() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 4, SMALL);                        // 0..3
        provider().trim(log, f, 3);
        assertConflict("append at trimmed offset 3 of a log trimmed empty through 3",
                () -> provider().append(log, f, batch(SEED, 3, 2, SMALL)));
        assertConflict("append at trimmed offset 0 of a log trimmed empty through 3",
                () -> provider().append(log, f, batch(SEED, 0, 1, SMALL)));
        assertConflict("append at 5 (gap) of a log trimmed empty through 3",
                () -> provider().append(log, f, batch(SEED, 5, 1, SMALL)));
        assertTail("after refused appends to a log trimmed empty through 3", 3, 3, 3);
        EncodedBatch next = batch(SEED + 1, 4, 3, SMALL);
        provider().append(log, f, next);
        Fence g = assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(next), 6));
        provider().trim(log, g, 10);                                      // beyond the tail
        assertConflict("append at 10 after trim(10) beyond tail 6",
                () -> provider().append(log, g, batch(SEED, 10, 1, SMALL)));
        EncodedBatch after = batch(SEED + 2, 11, 2, SMALL);
        provider().append(log, g, after);
        assertLogHolds(provider(), log, entriesOf(after), 12);
    }

    /** A trim beyond the tail on a never-written log moves the tail to the trim point. */
    @Test
    void trimBeyondTailOfEmptyLog() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        provider().trim(log, f, 7);
        assertTail("after trim(7) of a never-written log", 7, 7, 7);
        assertThat(provider().read(log, -1, 10, 100).entries()).as("read of a never-written log trimmed through 7")
                .isEmpty();
        Fence g = reopenAndRecover(log);
        assertTail("after trim(7) of a never-written log, reopen + claim + reconcile", 7, 7, 7);
        EncodedBatch next = batch(SEED, 8, 2, SMALL);
        provider().append(log, g, next);
        assertLogHolds(provider(), log, entriesOf(next), 9);
    }

    /** Reconcile with staged batches above the tail never lowers (nor raises) the tail. */
    @Test
    void reconcileKeepsTheTail() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 3, SMALL);
        provider().stage(log, f, batch(SEED + 1, 3, 3, SMALL));
        ReconcileResult r = provider().reconcile(log, f);
        assertThat(r.committedTail()).as("reconcile with 0..2 committed and 3..5 staged: tail 2 (rolled back) or 5"
                + " (rolled forward)").isIn(2L, 5L);
        assertThat(provider().state(log).committedTail()).as("state().committedTail after reconcile")
                .isEqualTo(r.committedTail());
        long tail = r.committedTail();
        reopenAndRecover(log);
        assertThat(provider().state(log).committedTail()).as("tail %d after reconcile, reopen + claim + reconcile",
                tail).isEqualTo(tail);
    }

    private void assertTail(String when, long tail, long readTail, long watermark) {
        LogState s = provider().state(log(0));
        assertThat(s.committedTail()).as("%s: committed tail", when).isEqualTo(tail);
        assertThat(s.trimWatermark()).as("%s: trim watermark", when).isEqualTo(watermark);
        assertThat(provider().read(log(0), -1, 1, 1).committedTail()).as("%s: ReadPage.committedTail", when)
                .isEqualTo(readTail);
    }
}
