package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
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
    private final LogMover mover;
    private final TreePurge purge;
    /** System.nanoTime() of the last catalog read made to notice drops by other processes in {@link #tree}. */
    private volatile long dropCheckNanos = System.nanoTime();
    private final ConcurrentHashMap<String, CompletableFuture<TreeImpl>> trees = new ConcurrentHashMap<>();
    /** Per tree being opened or open: completes once its logs are replayed (before leftovers are resolved). */
    private final ConcurrentHashMap<String, CompletableFuture<Void>> replayed = new ConcurrentHashMap<>();
    private final List<SaturationListener> listeners = new CopyOnWriteArrayList<>();
    private final Object closeLock = new Object();
    private volatile boolean closed;

    private Lattice(EngineContext ctx) {
        this.ctx = ctx;
        this.catalog = new Catalog(ctx);
        this.mover = new LogMover(ctx, catalog);
        this.purge = new TreePurge(ctx);
        ctx.atomics.bind(this);
        ctx.openTrees = this::openTrees;
        ctx.meters.gauge("lattice.block.cache.bytes", "bytes of decoded run blocks in the block cache", "bytes",
                ctx.meters.tags(), ctx.blockCache::sizeBytes);
        ctx.meters.gauge("lattice.block.cache.hit.ratio", "share of block lookups answered by the block cache", null,
                ctx.meters.tags(), ctx.blockCache::hitRatio);
        ctx.meters.gauge("lattice.write.stall.seconds", "time writers waited for memtable flushes (flush behind)",
                "seconds", ctx.meters.tags(), () -> ctx.stallNanos.sum() / 1e9);
        ctx.meters.gauge("lattice.memory.live.bytes", "estimated JVM bytes of the live data of open trees", "bytes",
                ctx.meters.tags(), ctx.memoryUsed::get);
        long interval = ctx.config.ownershipCheckInterval.toMillis();
        if (interval > 0) {
            long period = Math.max(5, interval / 4);
            long intervalNanos = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(interval);
            ctx.timer.scheduleWithFixedDelay(() -> checkOwnership(intervalNanos), period, period,
                    java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    /** Timer thread: lets every idle log of every open tree prove its fence (see ownershipCheckInterval) and merge its level 0 (idleMergeDelay). */
    private void checkOwnership(long intervalNanos) {
        if (closed) {
            return;
        }
        try {
            long now = System.nanoTime();
            for (TreeImpl t : openTrees()) {
                for (LogPipeline p : t.pipelines()) {
                    p.checkOwnership(intervalNanos);
                    p.checkIdle(now);
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("ownership check failed", e); // never let the periodic task die
        }
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
     * Opens a read-only follower of the lattice at {@code uri}: it never claims a log, so it never fences the process
     * that writes (see {@link LatticeFollower}).
     *
     * @param uri the default provider's URI, as for {@link #open(String)}
     * @return the follower
     * @throws NullPointerException if {@code uri} is null
     * @throws dev.lattice.spi.UnknownSchemeException if no provider module handles the URI's scheme
     * @throws IllegalArgumentException if the URI is malformed
     * @throws dev.lattice.spi.WalStorageException if the provider fails to open or its catalog cannot be read
     */
    public static LatticeFollower openReadOnly(String uri) {
        Objects.requireNonNull(uri, "uri");
        return LatticeFollower.open(LatticeConfig.builder().uri(uri).build());
    }

    /**
     * Opens a read-only follower with this configuration (providers, named providers, memory and cache settings,
     * {@link LatticeConfig.Builder#followerPollInterval}); see {@link LatticeFollower}.
     *
     * @param config the configuration
     * @return the follower
     * @throws NullPointerException if {@code config} is null
     * @throws dev.lattice.spi.UnknownSchemeException if no provider module handles a URI's scheme
     * @throws dev.lattice.spi.WalStorageException if a provider fails to open or the catalog cannot be read
     */
    public static LatticeFollower openReadOnly(LatticeConfig config) {
        return LatticeFollower.open(config);
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
        Map<String, ProviderHandle> handles = openProviders(config, false);
        MeterRegistry registry = config.meterRegistry != null ? config.meterRegistry : new SimpleMeterRegistry();
        EngineContext ctx = new EngineContext(config, java.util.Collections.unmodifiableMap(handles), registry);
        Lattice lattice = new Lattice(ctx);
        long openStarted = System.nanoTime();
        try {
            lattice.catalog.refresh();
        } catch (RuntimeException e) {
            ctx.shutdownThreads(false);
            closeOwned(handles.values());
            if (e instanceof dev.lattice.spi.ProviderUnavailableException
                    && dev.lattice.spi.support.ConnectFailures.isUnreachable(e)) {
                // providers that reach their server on the first call (Azure Blob): say what, and how long
                throw dev.lattice.spi.support.ConnectFailures.couldNotConnect("provider '" + ctx.providerName + "' at "
                        + EngineMeters.defaultName(config.uri), (System.nanoTime() - openStarted) / 1_000_000,
                        "providerCallTimeout " + config.providerCallTimeout.toMillis() + " ms", e);
            }
            throw e;
        }
        return lattice;
    }

    /**
     * Opens the default and the named providers of a configuration (instances given in it are used as they are).
     *
     * @param readOnly open URI-configured providers through their factories' read-only instances
     */
    static Map<String, ProviderHandle> openProviders(LatticeConfig config, boolean readOnly) {
        Map<String, ProviderHandle> handles = new LinkedHashMap<>();
        try {
            WalStorageProvider main = config.provider != null ? config.provider
                    : openProvider(config.uri, config.providerOptions, readOnly);
            handles.put(PlacementPolicy.DEFAULT_KEY, ProviderHandle.of(PlacementPolicy.DEFAULT_KEY, main,
                    config.closeProvider));
            for (Map.Entry<String, LatticeConfig.NamedProvider> e : config.namedProviders.entrySet()) {
                LatticeConfig.NamedProvider np = e.getValue();
                WalStorageProvider p = np.instance() != null ? np.instance()
                        : openProvider(np.uri(), np.options(), readOnly);
                handles.put(e.getKey(), ProviderHandle.of(e.getKey(), p, np.close()));
            }
            return handles;
        } catch (RuntimeException e) {
            closeOwned(handles.values());
            throw e;
        }
    }

    private static WalStorageProvider openProvider(String uri, Map<String, String> options, boolean readOnly) {
        return readOnly ? Providers.openReadOnly(Providers.parse(uri), options)
                : Providers.open(Providers.parse(uri), options);
    }

    static void closeOwned(Collection<ProviderHandle> handles) {
        for (ProviderHandle h : handles) {
            if (h.owned()) {
                try {
                    h.provider().close();
                } catch (RuntimeException e) {
                    LOG.warn("closing provider '{}' failed", h.key(), e);
                }
            }
        }
    }

    /**
     * The tree with this name, created with the configured partition count if it does not exist, opened (replayed)
     * on first use in this lattice.
     *
     * @param name the tree name ({@link LogId} rules; names starting with {@code _} are reserved)
     * @return the tree
     * @throws IllegalArgumentException if the name breaks the rules
     * @throws NoSuchTreeException if the tree was dropped ({@link #createTree} creates it again)
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
     * @throws NoSuchTreeException if the tree was dropped ({@link #createTree} creates it again)
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.CorruptLogException if a log entry or checkpoint is corrupt
     * @throws dev.lattice.spi.WalStorageException if the provider fails while opening
     */
    public Tree tree(String name, int partitions) {
        LogId.validateTreeName(name);
        if (partitions < 1 || partitions > LogId.MAX_PARTITION + 1) {
            throw new IllegalArgumentException("partitions must be in 1.." + (LogId.MAX_PARTITION + 1) + ", got "
                    + partitions);
        }
        return tree(name, TreeOptions.partitions(partitions));
    }

    /**
     * The tree with this name, created with {@code options} (partition count, partition hash version) if it does not
     * exist. An existing tree keeps what it was created with (a different partition count is logged as a warning).
     *
     * @param name the tree name ({@link LogId} rules; names starting with {@code _} are reserved)
     * @param options partition count (0: the configured default) and hash version for a new tree
     * @return the tree
     * @throws IllegalArgumentException if the name breaks the rules
     * @throws NoSuchTreeException if the tree was dropped (by this or, noticed within a second, another process);
     *     {@link #createTree} creates it again
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.CorruptLogException if a log entry or checkpoint is corrupt
     * @throws dev.lattice.spi.WalStorageException if the provider fails while opening
     */
    public Tree tree(String name, TreeOptions options) {
        return open(name, options, false);
    }

    /**
     * Creates a tree that does not exist, also one that was dropped (its purge is finished first, and its new logs'
     * epochs are raised above the dropped ones', so a writer of the dropped tree that missed the drop cannot write
     * into the new one), and opens it.
     *
     * @param name the tree name
     * @param options partition count (0: the configured default) and hash version
     * @return the new tree
     * @throws IllegalStateException if the tree exists
     * @throws IllegalArgumentException if the name breaks the rules
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.WalStorageException if a provider fails (a failed purge leaves the name dropped)
     */
    public Tree createTree(String name, TreeOptions options) {
        return open(name, options, true);
    }

    /**
     * Opens a tree of which this process hosts only the partitions it is given later ({@link PartialTree#host}):
     * for a cluster, where each partition's log is owned by one of several processes. Creates the tree (with
     * {@code options}) if it does not exist. Nothing is claimed or replayed until a partition is hosted.
     *
     * @param name the tree name
     * @param options partition count (0: the configured default) and hash version for a new tree
     * @return the partial tree, the same instance for every call with this name
     * @throws IllegalStateException if the tree is open whole in this lattice ({@link #tree})
     * @throws IllegalArgumentException if the name breaks the rules
     * @throws NoSuchTreeException if the tree was dropped
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.WalStorageException if the provider fails reading the catalog
     */
    public PartialTree hostTree(String name, TreeOptions options) {
        LogId.validateTreeName(name);
        if (name.startsWith("_")) {
            throw new IllegalArgumentException("tree names starting with '_' are reserved for the engine: '" + name + "'");
        }
        Objects.requireNonNull(options, "options");
        int partitions = options.partitions() == 0 ? ctx.config.partitions : options.partitions();
        while (true) {
            checkOpen();
            CompletableFuture<TreeImpl> mine = new CompletableFuture<>();
            CompletableFuture<TreeImpl> existing = trees.putIfAbsent(name, mine);
            if (existing == null) {
                try {
                    Placement placement = catalog.ensure(name, partitions, options.hashVersion());
                    TreeImpl t = TreeImpl.openPartial(ctx, this, placement);
                    mine.complete(t);
                    return t;
                } catch (RuntimeException e) {
                    trees.remove(name, mine);
                    mine.completeExceptionally(e);
                    throw e;
                }
            }
            TreeImpl t;
            try {
                t = TreeImpl.await(existing);
            } catch (RuntimeException e) {
                if (trees.get(name) == existing) {
                    throw e;
                }
                continue; // the opener failed and removed its entry: try again ourselves
            }
            if (!t.isPartial()) {
                throw new IllegalStateException("tree '" + name + "' is open whole in this lattice (Lattice.tree);"
                        + " it cannot also be hosted by partitions");
            }
            return t;
        }
    }

    /** For {@link PartialTree#host}: refuses once the lattice is closing. */
    void checkOpenForHosting() {
        checkOpen();
    }

    private Tree open(String name, TreeOptions options, boolean create) {
        LogId.validateTreeName(name);
        if (name.startsWith("_")) {
            throw new IllegalArgumentException("tree names starting with '_' are reserved for the engine: '" + name + "'");
        }
        Objects.requireNonNull(options, "options");
        int partitions = options.partitions() == 0 ? ctx.config.partitions : options.partitions();
        while (true) {
            checkOpen();
            CompletableFuture<TreeImpl> mine = new CompletableFuture<>();
            CompletableFuture<TreeImpl> existing = trees.putIfAbsent(name, mine);
            if (existing == null) {
                CompletableFuture<Void> rep = new CompletableFuture<>();
                replayed.put(name, rep);
                try {
                    Placement placement = create ? createInCatalog(name, partitions, options.hashVersion())
                            : catalog.ensure(name, partitions, options.hashVersion());
                    int stored = placement.keys().size();
                    if (stored != partitions) {
                        LOG.warn("tree '{}' exists with {} partitions; keeping them (asked for {})", name, stored,
                                partitions);
                    }
                    TreeImpl t = TreeImpl.open(ctx, this, placement);
                    mine.complete(t);
                    return t;
                } catch (RuntimeException e) {
                    trees.remove(name, mine);
                    replayed.remove(name, rep);
                    rep.completeExceptionally(e);
                    mine.completeExceptionally(e);
                    throw e;
                }
            }
            if (create) {
                throw new IllegalStateException("tree '" + name + "' exists already");
            }
            try {
                TreeImpl t = TreeImpl.await(existing);
                if (t.isPartial()) {
                    throw new IllegalStateException("tree '" + name + "' is hosted by partitions in this lattice"
                            + " (Lattice.hostTree); it cannot also be opened whole");
                }
                checkNotDroppedElsewhere(name, existing);
                return t;
            } catch (RuntimeException e) {
                if (trees.get(name) == existing) {
                    throw e;
                }
                if (e instanceof NoSuchTreeException) {
                    throw e;
                }
                // the opener failed and removed its entry: try again ourselves
            }
        }
    }

    private Placement createInCatalog(String name, int partitions, int hashVersion) {
        catalog.refresh();
        if (catalog.placement(name) != null) {
            throw new IllegalStateException("tree '" + name + "' exists already");
        }
        Catalog.Dropped d = catalog.dropped(name);
        if (d != null) {
            purge.purge(d.placement());
        }
        Placement placement = catalog.create(name, partitions, hashVersion);
        if (d != null) {
            purge.raiseEpochs(name, placement.keys(), d.epoch());
        }
        return placement;
    }

    /** At most once a second: re-reads the catalog so that a drop by another process stops this one's tree(). */
    private void checkNotDroppedElsewhere(String name, CompletableFuture<TreeImpl> open) {
        long now = System.nanoTime();
        if (catalog.placement(name) != null && now - dropCheckNanos < 1_000_000_000L) {
            return;
        }
        dropCheckNanos = now;
        catalog.refresh();
        if (catalog.placement(name) == null) {
            evict(name, open);
            throw new NoSuchTreeException(name, "tree '" + name + "' was dropped by another process");
        }
    }

    /** Forgets an open tree of this process and stops its logs (their writes fail from now on). */
    private void evict(String name, CompletableFuture<TreeImpl> open) {
        if (open != null && trees.remove(name, open)) {
            replayed.remove(name);
            if (open.isDone() && !open.isCompletedExceptionally()) {
                for (LogPipeline p : open.join().pipelines()) {
                    p.beginClose();
                }
            }
        }
    }

    /**
     * Drops a tree: it stops opening at once ({@link NoSuchTreeException} from {@link #tree}, here at once and in
     * other processes within a second; their open handles lose their logs to this call's claims), then its logs,
     * runs and checkpoints are deleted on every registered provider that holds any (the placed ones and the copies
     * moves left). The drop is recorded in the catalog before anything is deleted, so an interrupted purge is
     * finished by calling {@code dropTree} again or {@link #purgeDropped}. Atomic writes still waiting on the tree
     * fail. Open {@link Tree} handles of this process fail their later calls.
     *
     * @param name the tree's name
     * @return the number of logs deleted
     * @throws NoSuchTreeException if the tree neither exists nor was dropped before
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.WalStorageException if a provider fails; when the drop was recorded, the tree stays
     *     dropped and the purge can be resumed
     */
    public int dropTree(String name) {
        LogId.validateTreeName(name);
        checkOpen();
        catalog.refresh();
        Placement placement = catalog.placement(name);
        Catalog.Dropped d = catalog.dropped(name);
        if (placement == null && d == null) {
            throw new NoSuchTreeException(name, "tree '" + name + "' does not exist");
        }
        evict(name, trees.get(name));
        if (placement != null) {
            long epoch = purge.fence(placement);
            d = catalog.drop(name, epoch);
            forgetChangeConsumers(name);
        }
        return purge.purge(d.placement());
    }

    /**
     * Finishes the purge of every dropped tree (after an interrupted {@link #dropTree}); cheap when nothing is left.
     *
     * @return the number of logs deleted
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.WalStorageException if a provider fails (run again)
     */
    public int purgeDropped() {
        checkOpen();
        catalog.refresh();
        int n = 0;
        for (Catalog.Dropped d : catalog.allDropped().values()) {
            n += purge.purge(d.placement());
        }
        return n;
    }

    /**
     * Whether a tree exists, from a fresh read of the catalog. Never creates or opens anything.
     *
     * @param name the tree's name
     * @return true when the tree exists (false when it never did or was dropped)
     * @throws IllegalArgumentException if the name breaks the {@link LogId} rules
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public boolean exists(String name) {
        LogId.validateTreeName(name);
        checkOpen();
        catalog.refresh();
        return catalog.placement(name) != null;
    }

    /**
     * Every tree of the catalog with its partition count, hash version, creation time and placement.
     *
     * @return the trees, sorted by name
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public List<TreeInfo> treeInfos() {
        checkOpen();
        return catalog.treeInfos();
    }

    /**
     * One tree's catalog entry.
     *
     * @param name the tree's name
     * @return what the catalog knows of it
     * @throws NoSuchTreeException if it does not exist
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public TreeInfo treeInfo(String name) {
        LogId.validateTreeName(name);
        checkOpen();
        return catalog.treeInfo(name);
    }

    /** The partition hash a tree was created with (the latest for a tree the catalog does not know yet). */
    PartitionHash partitionHash(String name) {
        Catalog.Meta m = catalog.meta(name);
        return m == null ? PartitionHash.LATEST : PartitionHash.of(m.hashVersion());
    }

    /**
     * Starts an atomic write over keys of one or several trees of this lattice: add puts, deletes and preconditions,
     * then {@link AtomicWrite#commit()}. All or nothing, durable before commit returns, never partially visible to
     * readers; see {@link AtomicWrite} and {@code docs/consistency.md}.
     *
     * @return a new, empty atomic write (not thread-safe; commit once)
     * @throws LatticeShuttingDownException if the lattice is closed
     */
    public AtomicWrite atomic() {
        checkOpen();
        return ctx.atomics.begin(null);
    }

    /**
     * Opens an unregistered change feed of a tree without opening the tree: nothing is claimed or written, so it is
     * safe beside the process that owns the tree (tools, followers). As {@link Tree#changes(ChangePosition)}, except
     * that conditional writes on keys the feed has not seen written are taken as applied (see docs/engine.md).
     *
     * @param tree the tree's name
     * @param from where to start
     * @return the cursor (close it)
     * @throws NoSuchTreeException if the tree does not exist
     * @throws IllegalArgumentException if {@code from} has another partition count than the tree
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public dev.lattice.engine.feed.ChangeCursor changes(String tree, dev.lattice.engine.feed.ChangePosition from) {
        return ChangeFeeds.open(ctx, placementOf(tree), openTree(tree), from, null);
    }

    /**
     * Opens a registered consumer's change feed without opening the tree (it writes only the consumer's position,
     * to the engine's {@code _feeds} log). As {@link Tree#changes(String, ChangePosition)}.
     *
     * @param tree the tree's name
     * @param consumer the consumer's name, {@code [A-Za-z0-9._-]{1,128}}
     * @param initial where a new consumer starts
     * @return the cursor (close it)
     * @throws NoSuchTreeException if the tree does not exist
     * @throws IllegalArgumentException if the name breaks the rule or {@code initial} has another partition count
     * @throws dev.lattice.spi.WalStorageException if the catalog or the stored positions cannot be read or written
     */
    public dev.lattice.engine.feed.ChangeCursor changes(String tree, String consumer,
                                                       dev.lattice.engine.feed.ChangePosition initial) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(initial, "initial");
        return ChangeFeeds.open(ctx, placementOf(tree), openTree(tree), initial, consumer);
    }

    /**
     * The registered change-feed consumers of a tree with their stored positions.
     *
     * @param tree the tree's name
     * @return consumer name to position, sorted by name
     * @throws dev.lattice.spi.WalStorageException if the stored positions cannot be read
     */
    public Map<String, dev.lattice.engine.feed.ChangePosition> changeConsumers(String tree) {
        LogId.validateTreeName(tree);
        checkOpen();
        return ctx.feeds.of(tree);
    }

    /**
     * Unregisters a change-feed consumer: its position no longer holds back trims.
     *
     * @param tree the tree's name
     * @param consumer the consumer's name
     * @return true if it was registered
     * @throws dev.lattice.spi.WalStorageException if the stored positions cannot be read or written
     */
    public boolean removeChangeConsumer(String tree, String consumer) {
        LogId.validateTreeName(tree);
        ChangeFeeds.checkConsumerName(consumer);
        checkOpen();
        return ctx.feeds.remove(tree, consumer);
    }

    /** A dropped tree's change-feed consumers are unregistered (a re-created tree's offsets start over). */
    private void forgetChangeConsumers(String tree) {
        try {
            for (String c : ctx.feeds.of(tree).keySet()) {
                ctx.feeds.remove(tree, c);
            }
        } catch (RuntimeException e) {
            LOG.warn("tree '{}' dropped, but its change-feed consumers could not be unregistered: {}", tree, e.toString());
        }
    }

    private Placement placementOf(String tree) {
        LogId.validateTreeName(tree);
        checkOpen();
        catalog.refresh();
        Placement p = catalog.placement(tree);
        if (p == null) {
            throw new NoSuchTreeException(tree, "tree '" + tree + "' does not exist");
        }
        return p;
    }

    /** The tree if this lattice has it open (its state then helps the feed decide conditional writes), else null. */
    private TreeImpl openTree(String name) {
        CompletableFuture<TreeImpl> f = trees.get(name);
        return f != null && f.isDone() && !f.isCompletedExceptionally() ? f.join() : null;
    }

    /** Called by a tree's open once its logs are replayed and registered, before it resolves leftovers. */
    void replayed(TreeImpl t) {
        CompletableFuture<Void> f = replayed.get(t.name());
        if (f != null) {
            f.complete(null);
        }
    }

    /**
     * For resolving atomic writes at open: waits until tree {@code name} is replayed, opening it if nobody is. Never
     * waits for a tree's resolution (only for its replay, which waits on nothing), so trees whose leftovers name
     * each other as coordinators open without deadlock.
     *
     * @return false when no such tree exists (then no decision of it exists either)
     * @throws RuntimeException when the tree exists and fails to open (the caller must not assume an abort)
     */
    boolean awaitReplayed(String name) {
        CompletableFuture<Void> f = replayed.get(name);
        if (f == null) {
            if (catalog.placement(name) == null) {
                catalog.refresh();
                if (catalog.placement(name) == null) {
                    return false;
                }
            }
            tree(name);
            f = replayed.get(name);
            if (f == null) {
                throw new LatticeException("tree '" + name + "' is not open after opening it", null);
            }
        }
        try {
            f.join();
            return true;
        } catch (java.util.concurrent.CompletionException e) {
            throw new LatticeException("tree '" + name + "' holds decisions of atomic writes and failed to open: "
                    + e.getCause().getMessage(), e.getCause());
        }
    }

    /** @return the trees opened (replayed) so far in this lattice */
    List<TreeImpl> openTrees() {
        List<TreeImpl> out = new ArrayList<>();
        for (CompletableFuture<TreeImpl> f : trees.values()) {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                out.add(f.join());
            }
        }
        return out;
    }

    /**
     * The trees that exist on the provider (from the catalog), with their partition counts.
     *
     * @return tree name to partition count, sorted by name
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public Map<String, Integer> trees() {
        Map<String, Integer> out = new java.util.TreeMap<>();
        placements().forEach((k, v) -> out.put(k, v.keys().size()));
        return out;
    }

    /**
     * The placement of every tree in the catalog: which provider key each log lives on.
     *
     * @return tree name to placement, sorted by name
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public Map<String, Placement> placements() {
        checkOpen();
        catalog.refresh();
        return catalog.all();
    }

    /**
     * The provider keys registered in this lattice.
     *
     * @return keys, {@code default} first, then in registration order
     */
    public List<String> providerKeys() {
        return new ArrayList<>(ctx.providers.keySet());
    }

    /**
     * Checks that every provider key the catalog's placements name is registered here, so that every tree can be
     * opened by this process.
     *
     * @return tree name to the keys it needs that are missing here; empty when everything resolves
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public Map<String, List<String>> auditPlacements() {
        Map<String, List<String>> missing = new java.util.TreeMap<>();
        placements().forEach((tree, placement) -> {
            List<String> gone = placement.distinctKeys().stream().filter(k -> !ctx.providers.containsKey(k)).toList();
            if (!gone.isEmpty()) {
                missing.put(tree, gone);
            }
        });
        return missing;
    }

    /**
     * Plans a move of logs of a tree to other provider keys (dry run: nothing changes).
     *
     * @param tree the tree's name (opened if it is not open yet)
     * @param targets partition number to target provider key
     * @return per log: source and target keys, offsets, entries, bytes and checkpoint bytes to copy
     * @throws IllegalArgumentException if a partition does not exist or a target cannot hold the tree's entries
     * @throws dev.lattice.spi.ProviderMissingException if a key is not registered
     */
    public MovePlan planMove(String tree, Map<Integer, String> targets) {
        return mover.plan((TreeImpl) tree(tree), Map.copyOf(targets));
    }

    /**
     * Moves logs of a tree to other provider keys, preserving offsets, while writes continue: copies each log's
     * retained range and latest checkpoint to its target, pauses the logs (writers wait, bounded by admission),
     * copies what landed meanwhile, then flips the placement once for all logs with compare-and-set in the catalog
     * and continues on the targets. If anything fails before the flip, the placement is unchanged and the logs
     * continue on their sources. The source copies stay until {@link #reclaim}.
     *
     * @param tree the tree's name
     * @param targets partition number to target provider key (partitions already there are skipped)
     * @param pauseTimeout how long the logs may take to drain before the move gives up
     * @return the new placement (or the unchanged one when nothing had to move)
     * @throws IllegalArgumentException if a partition does not exist or a target cannot hold the tree's entries
     * @throws IllegalStateException if another move changed the placement meanwhile
     * @throws dev.lattice.spi.WalStorageException if a provider fails (placement unchanged)
     * @throws LatticeException if the logs did not drain in time (placement unchanged)
     */
    public Placement move(String tree, Map<Integer, String> targets, java.time.Duration pauseTimeout) {
        TreeImpl t = (TreeImpl) tree(tree);
        synchronized (mover) {
            return mover.move(t, Map.copyOf(targets), pauseTimeout);
        }
    }

    /**
     * Drops the copy of a log that a move left on a provider the log is no longer placed on: trims all its entries,
     * deletes its runs and its older checkpoints (the SPI keeps a log's latest checkpoint, so that one stays).
     *
     * @param tree the tree's name
     * @param partition the partition
     * @param key the provider key to reclaim from
     * @return bytes dropped: log payload bytes trimmed plus the lengths of the runs deleted (0 if the copy was
     *     already empty)
     * @throws IllegalStateException if the log is placed on {@code key}
     * @throws dev.lattice.spi.ProviderMissingException if the key is not registered
     */
    public long reclaim(String tree, int partition, String key) {
        TreeImpl t = (TreeImpl) tree(tree);
        synchronized (mover) {
            return mover.reclaim(t, partition, key);
        }
    }

    /**
     * A registered provider, for inspection.
     *
     * @param key the provider key
     * @return the provider
     * @throws dev.lattice.spi.ProviderMissingException if the key is not registered
     */
    public WalStorageProvider provider(String key) {
        return ctx.handle(key, null).provider();
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
     * What is wrong with an open tree's logs now (see {@link Tree#healthIssues()}).
     *
     * @param tree the name
     * @return the issues; empty for a healthy tree or one not open in this lattice
     */
    public List<HealthIssue> healthIssues(String tree) {
        CompletableFuture<TreeImpl> f = trees.get(tree);
        return f != null && f.isDone() && !f.isCompletedExceptionally() ? f.join().healthIssues() : List.of();
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
     * Removes a listener; it receives no call that starts after this returns.
     *
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

    /** {@return counters since open (provider calls, batches, replay, checkpoints)} */
    public LatticeStats stats() {
        return ctx.stats.snapshot();
    }

    /** {@return the registry the meters go to (the one configured, or a private simple registry)} */
    public MeterRegistry meterRegistry() {
        return ctx.registry;
    }

    /** {@return the main ({@code default}) provider's descriptor} */
    public ProviderDescriptor providerDescriptor() {
        return ctx.descriptor;
    }

    /**
     * {@return the main ({@code default}) provider, which also holds the catalog (for inspection; writing to the logs
     * of open trees behind the engine's back breaks them)}
     */
    public WalStorageProvider provider() {
        return ctx.provider;
    }

    /** {@return estimated JVM bytes of the live data of the open trees} */
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
        long deadline = System.nanoTime() + ctx.config.closeTimeout.toNanos();
        if (!ctx.atomics.quiesce(deadline)) {
            LOG.warn("close: atomic writes still running after {} ms; the next open resolves them",
                    ctx.config.closeTimeout.toMillis());
        }
        List<LogPipeline> all = new ArrayList<>();
        for (TreeImpl t : openTrees()) {
            all.addAll(List.of(t.pipelines()));
        }
        for (LogPipeline p : all) {
            p.beginClose();
        }
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
        closeOwned(ctx.providers.values());
        ctx.meters.close();
    }
}
