package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderMissingException;
import dev.lattice.spi.WalStorageProvider;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** What every part of one open {@link Lattice} shares: configuration, provider, threads, counters, meters. */
final class EngineContext {

    final LatticeConfig config;
    final WalStorageProvider provider;
    final ProviderDescriptor descriptor;
    final String providerName;
    final ExecutorService io;
    private final boolean ownsIo;
    final ScheduledExecutorService timer;
    final CallWatchdog watchdog;
    final EngineStats stats = new EngineStats();
    final MeterRegistry registry;
    final EngineMeters meters;
    final AtomicLong memoryUsed = new AtomicLong();
    final AtomicWrites atomics = new AtomicWrites(this);
    /** Registered change-feed consumers (their positions hold back trims). */
    final FeedConsumers feeds = new FeedConsumers(this);
    /** Time writers waited for flushes because the memory budget was spent. */
    final java.util.concurrent.atomic.LongAdder stallNanos = new java.util.concurrent.atomic.LongAdder();
    /** The trees opened so far (set by the lattice). */
    volatile java.util.function.Supplier<java.util.List<TreeImpl>> openTrees = java.util.List::of;
    /** Decoded run blocks of every tree, bounded in bytes. */
    final dev.lattice.engine.lsm.BlockCache blockCache;
    /** Runs flushes and compactions (one task per partition at a time). */
    final ExecutorService maintenance;

    /** Every registered provider by key, {@code default} first. */
    final Map<String, ProviderHandle> providers;

    EngineContext(LatticeConfig config, Map<String, ProviderHandle> providers, MeterRegistry registry) {
        this.config = config;
        this.providers = providers;
        ProviderHandle main = providers.get(PlacementPolicy.DEFAULT_KEY);
        this.provider = main.provider();
        this.descriptor = main.descriptor();
        this.providerName = descriptor.name();
        this.registry = registry;
        this.meters = new EngineMeters(registry, config.metricsName, config.meterPartitionTag);
        if (config.ioExecutor != null) {
            this.io = config.ioExecutor;
            this.ownsIo = false;
        } else {
            this.io = Executors.newCachedThreadPool(daemonThreads("lattice-io"));
            this.ownsIo = true;
        }
        this.timer = Executors.newSingleThreadScheduledExecutor(daemonThreads("lattice-timer"));
        this.blockCache = new dev.lattice.engine.lsm.BlockCache(config.blockCacheBytes);
        this.maintenance = Executors.newFixedThreadPool(config.maintenanceThreads, daemonThreads("lattice-maint"));
        this.watchdog = new CallWatchdog(timer, config.providerCallTimeout.toMillis());
    }

    /**
     * The memory budget runs low: asks the log with the largest memtable not yet asked to flush (a no-op for logs
     * asked already). Unless the budget is spent ({@code spent}), it asks only while the memtables not asked to
     * flush hold more than half the budget: the writers of every log see the budget run low at once, and asking
     * each writer's own log made every partition flush a memtable of a fraction of its share; asking for the
     * largest lets the memtables grow to about twice that (fewer, larger level-0 runs, so less compaction).
     *
     * @param writing the log being written (asked too when the budget is spent and no other log can be asked)
     * @param spent whether the write waits for memory now
     */
    void requestFlushes(LogPipeline writing, boolean spent) {
        LogPipeline largest = null;
        long unasked = 0;
        for (TreeImpl t : openTrees.get()) {
            for (LogPipeline p : t.pipelines()) {
                if (p == null || !p.hasRuns() || p.flushRequested()) {
                    continue;
                }
                unasked += p.memtableBytes();
                if (largest == null || p.memtableBytes() > largest.memtableBytes()) {
                    largest = p;
                }
            }
        }
        if (largest == null) {
            if (spent) {
                writing.requestFlush();
            }
            return;
        }
        if (spent || unasked > config.memoryBudgetBytes / 2) {
            largest.requestFlush();
        }
    }

    static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * The provider a log is placed on.
     *
     * @throws ProviderMissingException if the key is not registered in this lattice (fail closed, no fallback)
     */
    ProviderHandle handle(String key, LogId log) {
        ProviderHandle h = providers.get(key);
        if (h == null) {
            throw new ProviderMissingException(log, key, new ArrayList<>(providers.keySet()));
        }
        return h;
    }

    /**
     * Runs a provider call made on a caller's thread outside a log's pipeline (the catalog's reads and appends) with
     * the provider call deadline: the caller waits at most {@code providerCallTimeout}, then gets
     * {@link dev.lattice.spi.ProviderUnavailableException} (outcome unknown) while the call finishes in the background.
     */
    <T> T bounded(LogId log, String op, java.util.function.Supplier<T> call) {
        long ms = watchdog.timeoutMillis();
        if (ms == 0) {
            return call.get();
        }
        java.util.concurrent.CompletableFuture<T> f = java.util.concurrent.CompletableFuture.supplyAsync(call, io);
        try {
            return f.get(ms, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new dev.lattice.spi.ProviderUnavailableException(log, op + " of " + log + " did not return within "
                    + ms + " ms (LatticeConfig providerCallTimeout)", null);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw new dev.lattice.spi.WalStorageException(log, op + " failed with " + err, err);
            }
            throw new LatticeException(op + " of " + log + " failed", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LatticeException("interrupted while waiting for " + op + " of " + log, e);
        }
    }

    /** Sleeps before retry {@code attempt} (0-based): the configured backoff, doubled per attempt, at most 1 s. */
    void backoff(int attempt) {
        long base = config.retryBackoff.toMillis();
        long ms = Math.min(1000, base << Math.min(attempt, 10));
        if (ms <= 0) {
            return;
        }
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void shutdownThreads() {
        shutdownThreads(true);
    }

    /**
     * Stops the timer and (if owned) the I/O pool.
     *
     * @param wait whether to wait (up to 5 s) for running provider calls; a failed open does not wait for a call
     *     that passed its deadline
     */
    void shutdownThreads(boolean wait) {
        timer.shutdownNow();
        maintenance.shutdownNow();
        if (ownsIo) {
            io.shutdown();
            if (!wait) {
                return;
            }
            try {
                if (!io.awaitTermination(5, TimeUnit.SECONDS)) {
                    io.shutdownNow();
                }
            } catch (InterruptedException e) {
                io.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
    }
}
