package dev.lattice.conformance;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.StagedBatch;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bad arguments are refused with the SPI's exceptions before any I/O. */
public abstract class ArgumentValidationContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected ArgumentValidationContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** Nulls throw NullPointerException, on every method. */
    @Test
    void nullsAreRefused() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 2, SMALL);
        EncodedBatch b = batch(SEED, 2, 1, SMALL);
        StagedBatch receipt = provider().stage(log, f, b);
        CheckpointInfo info = provider().checkpoints().publish(log, f, 1, 0, bytes(new byte[1]));
        LogSnapshot before = snapshot(provider(), log);
        CheckpointStore cs = provider().checkpoints();
        List<NamedCall> calls = List.of(
                call("claim(null)", () -> provider().claim(null)),
                call("stage(null, f, b)", () -> provider().stage(null, f, b)),
                call("stage(log, null, b)", () -> provider().stage(log, null, b)),
                call("stage(log, f, null)", () -> provider().stage(log, f, null)),
                call("commit(null, f, 2)", () -> provider().commit(null, f, 2)),
                call("commit(log, null, 2)", () -> provider().commit(log, null, 2)),
                call("abort(null, f, receipt)", () -> provider().abort(null, f, receipt)),
                call("abort(log, null, receipt)", () -> provider().abort(log, null, receipt)),
                call("abort(log, f, null)", () -> provider().abort(log, f, null)),
                call("append(null, f, b)", () -> provider().append(null, f, b)),
                call("append(log, null, b)", () -> provider().append(log, null, b)),
                call("append(log, f, null)", () -> provider().append(log, f, null)),
                call("read(null, -1, 1, 1)", () -> provider().read(null, -1, 1, 1)),
                call("state(null)", () -> provider().state(null)),
                call("trim(null, f, 0)", () -> provider().trim(null, f, 0)),
                call("trim(log, null, 0)", () -> provider().trim(log, null, 0)),
                call("reconcile(null, f)", () -> provider().reconcile(null, f)),
                call("reconcile(log, null)", () -> provider().reconcile(log, null)),
                call("logs(null)", () -> provider().logs(null)),
                call("checkpoints().publish(null, f, 1, 0, data)", () -> cs.publish(null, f, 1, 0, bytes(new byte[1]))),
                call("checkpoints().publish(log, null, 1, 0, data)",
                        () -> cs.publish(log, null, 1, 0, bytes(new byte[1]))),
                call("checkpoints().publish(log, f, 1, 0, null)", () -> cs.publish(log, f, 1, 0, null)),
                call("checkpoints().latest(null)", () -> cs.latest(null)),
                call("checkpoints().open(null, info)", () -> cs.open(null, info)),
                call("checkpoints().open(log, null)", () -> cs.open(log, null)),
                call("checkpoints().deleteBefore(null, 0)", () -> cs.deleteBefore(null, 0)));
        for (NamedCall c : calls) {
            assertThatThrownBy(c.call()::run).as("%s with a null argument must throw NullPointerException", c.what())
                    .isInstanceOf(NullPointerException.class);
        }
        assertUnchanged("after calls with null arguments", before, snapshot(provider(), log));
        provider().commit(log, f, 2);
    }

    /** Out-of-range numbers and a fence or receipt of another log throw IllegalArgumentException. */
    @Test
    void badRangesAndForeignFencesAreRefused() {
        LogId log = log(0);
        LogId other = log(1);
        Fence f = claimAndReconcile(provider(), log);
        Fence otherFence = claimAndReconcile(provider(), other);
        appendBatches(provider(), f, 1, 2, SMALL);
        EncodedBatch b = batch(SEED, 2, 1, SMALL);
        StagedBatch receipt = provider().stage(log, f, b);
        StagedBatch otherReceipt = new StagedBatch(other, otherFence.epoch(), 0, 0, BatchId.random());
        LogSnapshot before = snapshot(provider(), log);
        LogSnapshot otherBefore = snapshot(provider(), other);
        CheckpointStore cs = provider().checkpoints();
        List<NamedCall> calls = List.of(
                call("stage(log, otherFence, b)", () -> provider().stage(log, otherFence, b)),
                call("commit(log, otherFence, 2)", () -> provider().commit(log, otherFence, 2)),
                call("commit(log, f, -2)", () -> provider().commit(log, f, -2)),
                call("abort(log, otherFence, receipt)", () -> provider().abort(log, otherFence, receipt)),
                call("abort(log, f, otherReceipt)", () -> provider().abort(log, f, otherReceipt)),
                call("append(log, otherFence, b)", () -> provider().append(log, otherFence, b)),
                call("read(log, -2, 1, 1)", () -> provider().read(log, -2, 1, 1)),
                call("read(log, -1, 0, 1)", () -> provider().read(log, -1, 0, 1)),
                call("read(log, -1, -5, 1)", () -> provider().read(log, -1, -5, 1)),
                call("read(log, -1, 1, 0)", () -> provider().read(log, -1, 1, 0)),
                call("read(log, -1, 1, -1)", () -> provider().read(log, -1, 1, -1)),
                call("trim(log, otherFence, 0)", () -> provider().trim(log, otherFence, 0)),
                call("trim(log, f, -1)", () -> provider().trim(log, f, -1)),
                call("reconcile(log, otherFence)", () -> provider().reconcile(log, otherFence)),
                call("logs(\"\")", () -> provider().logs("")),
                call("logs(\"bad name\")", () -> provider().logs("bad name")),
                call("logs(\"bad/name\")", () -> provider().logs("bad/name")),
                call("checkpoints().publish(log, otherFence, 1, 0, data)",
                        () -> cs.publish(log, otherFence, 1, 0, bytes(new byte[1]))),
                call("checkpoints().publish(log, f, -2, 0, data)", () -> cs.publish(log, f, -2, 0, bytes(new byte[1]))),
                call("checkpoints().publish(log, f, 1, -1, data)",
                        () -> cs.publish(log, f, 1, -1, bytes(new byte[1]))));
        for (NamedCall c : calls) {
            assertThatThrownBy(c.call()::run).as("%s (out of range, or another log's fence or receipt) must throw"
                    + " IllegalArgumentException", c.what())
                    .isInstanceOf(IllegalArgumentException.class);
        }
        assertUnchanged("after refused out-of-range and foreign-fence calls", before, snapshot(provider(), log));
        assertUnchanged("after calls on " + log + " with this log's fence", otherBefore, snapshot(provider(), other));
        provider().commit(log, f, 2);
    }
}
