package dev.lattice.cli;

import dev.lattice.spi.CheckpointInfo;
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

import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A pass-through provider decorator that knows how many calls are running, so that {@code bench replay --reopen
 * crash} can stop using a provider at a quiet moment (no stage, commit or background checkpoint in flight) and
 * reopen the storage as a crashed process would find it: without the checkpoint a clean close writes. Thread-safe.
 */
final class InFlightTrackingProvider implements WalStorageProvider {

    private final WalStorageProvider delegate;
    private final CheckpointStore checkpoints;
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicLong lastCallEndNanos = new AtomicLong(System.nanoTime());

    /** @param delegate the provider that does the work */
    InFlightTrackingProvider(WalStorageProvider delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        CheckpointStore d = delegate.checkpoints();
        this.checkpoints = new CheckpointStore() {
            @Override
            public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion,
                                          InputStream data) {
                return track(() -> d.publish(log, fence, throughOffset, formatVersion, data));
            }

            @Override
            public Optional<CheckpointInfo> latest(LogId log) {
                return track(() -> d.latest(log));
            }

            @Override
            public InputStream open(LogId log, CheckpointInfo info) {
                return track(() -> d.open(log, info));
            }

            @Override
            public void deleteBefore(LogId log, long throughOffsetExclusive) {
                track(() -> {
                    d.deleteBefore(log, throughOffsetExclusive);
                    return null;
                });
            }
        };
    }

    /**
     * Waits until no call has been running for {@code quiet}, or {@code max} has passed.
     *
     * @param quiet how long the provider must stay idle
     * @param max the longest wait
     * @return true when it was idle for {@code quiet}
     */
    boolean awaitQuiet(Duration quiet, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline) {
            if (running.get() == 0 && System.nanoTime() - lastCallEndNanos.get() >= quiet.toNanos()) {
                return true;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    private <T> T track(Supplier<T> call) {
        running.incrementAndGet();
        try {
            return call.get();
        } finally {
            lastCallEndNanos.set(System.nanoTime());
            running.decrementAndGet();
        }
    }

    @Override
    public ProviderDescriptor describe() {
        return delegate.describe();
    }

    @Override
    public Fence claim(LogId log) {
        return track(() -> delegate.claim(log));
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        return track(() -> delegate.stage(log, fence, batch));
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        track(() -> {
            delegate.commit(log, fence, throughOffset);
            return null;
        });
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        track(() -> {
            delegate.abort(log, fence, staged);
            return null;
        });
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        return track(() -> delegate.read(log, fromExclusive, maxEntries, maxBytes));
    }

    @Override
    public LogState state(LogId log) {
        return track(() -> delegate.state(log));
    }

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        track(() -> {
            delegate.trim(log, fence, throughInclusive);
            return null;
        });
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        return track(() -> delegate.reconcile(log, fence));
    }

    @Override
    public CheckpointStore checkpoints() {
        return checkpoints;
    }

    @Override
    public List<LogId> logs(String tree) {
        return track(() -> delegate.logs(tree));
    }

    @Override
    public List<String> trees() {
        return track(() -> delegate.trees());
    }

    @Override
    public void close() {
        delegate.close();
    }
}
