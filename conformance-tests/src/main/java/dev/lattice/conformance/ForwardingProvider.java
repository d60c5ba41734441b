package dev.lattice.conformance;

import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;

import java.util.List;
import java.util.Objects;

/**
 * A provider that forwards every call to another one: the base for a decorator that changes one or two methods
 * (a test double, a tracing wrapper, a deliberately broken provider that checks a test suite has teeth).
 *
 * <p>{@code append} is not forwarded: it is the SPI's default, which calls this object's {@link #stage} and
 * {@link #commit} (and {@link #abort}), so overriding those also changes appends. Thread-safe when the delegate is
 * and the subclass's overrides are.
 */
public abstract class ForwardingProvider implements WalStorageProvider {

    /** The provider calls are forwarded to. */
    protected final WalStorageProvider delegate;

    /**
     * @param delegate the provider to forward to
     * @throws NullPointerException if {@code delegate} is null
     */
    protected ForwardingProvider(WalStorageProvider delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** @return the provider calls are forwarded to */
    public WalStorageProvider delegate() {
        return delegate;
    }

    @Override
    public ProviderDescriptor describe() {
        return delegate.describe();
    }

    @Override
    public Fence claim(LogId log) {
        return delegate.claim(log);
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        return delegate.stage(log, fence, batch);
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        delegate.commit(log, fence, throughOffset);
    }

    @Override
    public void checkFence(LogId log, Fence fence) {
        delegate.checkFence(log, fence);
    }

    @Override
    public dev.lattice.spi.RepairReport repair(LogId log, Fence fence) {
        return delegate.repair(log, fence);
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        delegate.abort(log, fence, staged);
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        return delegate.read(log, fromExclusive, maxEntries, maxBytes);
    }

    @Override
    public LogState state(LogId log) {
        return delegate.state(log);
    }

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        delegate.trim(log, fence, throughInclusive);
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        return delegate.reconcile(log, fence);
    }

    /** @return the delegate's checkpoint store; override to decorate it */
    @Override
    public CheckpointStore checkpoints() {
        return delegate.checkpoints();
    }

    @Override
    public List<LogId> logs(String tree) {
        return delegate.logs(tree);
    }

    @Override
    public List<String> trees() {
        return delegate.trees();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
