package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;

/**
 * An open Lattice: a set of named {@link Tree}s made durable by one provider's write-ahead logs.
 *
 * <pre>{@code
 * try (Lattice lattice = Lattice.open("chronicle:./lattice-data")) {
 *     Tree orders = lattice.tree("orders");
 *     orders.put("o-1", bytes);
 * }
 * }</pre>
 *
 * <p>Trees open lazily on the first {@link #tree(String)} call: each partition's log is claimed (fencing out any
 * older writer), reconciled, and replayed from its latest checkpoint. Thread-safe.
 */
public final class Lattice implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Lattice.class);

    private final EngineContext ctx;
    private final Catalog catalog;
    private final ConcurrentHashMap<String, CompletableFuture<TreeImpl>> trees = new ConcurrentHashMap<>();
    private final List<SaturationListener> listeners = new CopyOnWriteArrayList<>();
    private final Object closeLock = new Object();
    private volatile boolean closed;

    private Lattice(EngineContext ctx) {
        this.ctx = ctx;
        this.catalog = new Catalog(ctx);
        Gauge.builder("lattice.memory.live.bytes", ctx.memoryUsed, java.util.concurrent.atomic.AtomicLong::get)
                .description("estimated JVM bytes of the live data of open trees").baseUnit("bytes")
                .register(ctx.registry);
    }

    /**
     * Opens a lattice on a provider URI with default settings.
     *
     * @param uri e.g. {@code chronicle:./lattice-data} or {@code memory:test}
     * @return the open lattice
     * @throws dev.lattice.spi.UnknownSchemeException if no provider module handles the scheme (lists those found)
     * @throws IllegalArgumentException if the URI or an option is malformed
     * @throws dev.lattice.spi.WalStorageException if the provider fails to open or its catalog cannot be read
     */
    public static Lattice open(String uri) {
        return open(LatticeConfig.builder().uri(uri).build());
    }

    /**
     * Opens a lattice.
     *
     * @param config the configuration
     * @return the open lattice
     * @throws NullPointerException if {@code config} is null
     * @throws dev.lattice.spi.UnknownSchemeException if no provider module handles the URI's scheme
     * @throws IllegalArgumentException if the URI or an option is malformed
     * @throws dev.lattice.spi.WalStorageException if the provider fails to open or its catalog cannot be read
     */
    public static Lattice open(LatticeConfig config) {
        Objects.requireNonNull(config, "config");
        WalStorageProvider provider = config.provider != null ? config.provider
                : Providers.open(Providers.parse(config.uri), config.providerOptions);
        MeterRegistry registry = config.meterRegistry != null ? config.meterRegistry : new SimpleMeterRegistry();
        EngineContext ctx = new EngineContext(config, provider, registry);
        Lattice lattice = new Lattice(ctx);
        try {
            lattice.catalog.refresh();
        } catch (RuntimeException e) {
            ctx.shutdownThreads();
            if (config.closeProvider) {
                provider.close();
            }
            throw e;
        }
        return lattice;
    }

    /**
     * The tree with this name, created with the configured partition count if it does not exist, opened (replayed)
     * on first use in this lattice.
     *
     * @param name the tree name ({@link LogId} rules; names starting with {@code _} are reserved)
     * @return the tree
     * @throws IllegalArgumentException if the name breaks the rules
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.CorruptLogException if a log entry or checkpoint is corrupt (names log and offset)
     * @throws dev.lattice.spi.WalStorageException if the provider fails while opening
     */
    public Tree tree(String name) {
        return tree(name, ctx.config.partitions);
    }

    /**
     * The tree with this name, created with {@code partitions} partitions if it does not exist. An existing tree
     * keeps the partition count it was created with (a different request is logged as a warning).
     *
     * @param name the tree name
     * @param partitions partitions for a new tree, 1..{@value LogId#MAX_PARTITION}+1
     * @return the tree
     * @throws IllegalArgumentException if the name or count is out of range
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.CorruptLogException if a log entry or checkpoint is corrupt
     * @throws dev.lattice.spi.WalStorageException if the provider fails while opening
     */
    public Tree tree(String name, int partitions) {
        LogId.validateTreeName(name);
        if (name.startsWith("_")) {
            throw new IllegalArgumentException("tree names starting with '_' are reserved for the engine: '" + name + "'");
        }
        if (partitions < 1 || partitions > LogId.MAX_PARTITION + 1) {
            throw new IllegalArgumentException("partitions must be in 1.." + (LogId.MAX_PARTITION + 1) + ", got "
                    + partitions);
        }
        while (true) {
            checkOpen();
            CompletableFuture<TreeImpl> mine = new CompletableFuture<>();
            CompletableFuture<TreeImpl> existing = trees.putIfAbsent(name, mine);
            if (existing == null) {
                try {
                    int stored = catalog.ensure(name, partitions);
                    if (stored != partitions) {
                        LOG.warn("tree '{}' exists with {} partitions; keeping them (asked for {})", name, stored,
                                partitions);
                    }
                    TreeImpl t = TreeImpl.open(ctx, this, name, stored);
                    mine.complete(t);
                    return t;
                } catch (RuntimeException e) {
                    trees.remove(name, mine);
                    mine.completeExceptionally(e);
                    throw e;
                }
            }
            try {
                return TreeImpl.await(existing);
            } catch (RuntimeException e) {
                if (trees.get(name) == existing) {
                    throw e;
                }
                // the opener failed and removed its entry: try again ourselves
            }
        }
    }

    /**
     * The trees that exist on the provider (from the catalog), with their partition counts.
     *
     * @return tree name to partition count, sorted by name
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public Map<String, Integer> trees() {
        checkOpen();
        catalog.refresh();
        return catalog.all();
    }

    /**
     * The saturation state of an open tree.
     *
     * @param tree the name
     * @return the state; {@link SaturationState#HEALTHY} for a tree not open in this lattice
     */
    public SaturationState saturation(String tree) {
        CompletableFuture<TreeImpl> f = trees.get(tree);
        return f != null && f.isDone() && !f.isCompletedExceptionally() ? f.join().saturation()
                : SaturationState.HEALTHY;
    }

    /**
     * Registers a listener for saturation changes of any tree.
     *
     * @param listener the listener
     */
    public void addSaturationListener(SaturationListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * @param listener a listener registered before
     */
    public void removeSaturationListener(SaturationListener listener) {
        listeners.remove(listener);
    }

    void fireSaturation(String tree, SaturationState prev, SaturationState cur) {
        if (listeners.isEmpty()) {
            return;
        }
        try {
            ctx.io.execute(() -> {
                for (SaturationListener l : listeners) {
                    try {
                        l.onChange(tree, prev, cur);
                    } catch (RuntimeException e) {
                        LOG.warn("saturation listener failed", e);
                    }
                }
            });
        } catch (RejectedExecutionException closing) {
            LOG.debug("saturation change of {} not delivered: lattice closing", tree);
        }
    }

    /** @return counters since open (provider calls, batches, replay, checkpoints) */
    public LatticeStats stats() {
        return ctx.stats.snapshot();
    }

    /** @return the registry the meters go to (the one configured, or a private simple registry) */
    public MeterRegistry meterRegistry() {
        return ctx.registry;
    }

    /** @return the provider's descriptor */
    public ProviderDescriptor providerDescriptor() {
        return ctx.descriptor;
    }

    /** @return the provider (for inspection; writing to the logs of open trees behind the engine's back breaks them) */
    public WalStorageProvider provider() {
        return ctx.provider;
    }

    /** @return estimated JVM bytes of the live data of the open trees */
    public long liveDataBytes() {
        return ctx.memoryUsed.get();
    }

    boolean isClosed() {
        return closed;
    }

    private void checkOpen() {
        if (closed) {
            throw new LatticeShuttingDownException("lattice is closed");
        }
    }

    /**
     * Closes the lattice: stops admitting writes (callers parked for admission get
     * {@link LatticeShuttingDownException}), drains queued and in-flight writes within the close timeout,
     * checkpoints every partition written since its last checkpoint, then closes the provider (if the lattice owns
     * it) and its threads. A second call is a no-op. Never throws for provider failures during close (they are
     * logged).
     */
    @Override
    public void close() {
        synchronized (closeLock) {
            if (closed) {
                return;
            }
            closed = true;
        }
        List<LogPipeline> all = new ArrayList<>();
        for (CompletableFuture<TreeImpl> f : trees.values()) {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                all.addAll(List.of(f.join().pipelines()));
            }
        }
        for (LogPipeline p : all) {
            p.beginClose();
        }
        long deadline = System.nanoTime() + ctx.config.closeTimeout.toNanos();
        List<CompletableFuture<Boolean>> drains = new ArrayList<>();
        for (LogPipeline p : all) {
            drains.add(CompletableFuture.supplyAsync(() -> p.drainAndCheckpoint(deadline), ctx.io));
        }
        for (CompletableFuture<Boolean> d : drains) {
            try {
                if (!d.join()) {
                    LOG.warn("close: a log did not drain within {} ms", ctx.config.closeTimeout.toMillis());
                }
            } catch (RuntimeException e) {
                LOG.warn("close: drain failed", e);
            }
        }
        ctx.shutdownThreads();
        if (ctx.config.closeProvider) {
            try {
                ctx.provider.close();
            } catch (RuntimeException e) {
                LOG.warn("close: provider close failed", e);
            }
        }
    }
}
