package dev.lattice.engine;

import dev.lattice.spi.LogId;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The steps of a multi-log atomic write whose participant logs are hosted by different processes of a cluster
 * ({@link PartialTree#prepareAtomic}, {@link PartialTree#decideAtomic}, {@link PartialTree#resolveAtomic}): the
 * same WAL entries as an embedded multi-log write (PREPARE in each participant, DECISION in the coordinator, RESOLVE
 * in the others), with the steps driven by the cluster's messages instead of one process. A prepared write is
 * registered with the hosting of its log ({@link LogPipeline#clusterTxns}), so a decision after a hand-off (a new
 * hosting, whose replay aborted the old prepare) is refused. Reads of keys held by a write whose outcome this
 * process has not learnt wait for it ({@link #awaitResolved}). Thread-safe.
 */
final class ClusterAtomics {

    private final EngineContext ctx;

    ClusterAtomics(EngineContext ctx) {
        this.ctx = ctx;
    }

    CompletableFuture<Long> prepare(TreeImpl tree, LogPipeline lp, String txnId, LogId coordinator,
                                    List<AtomicOp> ops) {
        List<WalRecord.Mutation> ms = new ArrayList<>(ops.size() + 1);
        List<String> keys = new ArrayList<>();
        for (AtomicOp op : ops) {
            if (op.kind() != AtomicOp.Kind.DELETE_RANGE && tree.partitionOf(op.key()) != lp.log.partition()) {
                throw new IllegalArgumentException("key '" + op.key() + "' is not in " + lp.log);
            }
            byte[] kb = tree.keyBytes(op.key());
            ms.add(switch (op.kind()) {
                case PUT -> WalRecord.Mutation.put(op.key(), kb, tree.value(op.value()));
                case PUT_TTL -> WalRecord.Mutation.putTtl(op.key(), kb, tree.valueWithTtl(op.value()), op.number());
                case DELETE -> WalRecord.Mutation.delete(op.key(), kb);
                case EXPECT -> WalRecord.Mutation.expect(op.key(), kb, op.number());
                case DELETE_RANGE -> WalRecord.Mutation.deleteRange(op.key(), kb,
                        new String(op.value(), StandardCharsets.UTF_8));
            });
            if (!keys.contains(op.key())) {
                keys.add(op.key());
            }
        }
        Txn t = new Txn(txnId);
        if (lp.clusterTxns.putIfAbsent(txnId, t) != null || lp.state.unresolved.containsKey(txnId)) {
            throw new IllegalStateException("atomic write " + txnId + " is already prepared in " + lp.log);
        }
        long timeout = ctx.config.admissionTimeout.toMillis();
        return lp.lockKeys(t, keys).orTimeout(timeout, TimeUnit.MILLISECONDS).handle((ok, err) -> {
            if (err != null) {
                lp.clusterTxns.remove(txnId, t);
                lp.releaseLocks(txnId);
                Throwable c = err.getCause() != null && err instanceof java.util.concurrent.CompletionException
                        ? err.getCause() : err;
                throw c instanceof java.util.concurrent.TimeoutException
                        ? new LatticeSaturatedException("atomic write " + txnId + " waited " + timeout + " ms for keys"
                        + " in " + lp.log + " locked by other atomic writes; nothing was written", null)
                        : c instanceof RuntimeException r ? r : new LatticeException("locking failed", c);
            }
            PartitionState.PreconditionFailure f = lp.state.check(ms);
            if (f != null) {
                lp.clusterTxns.remove(txnId, t);
                lp.releaseLocks(txnId);
                throw failure(tree, f);
            }
            List<WalRecord.Mutation> entry = new ArrayList<>(ms.size() + 1);
            entry.add(WalRecord.Mutation.txn(txnId, PartitionState.prepareFields(coordinator)));
            entry.addAll(ms);
            PendingWrite pw = new PendingWrite(WalRecord.KIND_PREPARE, entry, List.copyOf(keys), t, null, null);
            lp.submit(pw);
            return pw;
        }).thenCompose(pw -> pw.future.thenApply(r -> {
            if (r instanceof PartitionState.PreconditionFailure f) {
                lp.clusterTxns.remove(txnId, t); // nothing prepared (nothing logged): free the keys now
                lp.releaseLocks(txnId);
                throw failure(tree, f);
            }
            return tree.nextVersion(); // a floor for the write's version: newer than anything of these keys
        }));
    }

    private static PreconditionFailedException failure(TreeImpl tree, PartitionState.PreconditionFailure f) {
        return new PreconditionFailedException(tree.name(), f.key(), f.expected(),
                f.heldByOtherWrite() ? -1 : f.actual());
    }

    CompletableFuture<Long> decide(TreeImpl tree, LogPipeline lp, String txnId, boolean commit,
                                   List<LogId> participants, long versionFloor, String idemKey, long digest) {
        Txn t = lp.clusterTxns.get(txnId);
        if (t == null && commit) {
            throw new IllegalStateException("atomic write " + txnId + " was not prepared in this hosting of "
                    + lp.log + " (handed off since?); it cannot be committed here");
        }
        PartitionState.Decision known = lp.state.decisions.get(txnId);
        if (known != null) {
            if (known.commit != commit) {
                throw new IllegalStateException("atomic write " + txnId + " is already decided "
                        + (known.commit ? "committed" : "aborted") + " in " + lp.log);
            }
            return CompletableFuture.completedFuture(known.commit ? known.version : 0);
        }
        Txn decided = t != null ? t : new Txn(txnId);
        if (commit) {
            ctx.atomics.registerLive(decided);
        }
        PendingWrite d = ctx.atomics.decision(decided, commit, participants, idemKey, digest, commit ? () -> {
            long v = Math.max(tree.nextVersion(), versionFloor);
            tree.advanceClock(v);
            return v;
        } : null);
        lp.submit(d);
        return d.future.thenCompose(r -> {
            PartitionState.Decision recorded = lp.state.decisions.get(txnId);
            if (recorded != null && recorded.commit != commit) {
                // another decision of this write was applied first (the first decision wins): report it
                throw new IllegalStateException("atomic write " + txnId + " is already decided "
                        + (recorded.commit ? "committed" : "aborted") + " in " + lp.log);
            }
            long version = commit ? (Long) r : 0;
            if (t != null) {
                lp.clusterTxns.remove(txnId, t);
                if (!commit) {
                    // the abort decision undid our own part in memory; its locks are released here (a commit
                    // decision releases them itself)
                    lp.releaseLocks(txnId);
                }
            }
            return CompletableFuture.completedFuture(version);
        });
    }

    CompletableFuture<Void> resolve(TreeImpl tree, LogPipeline lp, String txnId, boolean commit, long version) {
        PartitionState.Unresolved u = lp.state.unresolved.get(txnId);
        Txn t = lp.clusterTxns.remove(txnId);
        if (u == null) {
            if (t != null) {
                lp.releaseLocks(txnId); // locked but never prepared (a failed prepare)
            }
            return CompletableFuture.completedFuture(null);
        }
        if (commit) {
            tree.advanceClock(version);
        }
        PendingWrite w = new PendingWrite(WalRecord.KIND_RESOLVE,
                List.of(WalRecord.Mutation.txn(txnId, PartitionState.resolveFields(commit, version, u.coordinator()))),
                List.of(), null, null, txnId);
        lp.submit(w);
        return w.future.thenApply(r -> null);
    }

    Optional<AtomicDecision> decision(LogPipeline lp, String txnId) {
        PartitionState.Decision d = lp.state.decisions.get(txnId);
        return d == null ? Optional.empty() : Optional.of(new AtomicDecision(d.commit, d.commit ? d.version : 0));
    }

    Optional<AtomicDecision> decisionByIdempotencyKey(LogPipeline lp, String idemKey, long digest) {
        PartitionState.Decision d = lp.state.decisionsByIdempotencyKey.get(idemKey);
        if (d == null) {
            return Optional.empty();
        }
        if (d.digest != digest) {
            throw new IllegalArgumentException("idempotency key '" + idemKey + "' was used by an atomic write with a "
                    + "different set of keys");
        }
        return Optional.of(new AtomicDecision(d.commit, d.commit ? d.version : 0));
    }

    /** A remote participant wrote its RESOLVE: the coordinator's decision need not wait for it any more. */
    void resolvedRemotely(LogPipeline lp, String txnId, LogId participant) {
        PartitionState.Decision d = lp.state.decisions.get(txnId);
        if (d != null) {
            d.outstanding.remove(participant);
        }
    }

    Map<String, LogId> pending(LogPipeline lp) {
        Map<String, LogId> out = new LinkedHashMap<>();
        for (Map.Entry<String, PartitionState.Unresolved> e : lp.state.unresolvedSnapshot().entrySet()) {
            if (e.getValue().txn().pending()) {
                out.put(e.getKey(), e.getValue().coordinator());
            }
        }
        return out;
    }

    /**
     * Before a read of a partial tree: waits while an unpublished atomic write holds one of the keys (or, with
     * {@code keys} null, any key in {@code [from, to)}; with both null, any key), up to the pending-read wait.
     *
     * @throws AtomicWritePendingException if a write still holds them after the wait
     */
    void awaitResolved(LogPipeline lp, List<String> keys, String from, String to, boolean any) {
        if (lp.state.unresolved.isEmpty()) {
            return;
        }
        long t0 = System.nanoTime();
        long wait = ctx.config.admissionTimeout.toNanos();
        while (true) {
            Map.Entry<String, PartitionState.Unresolved> holder = holder(lp, keys, from, to, any);
            if (holder == null) {
                return;
            }
            long waited = System.nanoTime() - t0;
            if (waited > wait) {
                throw new AtomicWritePendingException(lp.log, holder.getKey(), holder.getValue().coordinator(),
                        TimeUnit.NANOSECONDS.toMillis(waited));
            }
            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
        }
    }

    private static Map.Entry<String, PartitionState.Unresolved> holder(LogPipeline lp, List<String> keys, String from,
                                                                     String to, boolean any) {
        for (Map.Entry<String, PartitionState.Unresolved> e : lp.state.unresolved.entrySet()) {
            PartitionState.Unresolved u = e.getValue();
            if (!u.txn().pending()) {
                continue;
            }
            if (any) {
                return e;
            }
            for (WalRecord.Mutation m : u.mutations()) {
                boolean range = m.op() == WalRecord.Mutation.DELETE_RANGE;
                if (keys != null) {
                    for (String k : keys) {
                        if (range ? k.compareTo(m.key()) >= 0 && k.compareTo(m.rangeEnd()) < 0 : k.equals(m.key())) {
                            return e;
                        }
                    }
                } else {
                    String lo = m.key();
                    String hi = range ? m.rangeEnd() : m.key() + '\0';
                    boolean overlaps = (to == null || lo.compareTo(to) < 0) && (from == null || hi.compareTo(from) > 0);
                    if (overlaps) {
                        return e;
                    }
                }
            }
        }
        return null;
    }
}
