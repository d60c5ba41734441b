package com.example.lattice;

import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;

import java.util.List;

/**
 * A template for a third-party provider: every call goes to Lattice's in-memory reference provider, under its own
 * name. Replace each delegation with your storage's calls, keeping the contract of {@link WalStorageProvider}'s
 * Javadoc; {@code ExampleWalProviderConformanceTest} proves that you did. Thread-safe (the delegate is).
 */
public final class ExampleWalProvider implements WalStorageProvider {

    private final InMemoryWalStorageProvider delegate;
    private final ProviderDescriptor descriptor;

    /**
     * Opens a provider over a storage; a new instance over the same storage is a reopen.
     *
     * @param storage where the logs live
     */
    public ExampleWalProvider(InMemoryStorage storage) {
        this.delegate = new InMemoryWalStorageProvider(storage);
        ProviderDescriptor d = delegate.describe();
        this.descriptor = new ProviderDescriptor("example", "1.0.0", d.limits(), d.durability(), d.features(),
                d.replayCost());
    }

    @Override
    public ProviderDescriptor describe() {
        return descriptor;
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

    @Override
    public void checkFence(LogId log, Fence fence) {
        delegate.checkFence(log, fence);
    }

    @Override
    public CheckpointStore checkpoints() {
        return delegate.checkpoints();
    }

    @Override
    public RunStore runs() {
        return delegate.runs();
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
    public void drop(LogId log, Fence fence) {
        delegate.drop(log, fence);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
