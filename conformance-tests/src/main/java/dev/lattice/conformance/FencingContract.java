package dev.lattice.conformance;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static dev.lattice.conformance.WalTestSupport.readFully;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Fencing: the newest claim wins, stale writers fail loudly and change nothing. The stale-writer scenario runs on
 * one instance with two fences, and on two instances over one storage (skipped, with the reason, when the provider
 * cannot open two instances at once).
 */
public abstract class FencingContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected FencingContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** Epochs strictly increase across claims and across reopen; state reports the current one. */
    @Test
    void epochsStrictlyIncreaseAcrossClaimsAndReopen() throws Exception {
        LogId log = log(0);
        assertThat(provider().state(log).epoch()).as("epoch of a never-claimed log").isZero();
        long last = 0;
        for (int i = 0; i < 3; i++) {
            Fence f = provider().claim(log);
            assertThat(f.log()).as("claim #%d: the fence's log", i).isEqualTo(log);
            assertThat(f.epoch()).as("claim #%d: epoch must be above the previous %d", i, last).isGreaterThan(last);
            assertThat(provider().state(log).epoch()).as("claim #%d: state().epoch must be the new fence's", i)
                    .isEqualTo(f.epoch());
            last = f.epoch();
        }
        Fence g = provider().claim(log);
        appendBatches(provider(), g, 1, 2, SMALL);
        last = g.epoch();
        for (int i = 0; i < 2; i++) {
            reopen();
            assertThat(provider().state(log).epoch()).as("reopen #%d: epoch must survive reopen", i).isEqualTo(last);
            Fence f = provider().claim(log);
            assertThat(f.epoch()).as("claim after reopen #%d: epoch must be above %d", i, last).isGreaterThan(last);
            last = f.epoch();
        }
        assertThat(provider().state(log(1)).epoch()).as("claims on one log leave others alone").isZero();
    }

    /** A claim changes neither committed data nor checkpoints. */
    @Test
    void claimChangesNoData() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 2, 2, SMALL);
        provider().checkpoints().publish(log, f, 1, 0, bytes(randomBytes(SEED, 100)));
        LogSnapshot before = snapshot(provider(), log);
        Fence g = provider().claim(log);
        assertThat(g.epoch()).as("a new claim's epoch must be above the current %d", f.epoch())
                .isGreaterThan(f.epoch());
        assertSameData("after a claim", before, snapshot(provider(), log));
    }

    /** The scenario on one provider instance with two fences. */
    @Test
    void staleWriterChangesNothingOnOneInstance() {
        staleWriterChangesNothing(provider(), provider());
    }

    /**
     * Variant for providers that can open two instances over one storage at once
     * ({@link ProviderUnderTest#supportsConcurrentInstances()}): the scenario with the stale and the new writer on two
     * instances, like two processes.
     */
    @Test
    void staleWriterChangesNothingAcrossInstances() throws Exception {
        Assumptions.assumeTrue(storage().supportsConcurrentInstances(), () -> "variant for providers that open two "
                + "instances over one storage at once; " + provider().describe().name() + "'s ProviderUnderTest"
                + ".supportsConcurrentInstances() is false (an exclusive lock), so the scenario ran on one instance"
                + " only, in staleWriterChangesNothingOnOneInstance");
        staleWriterChangesNothing(provider(), fixture().openSecondInstance());
    }

    /** A stale fence obtained before a reopen is stale after it too. */
    @Test
    void staleFenceStaysStaleAcrossReopen() throws Exception {
        LogId log = log(0);
        Fence old = claimAndReconcile(provider(), log);
        appendBatches(provider(), old, 1, 2, SMALL);
        Fence current = reopenAndRecover(log);
        LogSnapshot before = snapshot(provider(), log);
        assertFenced("commit(1) with the fence from before reopen", () -> provider().commit(log, old, 1));
        assertFenced("trim(0) with the fence from before reopen", () -> provider().trim(log, old, 0));
        assertFenced("reconcile with the fence from before reopen", () -> provider().reconcile(log, old));
        assertFenced("checkpoint publish with the fence from before reopen",
                () -> provider().checkpoints().publish(log, old, 1, 0, bytes(new byte[3])));
        staleStage(provider(), log, old, batch(SEED + 9, 2, 2, SMALL));
        assertFenced("commit(3) of a stage with the fence from before reopen", () -> provider().commit(log, old, 3));
        assertUnchanged("after the stale writer's calls", before, snapshot(provider(), log));
        EncodedBatch next = batch(SEED + 3, 2, 2, SMALL);
        provider().append(log, current, next);
        List<LogEntry> expected = new ArrayList<>(before.entries());
        expected.addAll(entriesOf(next));
        assertLogHolds(provider(), log, expected, 3);
    }

    /** The stale writer's exception names the epochs. */
    @Test
    void fencedExceptionNamesTheStaleEpoch() {
        LogId log = log(0);
        Fence old = provider().claim(log);
        Fence current = provider().claim(log);
        Throwable t = catchThrowable(() -> provider().commit(log, old, -1));
        assertThat(t).as("commit(-1) with stale epoch %d (current %d)", old.epoch(), current.epoch())
                .isInstanceOf(FencedException.class);
        FencedException e = (FencedException) t;
        assertThat(e.staleEpoch()).as("FencedException.staleEpoch() must be the caller's epoch").isEqualTo(old.epoch());
        assertThat(e.currentEpoch()).as("FencedException.currentEpoch() must be the current epoch or -1 (unknown)")
                .isIn(-1L, current.epoch());
        assertThat(e.log()).as("FencedException.log()").isEqualTo(log);
    }

    /**
     * Writer A (on {@code pa}) is replaced by writer B (on {@code pb}) while A is stalled; A wakes up and tries
     * everything. B's committed data, staged batches, checkpoints and trims must be untouched, and every A call that
     * must be fenced is.
     */
    private void staleWriterChangesNothing(WalStorageProvider pa, WalStorageProvider pb) {
        LogId log = log(0);
        Fence fa = claimAndReconcile(pa, log);
        List<EncodedBatch> base = appendBatches(pa, fa, 2, 3, SMALL);               // 0..5
        pa.checkpoints().publish(log, fa, 2, 1, bytes(randomBytes(SEED, 1000)));
        EncodedBatch aPending = batch(SEED + 11, 6, 3, SMALL);                       // A staged 6..8 before B
        StagedBatch aReceipt = pa.stage(log, fa, aPending);

        Fence fb = claimAndReconcile(pb, log);
        assertThat(fb.epoch()).as("B's epoch must be above A's %d", fa.epoch()).isGreaterThan(fa.epoch());
        // A stalled in the middle of a stage: its stage lands after B's claim and reconcile.
        staleStage(pa, log, fa, batch(SEED + 12, 6, 4, SMALL));                      // 6..9
        // B stages over the offsets A used: must work (older-epoch leftovers give way).
        EncodedBatch bStaged = batch(SEED + 13, 6, 2, SMALL);                        // 6..7
        pb.stage(log, fb, bStaged);
        LogSnapshot before = snapshot(pb, log);

        // Every fenced call of A fails and changes nothing.
        assertFenced("stale A's commit(7) over B's staged 6..7", () -> pa.commit(log, fa, 7));
        assertFenced("stale A's commit(8) over its own staged 6..8", () -> pa.commit(log, fa, 8));
        assertFenced("stale A's commit(5) at the tail", () -> pa.commit(log, fa, 5));
        assertFenced("stale A's commit(-1)", () -> pa.commit(log, fa, -1));
        assertFenced("stale A's trim(3)", () -> pa.trim(log, fa, 3));
        assertFenced("stale A's trim(100)", () -> pa.trim(log, fa, 100));
        assertFenced("stale A's reconcile", () -> pa.reconcile(log, fa));
        assertFenced("stale A's checkpoint publish through 5",
                () -> pa.checkpoints().publish(log, fa, 5, 1, bytes(randomBytes(SEED + 1, 2000))));
        // A's abort and further stages: refused at once or without effect on B's batch.
        try {
            pa.abort(log, fa, aReceipt);
        } catch (FencedException expected) {
            // allowed: the provider can tell
        }
        try {
            pa.abort(log, fa, new StagedBatch(log, fa.epoch(), 6, 7, bStaged.batchId()));
        } catch (FencedException expected) {
            // allowed
        }
        staleStage(pa, log, fa, batch(SEED + 14, 6, 2, SMALL));                      // exactly B's offsets
        staleStage(pa, log, fa, batch(SEED + 15, 8, 3, SMALL));                      // above B's staged batch
        assertFenced("stale A's commit(10) over its stages 8..10", () -> pa.commit(log, fa, 10));
        assertUnchanged("after stale A's commits, trims, reconcile, publish, aborts and stages", before,
                snapshot(pb, log));

        // B's staged batch is intact: B commits it and gets exactly its own bytes.
        pb.commit(log, fb, 7);
        List<LogEntry> expected = entriesOf(base.get(0), base.get(1), bStaged);
        assertLogHolds(pb, log, expected, 7);
        // B stages where A's leftovers may lie (8..10) and commits.
        EncodedBatch bNext = batch(SEED + 16, 8, 3, SMALL);
        pb.stage(log, fb, bNext);
        pb.commit(log, fb, 10);
        expected = entriesOf(base.get(0), base.get(1), bStaged, bNext);
        assertLogHolds(pb, log, expected, 10);

        // B checkpoints and trims; A, still stalled, stages at committed and trimmed offsets and publishes.
        byte[] bCheckpoint = randomBytes(SEED + 2, 3000);
        CheckpointInfo bInfo = pb.checkpoints().publish(log, fb, 7, 2, bytes(bCheckpoint));
        assertThat(bInfo.epoch()).as("B's checkpoint must carry B's epoch").isEqualTo(fb.epoch());
        pb.trim(log, fb, 4);
        LogSnapshot afterTrim = snapshot(pb, log);
        staleStage(pa, log, fa, batch(SEED + 17, 2, 3, SMALL));                      // below the watermark
        staleStage(pa, log, fa, batch(SEED + 18, 9, 3, SMALL));                      // over committed 9..10
        staleStage(pa, log, fa, batch(SEED + 19, 11, 3, SMALL));                     // right after the tail
        assertFenced("stale A's commit(13) over its stage 11..13", () -> pa.commit(log, fa, 13));
        assertFenced("stale A's checkpoint publish through 10",
                () -> pa.checkpoints().publish(log, fa, 10, 1, bytes(new byte[10])));
        assertFenced("stale A's trim(10)", () -> pa.trim(log, fa, 10));
        assertUnchanged("after B's trim(4), stale A's stages, commit, publish and trim", afterTrim,
                snapshot(pb, log));
        assertSameBytes("B's checkpoint through 7 after stale A's calls", readFully(pb.checkpoints().open(log, bInfo)),
                bCheckpoint);

        // B continues densely right after its tail, over whatever A left.
        EncodedBatch bLast = batch(SEED + 20, 11, 2, SMALL);
        pb.append(log, fb, bLast);
        List<LogEntry> finalEntries = new ArrayList<>(afterTrim.entries());
        finalEntries.addAll(entriesOf(bLast));
        assertLogHolds(pb, log, finalEntries, 12);

        // A stale stage right above B's tail is never committed by B's commit (it is not staged under B's epoch),
        // and B can stage those offsets itself.
        staleStage(pa, log, fa, batch(SEED + 21, 13, 2, SMALL));                     // 13..14
        assertConflict("B's commit(14) over 13..14 staged only by stale A", () -> pb.commit(log, fb, 14));
        assertLogHolds(pb, log, finalEntries, 12);
        EncodedBatch bAfter = batch(SEED + 22, 13, 2, SMALL);
        pb.append(log, fb, bAfter);
        finalEntries.addAll(entriesOf(bAfter));
        assertLogHolds(pb, log, finalEntries, 14);
        assertThat(pa.state(log).epoch()).as("the stale writer's instance must report B's epoch").isEqualTo(fb.epoch());
        assertEntries("entries read through the stale writer's instance", readAll(pa, log), finalEntries);
    }
}
