package dev.lattice.conformance;

import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.SpiOperation;
import dev.lattice.testkit.InjectedFaultException;
import dev.lattice.testkit.FaultInjectingProvider.FaultRule;
import dev.lattice.testkit.FaultInjectingProvider.Timing;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Faults at each step, injected with {@link FaultInjectingProvider} around the provider under test: a request
 * that fails before it lands, or lands and loses its response; then recovery (reopen, claim, reconcile) or a
 * retry with the same batch id. (A fault on a checkpoint publish is {@link CheckpointStoreContract}'s.)
 */
public abstract class FaultsContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected FaultsContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /**
     * A fault at stage or commit, then reopen, claim and reconcile: every earlier committed entry is intact, the
     * batch is all or nothing (all if the commit landed, nothing if the stage never did), and the next append
     * continues densely.
     */
    @ParameterizedTest(name = "{0} fails {1}")
    @CsvSource({"STAGE, BEFORE", "STAGE, AFTER", "COMMIT, BEFORE", "COMMIT, AFTER"})
    void faultThenRecoveryIsAllOrNothing(SpiOperation op, Timing timing) throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> base = appendBatches(provider(), f, 2, 3, SMALL);     // 0..5
        FaultInjectingProvider faulty = new FaultInjectingProvider(provider(), SEED);
        faulty.inject(new FaultRule(op, timing, Duration.ZERO, 1, 0, 1.0, log));
        EncodedBatch b = batch(SEED + 1, 6, 4, SMALL);
        Throwable t = catchThrowable(() -> {
            faulty.stage(log, f, b);
            faulty.commit(log, f, b.lastOffset());
        });
        assertThat(t).as("stage + commit of 6..9 with one injected fault %s %s", op, timing)
                .isInstanceOf(InjectedFaultException.class);
        assertThat(faulty.injectedFaultCount()).as("faults injected").isEqualTo(1);
        // The writer crashes here: no abort, no retry.
        Fence g = reopenAndRecover(log);
        int kept = assertBasePlusWholeBatchPrefix(provider(), log, entriesOf(base), List.of(b));
        if (op == SpiOperation.COMMIT && timing == Timing.AFTER) {
            assertThat(kept).as("a commit that landed is never rolled back").isEqualTo(1);
        }
        if (op == SpiOperation.STAGE && timing == Timing.BEFORE) {
            assertThat(kept).as("a stage that never reached the provider stores nothing").isZero();
        }
        continueDensely(log, g, base, kept == 1 ? List.of(b) : List.of());
    }

    /**
     * A fault at stage or commit, then the engine's retry with the same batch id on the same writer: success,
     * and the batch is stored once.
     */
    @ParameterizedTest(name = "{0} fails {1}")
    @CsvSource({"STAGE, BEFORE", "STAGE, AFTER", "COMMIT, BEFORE", "COMMIT, AFTER"})
    void faultThenRetryWithTheSameBatchStoresItOnce(SpiOperation op, Timing timing) throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> base = appendBatches(provider(), f, 2, 3, SMALL);
        FaultInjectingProvider faulty = new FaultInjectingProvider(provider(), SEED);
        faulty.inject(new FaultRule(op, timing, Duration.ZERO, 2, 0, 1.0, log));
        EncodedBatch b = batch(SEED + 1, 6, 4, SMALL);
        int attempts = 0;
        while (true) {
            attempts++;
            try {
                faulty.stage(log, f, b);
                faulty.commit(log, f, b.lastOffset());
                break;
            } catch (InjectedFaultException e) {
                assertThat(attempts).as("attempts of stage + commit of 6..9 under 2 faults %s %s", op, timing)
                        .isLessThan(5);
            }
        }
        assertThat(attempts).as("attempts of stage + commit of 6..9: 2 faulted, the third must succeed")
                .isEqualTo(3);
        List<EncodedBatch> expected = new ArrayList<>(base);
        expected.add(b);
        assertLogHolds(provider(), log, entriesOf(expected), 9);
        continueDensely(log, f, base, List.of(b));
    }

    /**
     * Several staged batches, then a fault on the commit that covers them all: after recovery the log holds the
     * committed entries plus a whole-batch prefix of the staged ones (all of them if the commit landed).
     */
    @ParameterizedTest
    @EnumSource(Timing.class)
    void faultOnACommitOfSeveralBatches(Timing timing) throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> base = appendBatches(provider(), f, 1, 3, SMALL);     // 0..2
        FaultInjectingProvider faulty = new FaultInjectingProvider(provider(), SEED);
        EncodedBatch b1 = batch(SEED + 1, 3, 2, SMALL);
        EncodedBatch b2 = batch(SEED + 1, 5, 3, SMALL);
        EncodedBatch b3 = batch(SEED + 1, 8, 1, SMALL);
        faulty.stage(log, f, b2);
        faulty.stage(log, f, b1);
        faulty.stage(log, f, b3);
        faulty.inject(timing == Timing.BEFORE ? FaultRule.failBefore(SpiOperation.COMMIT)
                : FaultRule.failAfter(SpiOperation.COMMIT));
        assertThatThrownBy(() -> faulty.commit(log, f, 8)).as("commit(8) with an injected fault %s", timing)
                .isInstanceOf(InjectedFaultException.class);
        Fence g = reopenAndRecover(log);
        int kept = assertBasePlusWholeBatchPrefix(provider(), log, entriesOf(base), List.of(b1, b2, b3));
        if (timing == Timing.AFTER) {
            assertThat(kept).as("a commit of 3..8 that landed is never rolled back: all 3 staged batches kept")
                    .isEqualTo(3);
        }
        continueDensely(log, g, base, List.of(b1, b2, b3).subList(0, kept));
    }

    /** A trim whose response is lost took effect; one that failed before did not; both can be repeated. */
    @ParameterizedTest
    @EnumSource(Timing.class)
    void faultOnTrim(Timing timing) throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> base = appendBatches(provider(), f, 2, 3, SMALL);     // 0..5
        FaultInjectingProvider faulty = new FaultInjectingProvider(provider(), SEED);
        faulty.inject(new FaultRule(SpiOperation.TRIM, timing, Duration.ZERO, 1, 0, 1.0, null));
        assertThatThrownBy(() -> faulty.trim(log, f, 3)).as("trim(3) with an injected fault %s", timing)
                .isInstanceOf(InjectedFaultException.class);
        Fence g = reopenAndRecover(log);
        List<LogEntry> all = entriesOf(base);
        assertLogHolds(provider(), log, timing == Timing.AFTER ? all.subList(4, 6) : all, 5);
        provider().trim(log, g, 3);
        assertLogHolds(provider(), log, all.subList(4, 6), 5);
    }

    /** A claim whose response was lost still fenced the older writer; the next claim is higher still. */
    @Test
    void lostClaimResponseStillFences() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 2, SMALL);
        FaultInjectingProvider faulty = new FaultInjectingProvider(provider(), SEED);
        faulty.inject(FaultRule.failAfter(SpiOperation.CLAIM));
        assertThatThrownBy(() -> faulty.claim(log)).as("claim with its response lost")
                .isInstanceOf(InjectedFaultException.class);
        long moved = provider().state(log).epoch();
        assertThat(moved).as("epoch after a claim whose response was lost must be above %d", f.epoch())
                .isGreaterThan(f.epoch());
        assertFenced("the older writer's commit(1) after a claim whose response was lost",
                () -> provider().commit(log, f, 1));
        Fence g = faulty.claim(log);
        assertThat(g.epoch()).as("the next claim's epoch must be above %d", moved).isGreaterThan(moved);
        faulty.reconcile(log, g);
        EncodedBatch next = batch(SEED + 1, 2, 2, SMALL);
        faulty.append(log, g, next);
        assertThat(readAll(provider(), log)).as("entries after the new writer appended 2..3 to 0..1").hasSize(4);
    }

    /**
     * A writer that retries every transient failure with the same batch, under random faults before and after
     * stage and commit, ends with every batch exactly once, in order.
     */
    @Test
    void randomFaultsWithRetriesLoseAndDuplicateNothing() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        FaultInjectingProvider faulty = new FaultInjectingProvider(provider(), SEED);
        for (SpiOperation op : List.of(SpiOperation.STAGE, SpiOperation.COMMIT)) {
            for (Timing timing : Timing.values()) {
                faulty.inject(new FaultRule(op, timing, Duration.ZERO, -1, 0, 0.15, null));
            }
        }
        List<EncodedBatch> written = new ArrayList<>();
        long next = 0;
        for (int i = 0; i < 30; i++) {
            EncodedBatch b = batch(SEED + i, next, 1 + i % 3, 20);
            for (int attempt = 1; ; attempt++) {
                try {
                    faulty.stage(log, f, b);
                    faulty.commit(log, f, b.lastOffset());
                    break;
                } catch (InjectedFaultException e) {
                    assertThat(attempt).as("attempts for batch %d", i).isLessThan(50);
                }
            }
            written.add(b);
            next = b.lastOffset() + 1;
        }
        assertThat(faulty.injectedFaultCount()).as("faults injected").isPositive();
        long tail = next - 1;
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(written), tail));
    }

    private void continueDensely(LogId log, Fence fence, List<EncodedBatch> base, List<EncodedBatch> kept) {
        long tail = provider().state(log).committedTail();
        EncodedBatch next = batch(SEED + 77, tail + 1, 2, SMALL);
        assertConflict("append at " + (tail + 2) + " after recovered tail " + tail,
                () -> provider().append(log, fence, batch(SEED + 78, tail + 2, 2, SMALL)));
        provider().append(log, fence, next);
        List<EncodedBatch> expected = new ArrayList<>(base);
        expected.addAll(kept);
        expected.add(next);
        assertLogHolds(provider(), log, entriesOf(expected), next.lastOffset());
    }
}
