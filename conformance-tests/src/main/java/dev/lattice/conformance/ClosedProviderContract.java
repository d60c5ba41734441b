package dev.lattice.conformance;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/** A closed provider refuses every call but describe and close with IllegalStateException. */
public abstract class ClosedProviderContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected ClosedProviderContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** Every SPI and checkpoint store method throws IllegalStateException after close; close is idempotent. */
    @Test
    void everyMethodThrowsIllegalStateAfterClose() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 2, SMALL);
        EncodedBatch b = batch(SEED, 2, 1, SMALL);
        StagedBatch receipt = provider().stage(log, f, b);
        CheckpointInfo info = provider().checkpoints().publish(log, f, 1, 0, bytes(new byte[1]));
        CheckpointStore cs = provider().checkpoints();
        ProviderDescriptor d = provider().describe();
        provider().close();
        provider().close();
        assertThat(provider().describe()).as("describe() after close (twice) must return the same descriptor")
                .isEqualTo(d);
        WalStorageProvider closed = provider();
        List<NamedCall> calls = List.of(
                call("claim(log)", () -> closed.claim(log)),
                call("stage(log, f, b)", () -> closed.stage(log, f, b)),
                call("commit(log, f, 2)", () -> closed.commit(log, f, 2)),
                call("abort(log, f, receipt)", () -> closed.abort(log, f, receipt)),
                call("append(log, f, batch 3..3)", () -> closed.append(log, f, batch(SEED, 3, 1, SMALL))),
                call("read(log, -1, 1, 1)", () -> closed.read(log, -1, 1, 1)),
                call("state(log)", () -> closed.state(log)),
                call("trim(log, f, 0)", () -> closed.trim(log, f, 0)),
                call("reconcile(log, f)", () -> closed.reconcile(log, f)),
                call("logs(TREE)", () -> closed.logs(TREE)),
                call("trees()", () -> closed.trees()),
                call("checkpoints().publish(log, f, 1, 0, data)", () -> cs.publish(log, f, 1, 0, bytes(new byte[1]))),
                call("checkpoints().latest(log)", () -> cs.latest(log)),
                call("checkpoints().open(log, info)", () -> cs.open(log, info)),
                call("checkpoints().deleteBefore(log, 0)", () -> cs.deleteBefore(log, 0)));
        for (NamedCall c : calls) {
            assertThatThrownBy(c.call()::run).as("%s after close must throw IllegalStateException", c.what())
                    .isInstanceOf(IllegalStateException.class);
        }
        // checkpoints() is an accessor: it may throw, or return the store whose methods throw (checked above).
        Throwable t = catchThrowable(closed::checkpoints);
        if (t != null) {
            assertThat(t).as("checkpoints() after close may throw, but only IllegalStateException")
                    .isInstanceOf(IllegalStateException.class);
        } else {
            assertThatThrownBy(() -> closed.checkpoints().latest(log))
                    .as("latest() of the store checkpoints() returns after close must throw IllegalStateException")
                    .isInstanceOf(IllegalStateException.class);
        }
        // Nothing the closed instance was asked to do happened.
        reopen();
        assertThat(provider().state(log).committedTail())
                .as("after reopen: tail 1, nothing the closed instance was asked to commit or append").isEqualTo(1);
        assertThat(provider().checkpoints().latest(log))
                .as("after reopen: the checkpoint through 1, nothing the closed instance was asked to publish")
                .contains(info);
    }
}
