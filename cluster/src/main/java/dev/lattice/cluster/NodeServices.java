package dev.lattice.cluster;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.PartialTree;
import dev.lattice.engine.TreeOptions;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the entities of one node share: the node's engine, its partial trees, and a pool for calls that block
 * (hosting, reads, atomic writes), so that no actor thread waits on the provider. Thread-safe.
 */
final class NodeServices implements AutoCloseable {

    private final Lattice lattice;
    private final LatticeClusterConfig config;
    private final ConcurrentHashMap<String, PartialTree> trees = new ConcurrentHashMap<>();
    private final ThreadPoolExecutor blocking;
    private final ExecutorService replies;
    private final AtomicCoordinator atomics = new AtomicCoordinator(this);
    /** Wakes the partitions' prepare gates when holds expire. */
    private final java.util.concurrent.ScheduledThreadPoolExecutor timer;
    private volatile Router router;
    private volatile CutHolds cutHolds;
    private volatile PeerProtocols protocols;
    /** Test hook: this node's entities drop prepare holds unanswered, as an owner of an older version does. */
    private volatile boolean dropPrepareHolds;

    NodeServices(Lattice lattice, LatticeClusterConfig config) {
        this.lattice = lattice;
        this.config = config;
        AtomicInteger n = new AtomicInteger();
        this.blocking = new ThreadPoolExecutor(config.blockingThreads(), config.blockingThreads(), 60,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "lattice-cluster-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        blocking.allowCoreThreadTimeOut(true);
        AtomicInteger replyThreads = new AtomicInteger();
        // the answers of requests (asks) go on here, never on CompletableFuture's default pool: on a machine with
        // fewer than 3 CPUs that pool is a new thread per task (measured: one thread started per request)
        this.replies = java.util.concurrent.Executors.newCachedThreadPool(task -> {
            Thread t = new Thread(task, "lattice-cluster-reply-" + replyThreads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.timer = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "lattice-cluster-holds");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
    }

    /** Set once sharding is started (entities send to other entities through it). */
    void router(Router r) {
        this.router = r;
        this.protocols = r.protocols();
        this.cutHolds = new CutHolds(r, config.scanPrepareHold(), config.requestTimeout());
    }

    /** @return what this node and its peers understand on the wire (set with the router) */
    PeerProtocols protocols() {
        return protocols;
    }

    /** @return the prepare holds this node's scans and counts place (set with the router) */
    CutHolds cutHolds() {
        return cutHolds;
    }

    /** @return a new prepare gate for a partition's entity, bounded by this node's {@code scanPrepareHold} */
    PrepareGate newPrepareGate() {
        return new PrepareGate(config.scanPrepareHold(), timer, blocking);
    }

    /** Test hook: when true, this node's entities leave {@link Op#PREPARE_HOLD} unanswered and hold nothing. */
    void dropPrepareHolds(boolean drop) {
        this.dropPrepareHolds = drop;
    }

    boolean dropsPrepareHolds() {
        return dropPrepareHolds;
    }

    Router router() {
        return router;
    }

    AtomicCoordinator atomics() {
        return atomics;
    }

    Lattice lattice() {
        return lattice;
    }

    /** @return this node's partial tree of {@code name}, creating the tree with the configured options if needed */
    PartialTree tree(String name) {
        return trees.computeIfAbsent(name, n -> lattice.hostTree(n, TreeOptions.defaults()));
    }

    /** @return the same, creating a missing tree with {@code options} */
    PartialTree tree(String name, TreeOptions options) {
        return trees.computeIfAbsent(name, n -> lattice.hostTree(n, options));
    }

    /** @return the partitions of {@code name} this node hosts now, empty when it has not opened the tree */
    java.util.Set<Integer> hostedPartitions(String name) {
        PartialTree t = trees.get(name);
        return t == null ? java.util.Set.of() : java.util.Set.copyOf(t.hostedPartitions());
    }

    ExecutorService blocking() {
        return blocking;
    }

    /**
     * @return where answers to this node's requests and their retries run (threads reused while busy, none kept
     *     idle past a minute; never the default pool of {@code CompletableFuture})
     */
    ExecutorService replies() {
        return replies;
    }

    Duration releaseTimeout() {
        return config.releaseTimeout();
    }

    int stashCapacity() {
        return 10_000;
    }

    /** Bytes of keys and values one message may carry (below Artery's maximum frame size). */
    private volatile long messageBudget = 200 * 1024;

    void messageBudget(long bytes) {
        this.messageBudget = bytes;
    }

    long messageBudget() {
        return messageBudget;
    }

    int scanPageEntries() {
        return config.scanPageEntries();
    }

    /** How long a held scan's session may sit idle before its entity closes it: the operation timeout. */
    Duration scanSessionTimeout() {
        return config.operationTimeout();
    }

    /** How many held scans one partition's entity keeps open at most (more are refused as saturation). */
    int maxScanSessions() {
        return 1024;
    }

    @Override
    public void close() {
        blocking.shutdown();
        replies.shutdown();
        timer.shutdown();
    }
}
