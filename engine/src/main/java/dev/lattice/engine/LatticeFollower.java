package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.RunNotFoundException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A read-only follower of a lattice (ARCHITECTURE.md 5.9, docs/engine.md "Read-only followers"): it never claims a
 * log, so it never fences the process that owns and writes the trees. A tree opened here is built from each log's
 * latest checkpoint (manifest of runs) plus the committed entries after it, then follows the logs: one poller thread
 * reads every followed log's new committed entries every {@link LatticeConfig.Builder#followerPollInterval}. Reads
 * therefore see a committed prefix of each log that lags the owner by about one poll interval plus one provider read
 * (metric {@code lattice.follower.staleness.seconds}); an atomic write becomes visible whole in every followed log of
 * this follower at once. It keeps following through the owner's checkpoints, trims, flushes, compactions and moves
 * (it rebuilds a log from its latest checkpoint when the owner trimmed past it or deleted a run it used) and notices
 * catalog changes (moves, drops) within about a second.
 *
 * <p>Every write through a follower's trees throws {@link ReadOnlyException}. A scan that runs while the owner
 * deletes a run it is reading can fail with {@link RunNotFoundException}; start it again. Thread-safe.
 */
public final class LatticeFollower implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LatticeFollower.class);
    private static final long CATALOG_REFRESH_NANOS = 1_000_000_000L;

    private final EngineContext ctx;
    private final Catalog catalog;
    private final FollowerTxns txns = new FollowerTxns();
    private final Map<String, FollowerTree> trees = new ConcurrentHashMap<>();
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(
            EngineContext.daemonThreads("lattice-follower"));
    private volatile long catalogReadNanos = System.nanoTime();
    private volatile boolean closed;

    private LatticeFollower(EngineContext ctx) {
        this.ctx = ctx;
        this.catalog = new Catalog(ctx);
        long period = ctx.config.followerPollInterval.toMillis();
        poller.scheduleWithFixedDelay(this::pollAll, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Opens a follower (see {@link Lattice#openReadOnly(LatticeConfig)}).
     *
     * @param config the configuration
     * @return the follower, with no tree opened yet
     * @throws NullPointerException if {@code config} is null
     * @throws dev.lattice.spi.WalStorageException if a provider fails to open or the catalog cannot be read
     */
    static LatticeFollower open(LatticeConfig config) {
        Objects.requireNonNull(config, "config");
        Map<String, ProviderHandle> handles = Lattice.openProviders(config, true);
        MeterRegistry registry = config.meterRegistry != null ? config.meterRegistry : new SimpleMeterRegistry();
        EngineContext ctx = new EngineContext(config, java.util.Collections.unmodifiableMap(handles), registry);
        LatticeFollower f = new LatticeFollower(ctx);
        try {
            f.catalog.refresh();
        } catch (RuntimeException e) {
            f.poller.shutdownNow();
            ctx.shutdownThreads(false);
            Lattice.closeOwned(handles.values());
            throw e;
        }
        return f;
    }

    /**
     * The tree with this name, opened (checkpoints and log tails read) on first use and followed from then on. Never
     * creates a tree.
     *
     * @param name the tree's name
     * @return a read-only view of the tree: reads as for {@link Lattice#tree}, writes throw {@link ReadOnlyException}
     * @throws IllegalArgumentException if the name breaks the {@link LogId} rules
     * @throws NoSuchTreeException if the catalog has no such tree (never created, or dropped)
     * @throws LatticeShuttingDownException if the follower is closed
     * @throws dev.lattice.spi.CorruptLogException if a log entry or checkpoint is corrupt (names log and offset)
     * @throws dev.lattice.spi.WalStorageException if the provider fails while opening
     */
    public Tree tree(String name) {
        LogId.validateTreeName(name);
        checkOpen();
        FollowerTree t = trees.get(name);
        if (t != null) {
            return t;
        }
        Future<FollowerTree> f = poller.submit(() -> openOnPoller(name));
        return await(f, "opening tree '" + name + "'");
    }

    /** Opens a tree on the poller thread, so that its first states and the polls of other trees never interleave. */
    private FollowerTree openOnPoller(String name) {
        FollowerTree known = trees.get(name);
        if (known != null) {
            return known;
        }
        catalog.refresh();
        catalogReadNanos = System.nanoTime();
        Placement p = catalog.placement(name);
        if (p == null) {
            throw new NoSuchTreeException(name, "tree '" + name + "' does not exist (a follower never creates trees)");
        }
        Catalog.Meta m = catalog.meta(name);
        FollowerTree t = new FollowerTree(this, ctx, p, PartitionHash.of(m == null ? 1 : m.hashVersion()), txns);
        for (FollowerLog l : t.logs()) {
            txns.register(l);
        }
        try {
            for (FollowerLog l : t.logs()) {
                l.open();
            }
        } catch (RuntimeException e) {
            for (FollowerLog l : t.logs()) {
                txns.unregister(l);
                PartitionState s = l.state();
                if (s != null) {
                    s.clear();
                }
            }
            throw e;
        }
        registerMeters(t);
        trees.put(name, t);
        return t;
    }

    private void registerMeters(FollowerTree t) {
        for (FollowerLog l : t.logs()) {
            var tags = ctx.meters.tags("tree", t.name(), "partition", Integer.toString(l.log.partition()));
            ctx.meters.gauge("lattice.follower.lag.entries",
                    "committed log entries the follower had not applied at its last poll", "entries", tags,
                    l::lagEntries);
            ctx.meters.gauge("lattice.follower.staleness.seconds",
                    "time since the follower last had every committed entry of the log applied", "seconds", tags,
                    l::stalenessSeconds);
        }
    }

    /** The poller: every followed log's new entries, and about once a second the catalog (moves and drops). */
    private void pollAll() {
        if (closed) {
            return;
        }
        try {
            if (System.nanoTime() - catalogReadNanos > CATALOG_REFRESH_NANOS) {
                catalogReadNanos = System.nanoTime();
                refreshCatalog();
            }
        } catch (RuntimeException e) {
            LOG.warn("follower: reading the catalog failed; will retry", e);
        }
        for (FollowerTree t : trees.values()) {
            for (FollowerLog l : t.logs()) {
                try {
                    l.poll();
                } catch (RuntimeException e) {
                    LOG.warn("follower: polling {} failed; will retry", l.log, e);
                }
            }
        }
    }

    private void refreshCatalog() {
        catalog.refresh();
        for (FollowerTree t : trees.values()) {
            Placement p = catalog.placement(t.name());
            if (p == null) {
                t.markDropped();
                trees.remove(t.name(), t);
                for (FollowerLog l : t.logs()) {
                    txns.unregister(l);
                }
            } else if (p.version() != t.placement().version()) {
                t.placementChanged(p);
            }
        }
    }

    /** A reader found a run gone: rebuild the log on the poller thread and wait, so that readers retry on new state. */
    void reloadAfterMissingRun(FollowerLog l, RunNotFoundException e) {
        await(poller.submit(() -> {
            l.reloadAfterMissingRun(e);
            return null;
        }), "rebuilding " + l.log + " after a run was deleted");
    }

    private <T> T await(Future<T> f, String what) {
        long ms = Math.max(1, ctx.config.providerCallTimeout.toMillis()) * 4;
        try {
            return f.get(ms, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LatticeException("interrupted while " + what, e);
        } catch (TimeoutException e) {
            throw new dev.lattice.spi.ProviderUnavailableException(null, what + " did not finish within " + ms
                    + " ms (4 x LatticeConfig providerCallTimeout)", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new LatticeException(what + " failed", e.getCause());
        } catch (java.util.concurrent.RejectedExecutionException e) {
            throw new LatticeShuttingDownException("follower is closed");
        }
    }

    /**
     * Whether a tree exists in the catalog (read now). Never creates it.
     *
     * @param name the tree's name
     * @return true if the catalog has it
     * @throws IllegalArgumentException if the name breaks the {@link LogId} rules
     * @throws LatticeShuttingDownException if the follower is closed
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public boolean exists(String name) {
        LogId.validateTreeName(name);
        checkOpen();
        catalog.refresh();
        return catalog.placement(name) != null;
    }

    /**
     * Every tree of the catalog (read now) with its partition count, hash version, creation time and placement.
     *
     * @return the trees, sorted by name
     * @throws LatticeShuttingDownException if the follower is closed
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public List<TreeInfo> treeInfos() {
        checkOpen();
        return catalog.treeInfos();
    }

    /**
     * One tree's catalog entry (read now).
     *
     * @param name the tree's name
     * @return what the catalog knows of it
     * @throws NoSuchTreeException if it does not exist
     * @throws LatticeShuttingDownException if the follower is closed
     * @throws dev.lattice.spi.WalStorageException if the catalog cannot be read
     */
    public TreeInfo treeInfo(String name) {
        LogId.validateTreeName(name);
        checkOpen();
        return catalog.treeInfo(name);
    }

    /**
     * How far this follower is behind on a tree it opened: the most committed entries of one of its logs not yet
     * applied at the last poll.
     *
     * @param tree the tree's name
     * @return entries, 0 when every log was caught up at its last poll
     * @throws NoSuchTreeException if this follower has not opened the tree (or it was dropped)
     */
    public long lagEntries(String tree) {
        long max = 0;
        for (FollowerLog l : opened(tree).logs()) {
            max = Math.max(max, l.lagEntries());
        }
        return max;
    }

    /**
     * Staleness bound of a tree's reads: the longest time, over its logs, since a poll last found every committed
     * entry applied. A read now reflects every write the owner committed at least this long ago.
     *
     * @param tree the tree's name
     * @return seconds (about one poll interval when healthy)
     * @throws NoSuchTreeException if this follower has not opened the tree (or it was dropped)
     */
    public double stalenessSeconds(String tree) {
        double max = 0;
        for (FollowerLog l : opened(tree).logs()) {
            max = Math.max(max, l.stalenessSeconds());
        }
        return max;
    }

    /**
     * Waits until every log of an opened tree has applied what was committed when this call started (for tools and
     * tests that need read-your-writes across processes).
     *
     * @param tree the tree's name
     * @param timeoutMillis how long to wait, milliseconds
     * @return true when caught up in time
     * @throws NoSuchTreeException if this follower has not opened the tree
     * @throws dev.lattice.spi.WalStorageException if the provider fails
     */
    public boolean awaitCaughtUp(String tree, long timeoutMillis) {
        FollowerTree t = opened(tree);
        Map<FollowerLog, Long> targets = new java.util.HashMap<>();
        for (FollowerLog l : t.logs()) {
            targets.put(l, ctx.bounded(l.log, "state", () -> l.currentProvider().state(l.log)).committedTail());
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            boolean all = true;
            for (Map.Entry<FollowerLog, Long> e : targets.entrySet()) {
                all &= e.getKey().state().appliedOffset >= e.getValue();
            }
            if (all) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }

    private FollowerTree opened(String tree) {
        FollowerTree t = trees.get(tree);
        if (t == null) {
            throw new NoSuchTreeException(tree, "this follower has not opened tree '" + tree + "'");
        }
        return t;
    }

    /**
     * The meter registry the follower's meters ({@code lattice.follower.*}) are in.
     *
     * @return the registry
     */
    public MeterRegistry meterRegistry() {
        return ctx.registry;
    }

    void checkOpen() {
        if (closed) {
            throw new LatticeShuttingDownException("follower is closed");
        }
    }

    /**
     * Stops following, gives back the memory of the followed states and closes the providers this follower opened.
     * A second call is a no-op. Never throws for provider failures during close (they are logged).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        poller.shutdown();
        try {
            if (!poller.awaitTermination(ctx.config.closeTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                poller.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            poller.shutdownNow();
        }
        for (FollowerTree t : trees.values()) {
            for (FollowerLog l : t.logs()) {
                PartitionState s = l.state();
                if (s != null) {
                    s.clear();
                }
            }
        }
        trees.clear();
        ctx.shutdownThreads();
        Lattice.closeOwned(ctx.providers.values());
        ctx.meters.close();
    }
}
