package dev.lattice.cluster;

import dev.lattice.engine.AtomicDecision;
import dev.lattice.engine.AtomicOp;
import dev.lattice.engine.AtomicWriteAbortedException;
import dev.lattice.engine.KeySetDigest;
import dev.lattice.engine.PartialTree;
import dev.lattice.engine.PreconditionFailedException;
import dev.lattice.engine.WriteFailedException;
import dev.lattice.spi.LogId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The cluster's side of atomic writes over several logs (partitions of one tree or of several): the engine's WAL protocol (PREPARE in every participant, the
 * DECISION in the coordinator log, RESOLVE in the others) with its steps as messages between the logs' entities.
 * <ol>
 *   <li>the client sends the whole write to the entity of its lowest log (by tree name, then partition), the
 *       coordinator;</li>
 *   <li>the coordinator prepares the parts one by one in that order (so two writes never wait on each other's
 *       locks in a cycle), its own part locally, the others by {@link Op#PREPARE};</li>
 *   <li>when all are prepared it records the decision in its log (the commit point) and answers the client;</li>
 *   <li>it sends {@link Op#RESOLVE} to the other participants (retried), which makes their parts visible.</li>
 * </ol>
 * Between 3 and 4 a participant's readers wait for the outcome (the engine's pending-read wait) rather than read
 * from before the write; a participant that learns nothing (the coordinator died, or its prepare survived a
 * hand-off) asks the coordinator's entity with {@link Op#DECISION}: a recorded decision is answered as is; a write
 * still in flight on the coordinator's node is waited for; anything else is recorded as aborted first, so the
 * answer can never change (the coordinator's log is claimed by whoever answers, which fences an older coordinator
 * that might still try to decide). Thread-safe.
 */
final class AtomicCoordinator {

    private static final Logger LOG = LoggerFactory.getLogger(AtomicCoordinator.class);
    /** Diagnostics of each step (debug level; off by default). */
    private static final Logger TRACE = LoggerFactory.getLogger("dev.lattice.cluster.trace");

    private final NodeServices node;
    /** Writes this node is coordinating, until decided. */
    private final ConcurrentHashMap<String, CompletableFuture<AtomicDecision>> inFlight = new ConcurrentHashMap<>();
    /** Writes with an idempotency key this node is coordinating, by coordinator log and key, until answered. */
    private final ConcurrentHashMap<String, KeyedWrite> byIdempotencyKey = new ConcurrentHashMap<>();

    private record KeyedWrite(long digest, CompletableFuture<AtomicDecision> outcome) {
    }

    AtomicCoordinator(NodeServices node) {
        this.node = node;
    }

    /** @return a new write id */
    static String newTxnId() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    /**
     * Coordinates {@code q} (an {@link Op#ATOMIC_COMMIT}, or {@link Op#ATOMIC_COMMIT_TREES} whose parts name their
     * trees) from the entity of its lowest log.
     *
     * @param gate the coordinator partition's prepare gate: its own part, the write's first, waits there while a
     *     scan or count holds the partition's prepares
     */
    CompletableFuture<Response> commit(PartialTree tree, int coordinatorPartition, Request q, PrepareGate gate) {
        String txnId = q.key();
        LogId coordinator = new LogId(tree.name(), coordinatorPartition);
        TreeMap<LogId, List<AtomicOp>> parts = new TreeMap<>(ClusterAtomicWrite.LOG_ORDER);
        List<AtomicOp> ops = q.atomicOps();
        for (int i = 0; i < ops.size(); i++) {
            AtomicOp op = ops.get(i);
            AtomicOp.Kind kind = op.kind();
            String name = q.trees() == null ? tree.name() : q.trees().get(i);
            PartialTree of = name.equals(tree.name()) ? tree : node.tree(name);
            if (kind == AtomicOp.Kind.DELETE_RANGE) {
                for (int p = 0; p < of.partitions(); p++) {
                    parts.computeIfAbsent(new LogId(name, p), x -> new ArrayList<>()).add(op);
                }
            } else {
                parts.computeIfAbsent(new LogId(name, of.partitionOf(op.key())), x -> new ArrayList<>()).add(op);
            }
        }
        if (!parts.firstKey().equals(coordinator)) {
            throw new IllegalArgumentException("atomic write " + txnId + " was sent to " + coordinator
                    + ", not to its lowest log " + parts.firstKey());
        }
        String idemKey = q.op() == Op.ATOMIC_COMMIT_IDEMPOTENT ? q.toKey() : null;
        long digest = idemKey == null ? 0 : digest(q);
        if (idemKey != null) {
            return commitIdempotent(tree, coordinatorPartition, coordinator, txnId, parts, idemKey, digest, gate);
        }
        return commitParts(tree, coordinatorPartition, coordinator, txnId, parts, null, 0, gate);
    }

    /**
     * A write with an idempotency key: an outcome recorded under the key in the coordinator log is answered (flag
     * false: re-attached); a write with the key in flight on this node is waited for; otherwise it is committed
     * with the key in its decision. A precondition failure is recorded under the key too (a retry is told it
     * aborted); any other failure is not (a retry writes anew).
     */
    private CompletableFuture<Response> commitIdempotent(PartialTree tree, int coordinatorPartition, LogId coordinator,
                                                        String txnId, TreeMap<LogId, List<AtomicOp>> parts,
                                                        String idemKey, long digest, PrepareGate gate) {
        Optional<AtomicDecision> recorded = tree.atomicDecisionByIdempotencyKey(coordinatorPartition, idemKey, digest);
        if (recorded.isPresent()) {
            return CompletableFuture.completedFuture(reattached(idemKey, recorded.get()));
        }
        String slot = coordinator + "\u0000" + idemKey; // keys are scoped by the coordinator log that records them
        KeyedWrite mine = new KeyedWrite(digest, new CompletableFuture<>());
        KeyedWrite other = byIdempotencyKey.putIfAbsent(slot, mine);
        if (other != null) {
            if (other.digest != digest) {
                throw new IllegalArgumentException("idempotency key '" + idemKey + "' is in use by an atomic write"
                        + " with a different set of keys");
            }
            return other.outcome.handle((d, e) -> {
                if (e != null) {
                    throw new CompletionException(cause(e));
                }
                return reattached(idemKey, d);
            });
        }
        // looked up again: a write with the key may have been decided between the lookup and the registration
        recorded = tree.atomicDecisionByIdempotencyKey(coordinatorPartition, idemKey, digest);
        if (recorded.isPresent()) {
            byIdempotencyKey.remove(slot, mine);
            mine.outcome.complete(recorded.get());
            return CompletableFuture.completedFuture(reattached(idemKey, recorded.get()));
        }
        return commitParts(tree, coordinatorPartition, coordinator, txnId, parts, idemKey, digest, gate)
                .whenComplete((r, e) -> {
                    byIdempotencyKey.remove(slot, mine);
                    if (e == null) {
                        mine.outcome.complete(new AtomicDecision(true, r.number()));
                    } else {
                        mine.outcome.completeExceptionally(cause(e));
                    }
                });
    }

    private static Response reattached(String idemKey, AtomicDecision d) {
        if (!d.committed()) {
            throw new AtomicWriteAbortedException("the atomic write with idempotency key '" + idemKey
                    + "' was aborted earlier; nothing of it was written", null);
        }
        return Response.ok(d.version(), false);
    }

    /** Which keys (per tree) and operation kinds a write holds, hashed: a retry with the same key must match. */
    static long digest(Request q) {
        List<AtomicOp> ops = q.atomicOps();
        List<String> items = new ArrayList<>(ops.size());
        for (int i = 0; i < ops.size(); i++) {
            AtomicOp op = ops.get(i);
            items.add(q.trees().get(i) + '\u0000' + op.key() + '\u0000' + op.kind()
                    + (op.kind() == AtomicOp.Kind.DELETE_RANGE && op.value() != null
                    ? '\u0000' + new String(op.value(), StandardCharsets.UTF_8) : ""));
        }
        return KeySetDigest.of(items);
    }

    private CompletableFuture<Response> commitParts(PartialTree tree, int coordinatorPartition, LogId coordinator,
                                                   String txnId, TreeMap<LogId, List<AtomicOp>> parts,
                                                   String idemKey, long digest, PrepareGate gate) {
        CompletableFuture<AtomicDecision> outcome = new CompletableFuture<>();
        if (inFlight.putIfAbsent(txnId, outcome) != null) {
            throw new IllegalStateException("atomic write " + txnId + " is already being committed");
        }
        List<LogId> order = new ArrayList<>(parts.keySet());
        long[] floor = {0};
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int i = 0; i < order.size(); i++) {
            LogId p = order.get(i);
            // the parts go in log order: a part continues its tree when the one before it is of the same tree
            boolean continuesTree = i > 0 && order.get(i - 1).tree().equals(p.tree());
            chain = chain.thenCompose(x -> prepare(tree, coordinator, txnId, p, parts.get(p), continuesTree, gate)
                    .thenAccept(f -> {
                        TRACE.debug("coordinator {}: {} prepared in {} (floor {})", coordinator, txnId, p, f);
                        floor[0] = Math.max(floor[0], f);
                    }));
        }
        List<LogId> others = new ArrayList<>();
        for (LogId p : order) {
            if (!p.equals(coordinator)) {
                others.add(p);
            }
        }
        return chain.handle((ok, err) -> err).thenCompose(err -> {
            if (err != null) {
                // a failed precondition is the data's answer: recorded under the key, so a retry gets it too
                String abortKey = cause(err) instanceof PreconditionFailedException ? idemKey : null;
                return abort(tree, coordinatorPartition, txnId, order, outcome, abortKey, digest).thenApply(x -> {
                    throw new CompletionException(cause(err));
                });
            }
            return tree.decideAtomic(coordinatorPartition, txnId, true, others, floor[0], idemKey, digest)
                    .handle((version, e) -> {
                if (e != null) {
                    // the decision may or may not be in the log: participants ask, the log answers
                    inFlight.remove(txnId, outcome);
                    outcome.completeExceptionally(cause(e));
                    throw new CompletionException(cause(e));
                }
                TRACE.debug("coordinator {}: {} committed at {}", coordinator, txnId, version);
                outcome.complete(new AtomicDecision(true, version));
                inFlight.remove(txnId, outcome);
                for (LogId other : others) {
                    resolve(tree, coordinatorPartition, txnId, other, true, version, 0);
                }
                return Response.ok(version, true);
            });
        });
    }

    /**
     * Prepares one part: the coordinator's own (the first) through its partition's gate (it waits while a scan or
     * count holds the partition), the others by {@link Op#PREPARE}, flagged when the write has a part prepared in
     * the same tree already (then the participant does not hold it, see {@link PrepareGate}).
     */
    private CompletableFuture<Long> prepare(PartialTree tree, LogId coordinator, String txnId, LogId log,
                                            List<AtomicOp> ops, boolean continuesTree, PrepareGate gate) {
        if (log.equals(coordinator)) {
            return gate.admit(() -> tree.prepareAtomic(log.partition(), txnId, coordinator, ops));
        }
        String coordinatorId = new LogAddress(coordinator.tree(), coordinator.partition()).entityId();
        return node.router().send(new LogAddress(log.tree(), log.partition()), Op.PREPARE,
                r -> Request.prepare(txnId, coordinatorId, ops, continuesTree, r))
                .thenApply(Response::number);
    }

    /** Records the abort, then undoes every part that may have been prepared (a lost prepare answer included). */
    private CompletableFuture<Void> abort(PartialTree tree, int coordinatorPartition, String txnId, List<LogId> parts,
                                         CompletableFuture<AtomicDecision> outcome, String idemKey, long digest) {
        return tree.decideAtomic(coordinatorPartition, txnId, false, List.of(), 0, idemKey, digest).handle((v, e) -> {
            inFlight.remove(txnId, outcome);
            if (e != null) {
                outcome.completeExceptionally(cause(e));
                LOG.warn("atomic write {}: recording its abort failed ({}); its participants ask again", txnId,
                        cause(e).toString());
                return null;
            }
            outcome.complete(new AtomicDecision(false, 0));
            for (LogId p : parts) {
                if (!p.equals(new LogId(tree.name(), coordinatorPartition))) {
                    resolve(tree, coordinatorPartition, txnId, p, false, 0, 0);
                }
            }
            return null;
        });
    }

    private void resolve(PartialTree tree, int coordinatorPartition, String txnId, LogId participant, boolean commit,
                         long version, int attempt) {
        node.router().send(new LogAddress(participant.tree(), participant.partition()), Op.RESOLVE,
                        r -> new Request(Op.RESOLVE, txnId, null, null, version, commit, null, null, r))
                .whenComplete((r, e) -> {
                    if (e == null) {
                        try {
                            tree.atomicResolvedAt(coordinatorPartition, txnId, participant);
                        } catch (RuntimeException gone) {
                            // the coordinator was handed off meanwhile: its replay keeps the decision
                        }
                    } else if (attempt < 5) {
                        CompletableFuture.delayedExecutor(200L << attempt, TimeUnit.MILLISECONDS, node.replies()).execute(() ->
                                resolve(tree, coordinatorPartition, txnId, participant, commit, version, attempt + 1));
                    } else {
                        LOG.warn("atomic write {}: resolving {} failed ({}); its readers will ask", txnId, participant,
                                cause(e).toString());
                    }
                });
    }

    /** The coordinator entity's answer to {@link Op#DECISION}. */
    CompletableFuture<Response> decision(PartialTree tree, int partition, String txnId) {
        CompletableFuture<AtomicDecision> running = inFlight.get(txnId);
        CompletableFuture<AtomicDecision> settled = running == null ? CompletableFuture.failedFuture(
                new IllegalStateException("not in flight")) : running;
        return settled.handle((d, e) -> d).thenCompose(d -> {
            if (d != null) {
                return CompletableFuture.completedFuture(d);
            }
            java.util.Optional<AtomicDecision> recorded = tree.atomicDecision(partition, txnId);
            if (recorded.isPresent()) {
                return CompletableFuture.completedFuture(recorded.get());
            }
            return tree.decideAtomic(partition, txnId, false, List.of(), 0).handle((v, e) ->
                    // whichever decision was applied first is the answer (a commit may have landed meanwhile)
                    tree.atomicDecision(partition, txnId).orElseThrow(() -> new CompletionException(
                            e == null ? new IllegalStateException("no decision recorded for " + txnId) : cause(e))));
        }).thenApply(d -> Response.ok(d.version(), d.committed()));
    }

    /** Asks the coordinators of the writes left pending in {@code partition} and resolves them. */
    void resolvePending(PartialTree tree, int partition) {
        for (Map.Entry<String, LogId> e : tree.pendingAtomicWrites(partition).entrySet()) {
            String txnId = e.getKey();
            LogId c = e.getValue();
            node.router().send(new LogAddress(c.tree(), c.partition()), Op.DECISION,
                            r -> new Request(Op.DECISION, txnId, null, null, 0, false, null, null, r))
                    .thenCompose(r -> {
                        TRACE.debug("{}/{}: pending {} asked {}: {} {}", tree.name(), partition, txnId, c, r.flag(),
                                r.number());
                        return tree.resolveAtomic(partition, txnId, r.flag(), r.number());
                    })
                    .whenComplete((x, err) -> {
                        if (err != null) {
                            LOG.info("atomic write {} pending in {}/{}: asking {} failed ({}); asked again on the next"
                                    + " read", txnId, tree.name(), partition, c, cause(err).toString());
                        }
                    });
        }
    }

    static Throwable cause(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** @return the failure a client gets for a write that did not commit */
    static RuntimeException clientError(Throwable t) {
        Throwable c = cause(t);
        if (c instanceof PreconditionFailedException || c instanceof RuntimeException) {
            return (RuntimeException) c;
        }
        return new WriteFailedException("atomic write aborted: " + c, c);
    }
}
