package dev.lattice.cluster;

import dev.lattice.engine.AtomicOp;
import dev.lattice.engine.AtomicResult;
import dev.lattice.engine.AtomicWrite;
import dev.lattice.engine.Tree;
import dev.lattice.spi.LogId;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * The atomic-write builder of trees served by the cluster ({@link ClusterTree#atomic()}, {@link LatticeCluster#atomic()}):
 * puts, deletes, range deletes and preconditions on keys of one or several cluster trees, committed by the entity of
 * the lowest log they touch (by tree name, then partition) with the engine's WAL protocol ({@link AtomicCoordinator}).
 * The same guarantees as the embedded builder: all or nothing, one version for every mutation, and no reader of a
 * point key sees part of it. Idempotency keys are recorded in the coordinator log ({@link #idempotencyKey}).
 * Not thread-safe; committed once.
 */
final class ClusterAtomicWrite extends AtomicWrite {

    /** Orders logs by tree name, then partition: the order in which every write prepares them (no lock cycles). */
    static final Comparator<LogId> LOG_ORDER = Comparator.comparing(LogId::tree).thenComparingInt(LogId::partition);

    private record Part(ClusterTree tree, AtomicOp op) {
    }

    private final Router router;
    private final ClusterTree bound;
    private final List<Part> parts = new ArrayList<>();
    private boolean committed;
    private String idempotencyKey;

    ClusterAtomicWrite(Router router, ClusterTree bound) {
        this.router = router;
        this.bound = bound;
    }

    private ClusterTree own(Tree tree) {
        Objects.requireNonNull(tree, "tree");
        if (!(tree instanceof ClusterTree t) || t.router() != router) {
            throw new IllegalArgumentException("tree '" + tree.name() + "' is not served by this cluster node");
        }
        return t;
    }

    private ClusterTree boundTree() {
        if (bound == null) {
            throw new IllegalStateException("this atomic write is not bound to a tree; pass the tree "
                    + "(cluster.atomic().put(tree, key, value))");
        }
        return bound;
    }

    private AtomicWrite add(ClusterTree t, AtomicOp.Kind kind, String key, byte[] value, long number) {
        if (committed) {
            throw new IllegalStateException("this atomic write was already committed");
        }
        t.checkKey(key);
        if (value != null && kind != AtomicOp.Kind.DELETE_RANGE) {
            t.checkValue(value);
        }
        parts.add(new Part(t, new AtomicOp(kind, key, value == null ? null : value.clone(), number)));
        return this;
    }

    @Override
    public AtomicWrite put(Tree tree, String key, byte[] value, Duration ttl) {
        ClusterTree t = own(tree);
        Objects.requireNonNull(value, "value");
        return add(t, AtomicOp.Kind.PUT_TTL, key, value, System.currentTimeMillis() + ClusterTree.ttlMillis(ttl));
    }

    /** A put that expires at {@code expiresAtMillis} (ms since the epoch): one expiry for every key of a putAll. */
    AtomicWrite putUntil(ClusterTree tree, String key, byte[] value, long expiresAtMillis) {
        return add(tree, AtomicOp.Kind.PUT_TTL, key, Objects.requireNonNull(value, "value"), expiresAtMillis);
    }

    @Override
    public AtomicWrite deleteRange(Tree tree, String fromInclusive, String toExclusive) {
        ClusterTree t = own(tree);
        Objects.requireNonNull(fromInclusive, "fromInclusive");
        Objects.requireNonNull(toExclusive, "toExclusive");
        t.checkKey(toExclusive);
        if (fromInclusive.compareTo(toExclusive) >= 0) {
            throw new IllegalArgumentException("range ['" + fromInclusive + "', '" + toExclusive + "') is empty");
        }
        return add(t, AtomicOp.Kind.DELETE_RANGE, fromInclusive, toExclusive.getBytes(StandardCharsets.UTF_8), 0);
    }

    @Override
    public AtomicWrite put(String key, byte[] value, Duration ttl) {
        return put(boundTree(), key, value, ttl);
    }

    @Override
    public AtomicWrite deleteRange(String fromInclusive, String toExclusive) {
        return deleteRange(boundTree(), fromInclusive, toExclusive);
    }

    @Override
    public AtomicWrite put(Tree tree, String key, byte[] value) {
        return add(own(tree), AtomicOp.Kind.PUT, key, Objects.requireNonNull(value, "value"), 0);
    }

    @Override
    public AtomicWrite delete(Tree tree, String key) {
        return add(own(tree), AtomicOp.Kind.DELETE, key, null, 0);
    }

    @Override
    public AtomicWrite expectVersion(Tree tree, String key, long version) {
        if (version < 0) {
            throw new IllegalArgumentException("expected version must be >= 0 (0 = absent), got " + version);
        }
        return add(own(tree), AtomicOp.Kind.EXPECT, key, null, version);
    }

    @Override
    public AtomicWrite expectAbsent(Tree tree, String key) {
        return expectVersion(tree, key, 0);
    }

    @Override
    public AtomicWrite put(String key, byte[] value) {
        return put(boundTree(), key, value);
    }

    @Override
    public AtomicWrite delete(String key) {
        return delete(boundTree(), key);
    }

    @Override
    public AtomicWrite expectVersion(String key, long version) {
        return expectVersion(boundTree(), key, version);
    }

    @Override
    public AtomicWrite expectAbsent(String key) {
        return expectAbsent(boundTree(), key);
    }

    /**
     * Makes the write idempotent, as {@link AtomicWrite#idempotencyKey} does in the embedded engine: the key is
     * recorded with the decision in the coordinator log (the write's lowest log), so committing a write with the same
     * key and the same keys again, from any node, before or after a hand-off or failover of that log, re-attaches to
     * the first outcome ({@link AtomicResult#reattached()}) for {@code LatticeConfig.atomicRetention} after it was
     * decided. A retry while the first is still being committed on the coordinator's node waits for it. A write
     * interrupted before its decision has no outcome; its retry writes anew.
     *
     * @param key 1..256 characters
     * @return this
     * @throws IllegalArgumentException if the key is empty or longer than 256 characters
     */
    @Override
    public AtomicWrite idempotencyKey(String key) {
        super.idempotencyKey(key);
        this.idempotencyKey = key;
        return this;
    }

    @Override
    public AtomicResult commit() {
        return Router.await(commitAsync());
    }

    @Override
    public CompletableFuture<AtomicResult> commitAsync() {
        if (committed) {
            return CompletableFuture.failedFuture(new IllegalStateException("this atomic write was already committed"));
        }
        committed = true;
        try {
            return send();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<AtomicResult> send() {
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("an atomic write needs at least one operation");
        }
        TreeSet<LogId> logs = new TreeSet<>(LOG_ORDER);
        Set<String> written = new HashSet<>();
        Set<String> trees = new HashSet<>();
        long bytes = 0;
        List<AtomicOp> ops = new ArrayList<>(parts.size());
        List<String> treeNames = new ArrayList<>(parts.size());
        for (Part p : parts) {
            AtomicOp op = p.op();
            String tree = p.tree().name();
            trees.add(tree);
            if (op.kind() == AtomicOp.Kind.DELETE_RANGE) {
                for (int q = 0; q < p.tree().partitions(); q++) {
                    logs.add(new LogId(tree, q));
                }
            } else {
                logs.add(new LogId(tree, p.tree().partitionOf(op.key())));
                if (op.kind() != AtomicOp.Kind.EXPECT && !written.add(tree + '\u0000' + op.key())) {
                    throw new IllegalArgumentException("key '" + op.key() + "' of tree '" + tree + "' is written twice"
                            + " in one atomic write");
                }
            }
            bytes += op.key().length() * 3L + (op.value() == null ? 0 : op.value().length) + tree.length() * 3L + 24;
            ops.add(op);
            treeNames.add(tree);
        }
        long budget = parts.get(0).tree().messageBudget();
        if (bytes > budget) {
            throw new IllegalArgumentException("atomic write of " + bytes + " bytes is more than one cluster message"
                    + " carries (" + budget + " bytes, below pekko.remote.artery.advanced.maximum-frame-size)");
        }
        LogId coordinator = logs.first();
        boolean crossTree = trees.size() > 1;
        String idem = idempotencyKey;
        Op op = idem != null ? Op.ATOMIC_COMMIT_IDEMPOTENT : crossTree ? Op.ATOMIC_COMMIT_TREES : Op.ATOMIC_COMMIT;
        List<String> opTrees = crossTree || idem != null ? treeNames : null;
        String txnId = AtomicCoordinator.newTxnId();
        int logCount = logs.size();
        return router.send(new LogAddress(coordinator.tree(), coordinator.partition()), op,
                        r -> Request.atomic(op, txnId, idem, ops, opTrees, r), router.operationTimeout())
                .thenApply(res -> new AtomicResult(res.number(), idem != null && !res.flag(), ops.size(),
                        logCount));
    }
}
