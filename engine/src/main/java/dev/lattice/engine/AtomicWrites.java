package dev.lattice.engine;

import dev.lattice.spi.LogId;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Atomic writes: the commit protocol, and resolution after a restart.
 *
 * <p>A write whose keys all fall in one log is one {@link WalRecord#KIND_ATOMIC} entry, applied in one step by the
 * log's applier. Preconditions (here and in prepares) are decided when the entry's batch is cut
 * ({@link ConditionGate}): the entry is logged without them when they hold, and not at all when one fails. A write over several logs has a
 * <em>coordinator</em>: its first participant log in (tree, partition) order. It
 * <ol>
 *   <li>locks its keys in every participant log, in (tree, partition) order, so writes cannot deadlock;</li>
 *   <li>appends a PREPARE entry (its mutations and preconditions for that log, and the coordinator's id) to every
 *       participant; applied, it leaves invisible nodes;</li>
 *   <li>appends a DECISION entry to the coordinator log: the commit point. Applying it publishes the write in
 *       one step ({@link Visibility#publish}), resolves the coordinator's own part, and the caller returns;</li>
 *   <li>appends a RESOLVE entry to every other participant; applying it folds the nodes and releases the locks.</li>
 * </ol>
 * Every log involved is one the process already owns (claimed by opening its tree), so processes that share a
 * backend by owning different trees never touch each other's logs. Replay rebuilds pending nodes from PREPARE
 * entries (or a checkpoint's pending section) and resolves what no RESOLVE entry resolved from the coordinator's
 * decisions (opening the coordinator's tree if needed); a write with no decision is aborted (the coordinator log is
 * claimed, so no older process can still decide), and the outcome is written as RESOLVE entries. Thread-safe.
 */
final class AtomicWrites {

    private static final Logger LOG = LoggerFactory.getLogger(AtomicWrites.class);

    /** One participant log of a multi-log write. */
    static final class Part {
        final TreeImpl tree;
        final LogPipeline pipeline;
        final List<WalRecord.Mutation> mutations = new ArrayList<>();
        final List<String> keys = new ArrayList<>();
        volatile boolean prepareSubmitted;

        Part(TreeImpl tree, LogPipeline pipeline) {
            this.tree = tree;
            this.pipeline = pipeline;
        }
    }

    private record InFlight(long digest, Txn txn) {
    }

    /** (tree, partition) order of logs. */
    private static final Comparator<LogId> LOG_ORDER = Comparator.comparing(LogId::tree)
            .thenComparingInt(LogId::partition);

    /** The parts of a live multi-log write and its coordinator log. */
    private record Plan(List<Part> parts, LogId coordinator) {
    }

    final Visibility visibility = new Visibility();
    private final EngineContext ctx;
    private volatile Lattice lattice;
    private final ConcurrentHashMap<String, Txn> live = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, InFlight> idempotent = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Txn, Plan> plans = new ConcurrentHashMap<>();
    /** The state of every replayed log of this lattice (coordinators' decisions are looked up here). */
    private final ConcurrentHashMap<LogId, PartitionState> states = new ConcurrentHashMap<>();
    /** Commits running plus resolve entries not yet written: close waits for them before it stops admission. */
    private final java.util.concurrent.atomic.AtomicInteger busy = new java.util.concurrent.atomic.AtomicInteger();

    private Counter committedSingle;
    private Counter committedMulti;
    private Counter abortedPrecondition;
    private Counter abortedFailure;
    private Counter resolvedAtOpen;
    private Timer duration;
    private DistributionSummary keysPerWrite;
    private DistributionSummary logsPerWrite;

    AtomicWrites(EngineContext ctx) {
        this.ctx = ctx;
    }

    /** @return the clock of time-to-live ({@link LatticeConfig.Builder#clock}) */
    java.time.Clock clock() {
        return ctx.config.clock;
    }

    void bind(Lattice l) {
        this.lattice = l;
        EngineMeters m = ctx.meters;
        committedSingle = m.counter("lattice.atomic.committed", "atomic writes committed", "writes",
                m.tags("logs", "single"));
        committedMulti = m.counter("lattice.atomic.committed", "atomic writes committed", "writes",
                m.tags("logs", "multi"));
        abortedPrecondition = m.counter("lattice.atomic.aborted", "atomic writes aborted", "writes",
                m.tags("reason", "precondition"));
        abortedFailure = m.counter("lattice.atomic.aborted", "atomic writes aborted", "writes",
                m.tags("reason", "failure"));
        resolvedAtOpen = m.counter("lattice.atomic.resolved.at.open",
                "atomic writes left unresolved by an earlier process and resolved at open", "writes", m.tags());
        duration = m.timer("lattice.atomic.duration", "commit() call to outcome", m.tags());
        keysPerWrite = m.summary("lattice.atomic.keys", "puts and deletes per atomic write", "keys", m.tags());
        logsPerWrite = m.summary("lattice.atomic.participants", "logs per atomic write", "logs", m.tags());
    }

    Executor executor() {
        return ctx.io;
    }

    // ------------------------------------------------------------------ decisions

    /** The state of a coordinator log, replaying (opening) its tree if needed; null if the tree does not exist. */
    private PartitionState stateOf(LogId coordinator) {
        PartitionState s = states.get(coordinator);
        if (s == null && lattice.awaitReplayed(coordinator.tree())) {
            s = states.get(coordinator);
        }
        return s;
    }

    /** Any coordinator's applier: a decision was applied. Finishes the live write it decides. */
    void decisionApplied(PartitionState.Decision d) {
        Txn t = live.get(d.id);
        if (t == null) {
            return;
        }
        busy.incrementAndGet(); // before anyone learns the outcome: until its resolve entries are submitted
        if (d.commit) {
            visibility.publish(t, d.version);
            t.outcome.complete(d.version);
        } else {
            markAborted(t, new AtomicWriteAbortedException("atomic write " + d.id + " was aborted", null));
        }
        live.remove(d.id, t);
        try {
            ctx.io.execute(() -> {
                try {
                    resolveAll(t, d.commit, d.version);
                } finally {
                    busy.decrementAndGet();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            busy.decrementAndGet();
            LOG.warn("atomic write {} decided while the lattice closed; the next open resolves its other logs", d.id);
        }
    }

    /** Any applier: a RESOLVE entry of {@code id} (coordinated by {@code coordinator}) was applied in {@code log}. */
    void resolvedIn(LogId coordinator, LogId log, String id) {
        PartitionState cs = states.get(coordinator);
        if (cs != null) {
            PartitionState.Decision d = cs.decisions.get(id);
            if (d != null) {
                d.outstanding.remove(log);
            }
        }
    }

    /** @return true when a decision may be dropped from its coordinator's checkpoint */
    boolean forgettable(PartitionState.Decision d, long nowMillis) {
        return d.outstanding.isEmpty()
                && (d.idempotencyKey == null || nowMillis - d.timeMillis > ctx.config.atomicRetention.toMillis());
    }

    /**
     * Drops participants from decisions' outstanding sets when their replayed state holds no unresolved prepare of
     * the write (its resolution is durable there). Safe against live writes: a live write's participants hold its
     * prepare until its resolve entry is applied.
     */
    private void pruneOutstanding() {
        for (PartitionState cs : states.values()) {
            for (PartitionState.Decision d : cs.decisions.values()) {
                for (LogId l : List.copyOf(d.outstanding)) {
                    PartitionState ps = states.get(l);
                    if (ps != null && !ps.unresolved.containsKey(d.id)) {
                        d.outstanding.remove(l);
                    }
                }
            }
        }
    }

    /**
     * After a tree's logs are replayed, before it is handed out: registers their states, then resolves the atomic
     * writes an earlier process left prepared, from their coordinators' decisions (no decision = aborted), in memory
     * at once and durably by RESOLVE entries (their keys stay locked until those are applied).
     */
    void resolveAtOpen(TreeImpl t, LogPipeline[] opened) {
        for (LogPipeline lp : opened) {
            states.put(lp.log, lp.state);
        }
        if (!t.isPartial()) {
            lattice.replayed(t);
        }
        pruneOutstanding();
        record Todo(LogPipeline lp, Txn txn, boolean commit, long version, LogId coordinator) {
        }
        List<Todo> todo = new ArrayList<>();
        for (LogPipeline lp : opened) {
            for (Map.Entry<String, PartitionState.Unresolved> e : lp.state.unresolvedSnapshot().entrySet()) {
                PartitionState.Unresolved u = e.getValue();
                PartitionState local = states.get(u.coordinator());
                if (t.isPartial() && !u.coordinator().equals(lp.log)
                        && (local == null || !local.decisions.containsKey(e.getKey()))) {
                    // a cluster write whose coordinator has not decided here: it may be in flight there (even in
                    // this process, above the engine), so it is not aborted; the cluster asks the coordinator and
                    // resolves it (its keys stay locked meanwhile)
                    List<String> keys = new ArrayList<>();
                    for (WalRecord.Mutation m : u.mutations()) {
                        keys.add(m.key());
                    }
                    lp.lockNow(u.txn(), keys);
                    continue;
                }
                PartitionState cs = stateOf(u.coordinator());
                PartitionState.Decision d = cs == null ? null : cs.decisions.get(e.getKey());
                boolean commit = d != null && d.commit;
                long version = d != null ? d.version : 0;
                List<String> keys = new ArrayList<>();
                for (WalRecord.Mutation m : u.mutations()) {
                    keys.add(m.key());
                }
                lp.lockNow(u.txn(), keys);
                lp.state.resolve(e.getKey(), commit, version);
                todo.add(new Todo(lp, u.txn(), commit, version, u.coordinator()));
                resolvedAtOpen.increment();
                LOG.info("{}: atomic write {} left prepared by an earlier process: {}", lp.log, e.getKey(),
                        commit ? "committed (decision found in " + u.coordinator() + ")"
                                : "aborted (no decision in " + u.coordinator() + ")");
            }
        }
        for (Todo d : todo) {
            sendResolve(d.lp(), d.txn(), d.commit(), d.version(), d.coordinator(), 0);
        }
    }

    /** A cluster coordinator is about to decide {@code t}: its decision's apply publishes it and completes it. */
    void registerLive(Txn t) {
        live.put(t.id, t);
    }

    /** A released partition: its state no longer answers for decisions. */
    void forget(LogId log) {
        states.remove(log);
    }

    // ------------------------------------------------------------------ resolve

    private void resolveAll(Txn t, boolean commit, long version) {
        Plan plan = plans.remove(t); // whoever removes the plan sends the resolves, once
        if (plan == null) {
            return;
        }
        for (Part p : plan.parts()) {
            if (commit && p.pipeline.log.equals(plan.coordinator())) {
                continue; // the decision resolved the coordinator's part and released its locks
            }
            if (p.prepareSubmitted) {
                sendResolve(p.pipeline, t, commit, version, plan.coordinator(), 0);
            } else {
                p.pipeline.releaseLocks(t.id);
            }
        }
    }

    /**
     * Waits (up to the deadline) until no atomic write is committing and every resolve entry sent is written, so
     * a clean close leaves no write for the next open to resolve.
     *
     * @return true when quiet
     */
    boolean quiesce(long deadlineNanos) {
        while (busy.get() > 0) {
            if (System.nanoTime() >= deadlineNanos) {
                return false;
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** Appends RESOLVE to a participant, retrying until it lands or the log can no longer be written here. */
    private void sendResolve(LogPipeline lp, Txn t, boolean commit, long version, LogId coordinator, int attempt) {
        busy.incrementAndGet();
        PendingWrite w = new PendingWrite(WalRecord.KIND_RESOLVE,
                List.of(WalRecord.Mutation.txn(t.id, PartitionState.resolveFields(commit, version, coordinator))),
                List.of(), null, null, t.id);
        lp.submit(w);
        w.future.whenComplete((r, e) -> {
            busy.decrementAndGet();
            if (e == null) {
                return;
            }
            if (lp.writable() && !lattice.isClosed()) {
                long delay = Math.min(1000, Math.max(10, ctx.config.retryBackoff.toMillis()) << Math.min(attempt, 6));
                LOG.warn("{}: resolving atomic write {} failed, retrying in {} ms: {}", lp.log, t.id, delay, e.toString());
                try {
                    ctx.timer.schedule(() -> ctx.io.execute(() -> sendResolve(lp, t, commit, version, coordinator,
                            attempt + 1)),
                            delay, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.RejectedExecutionException closed) {
                    LOG.debug("lattice closed before the resolve of {} could be retried", t.id);
                }
            } else {
                LOG.warn("{}: atomic write {} is {} but its resolve entry was not written ({}); the next open of the "
                        + "tree resolves it", lp.log, t.id, commit ? "committed" : "aborted", e.toString());
            }
        });
    }

    private void markAborted(Txn t, RuntimeException why) {
        if (t.seq == 0) {
            t.seq = Txn.ABORTED;
        }
        t.outcome.completeExceptionally(why);
    }

    // ------------------------------------------------------------------ commit

    AtomicWrite begin(Tree bound) {
        return new AtomicWrite(this, lattice, bound);
    }

    AtomicResult commit(AtomicWrite w) {
        long t0 = System.nanoTime();
        if (lattice.isClosed()) {
            throw new LatticeShuttingDownException("lattice is closed; atomic write not admitted");
        }
        if (w.ops.isEmpty()) {
            throw new IllegalArgumentException("an atomic write needs at least one put or delete");
        }
        // group by log, (tree, partition) order; check duplicates and limits before anything is written
        // participants in (tree, partition) order: the lock order, and the first is the coordinator
        TreeMap<LogId, Part> byLog = new TreeMap<>(LOG_ORDER);
        Set<String> written = new HashSet<>();
        Set<String> expected = new HashSet<>();
        int writes = 0;
        long addBytes = 0;
        for (AtomicWrite.Op op : w.ops) {
            if (op.kind() == WalRecord.Mutation.DELETE_RANGE) {
                writes += AtomicRanges.addRange(op, byLog, written);
                continue;
            }
            String id = op.tree().name() + "\u0000" + op.key();
            if (op.kind() == WalRecord.Mutation.EXPECT ? !expected.add(id) : !written.add(id)) {
                throw new IllegalArgumentException("key '" + op.key() + "' of tree '" + op.tree().name() + "' is "
                        + (op.kind() == WalRecord.Mutation.EXPECT ? "given two preconditions" : "written twice")
                        + " in one atomic write");
            }
            LogPipeline lp = op.tree().pipelineOf(op.key());
            Part p = byLog.computeIfAbsent(lp.log, k -> new Part(op.tree(), lp));
            byte[] kb = op.key().getBytes(StandardCharsets.UTF_8);
            switch (op.kind()) {
                case WalRecord.Mutation.PUT -> {
                    p.mutations.add(WalRecord.Mutation.put(op.key(), kb, op.value()));
                    writes++;
                    addBytes += PartitionState.estimate(op.key(), op.value());
                }
                case WalRecord.Mutation.DELETE -> {
                    p.mutations.add(WalRecord.Mutation.delete(op.key(), kb));
                    writes++;
                }
                case WalRecord.Mutation.PUT_TTL -> {
                    p.mutations.add(WalRecord.Mutation.putTtl(op.key(), kb, op.value(), op.expected()));
                    writes++;
                    addBytes += PartitionState.estimate(op.key(), op.value());
                }
                default -> p.mutations.add(WalRecord.Mutation.expect(op.key(), kb, op.expected()));
            }
            if (!p.keys.contains(op.key())) {
                p.keys.add(op.key());
            }
        }
        if (writes == 0) {
            throw new IllegalArgumentException("an atomic write needs at least one put or delete (it has only "
                    + "preconditions)");
        }
        if (writes > ctx.config.maxAtomicKeys) {
            throw new IllegalArgumentException("atomic write has " + writes + " puts and deletes, more than the limit of "
                    + ctx.config.maxAtomicKeys + " (LatticeConfig maxAtomicKeys)");
        }
        for (Part p : byLog.values()) {
            // the prepare entry carries one extra TXN mutation (id + coordinator) beyond the mutations
            long size = WalRecord.HEADER_BYTES + WalRecord.TRAILER_BYTES + 200;
            for (WalRecord.Mutation m : p.mutations) {
                size += m.encodedSize();
            }
            var limits = p.pipeline.handle().descriptor().limits();
            long max = Math.min(limits.maxEntryBytes(), ctx.config.maxBatchBytes);
            if (size > max) {
                throw new IllegalArgumentException("atomic write's part in log " + p.pipeline.log + " is " + size
                        + " bytes, more than the " + max + "-byte limit of one entry (provider '"
                        + p.pipeline.handle().key() + "' maxEntryBytes " + limits.maxEntryBytes()
                        + ", LatticeConfig maxBatchBytes " + ctx.config.maxBatchBytes + ")");
            }
        }
        long used = ctx.memoryUsed.get();
        if (used + addBytes > ctx.config.memoryBudgetBytes) {
            throw new MemoryBudgetExceededException("memory budget of " + ctx.config.memoryBudgetBytes
                    + " bytes would be exceeded by " + addBytes + " bytes (live data estimate " + used + " bytes)");
        }
        List<Part> ps = new ArrayList<>(byLog.values());
        keysPerWrite.record(writes);
        logsPerWrite.record(ps.size());
        busy.incrementAndGet();
        try {
            AtomicResult r;
            if (w.idempotencyKey == null && ps.size() == 1) {
                r = commitSingle(ps.get(0), writes);
            } else {
                r = commitMulti(ps, writes, w.idempotencyKey, w.idempotencyKey == null ? 0 : digest(w));
            }
            if (!r.reattached()) {
                (r.logs() == 1 && w.idempotencyKey == null ? committedSingle : committedMulti).increment();
            }
            return r;
        } catch (PreconditionFailedException e) {
            abortedPrecondition.increment();
            throw e;
        } catch (AtomicWriteAbortedException | WriteOutcomeUnknownException e) {
            throw e;
        } catch (RuntimeException e) {
            abortedFailure.increment();
            throw e;
        } finally {
            busy.decrementAndGet();
            duration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        }
    }

    private static PreconditionFailedException failure(Part p, PartitionState.PreconditionFailure f) {
        return new PreconditionFailedException(p.tree.name(), f.key(), f.expected(),
                f.heldByOtherWrite() ? -1 : f.actual());
    }

    private AtomicResult commitSingle(Part p, int writes) {
        if (ConditionGate.conditional(WalRecord.KIND_ATOMIC, p.mutations)) {
            p.pipeline.proveFenceForRead(); // preconditions are decided from the state, like a read (read lease)
        }
        PartitionState.PreconditionFailure early = p.pipeline.state.check(p.mutations);
        if (early != null) {
            throw failure(p, early);
        }
        PendingWrite pw = new PendingWrite(WalRecord.KIND_ATOMIC, List.copyOf(p.mutations), List.copyOf(p.keys), null,
                null, null);
        p.pipeline.submit(pw);
        Object r = TreeImpl.await(pw.future);
        if (r instanceof PartitionState.PreconditionFailure f) {
            throw failure(p, f);
        }
        return new AtomicResult((Long) r, false, writes, 1);
    }

    private AtomicResult commitMulti(List<Part> ps, int writes, String idemKey, long digest) {
        for (Part p : ps) {
            if (p.tree.isPartial()) {
                throw new PartitionNotHostedException(p.tree.name(), -1, "an atomic write over " + ps.size()
                        + " logs involves tree '" + p.tree.name() + "', of which this process hosts only some"
                        + " partitions (Lattice.hostTree): multi-log atomic writes need every participant log owned"
                        + " by one process; write through the cluster's tree instead");
            }
        }
        LogId coordinator = ps.get(0).pipeline.log;
        if (idemKey != null) {
            AtomicResult earlier = reattach(idemKey, digest, writes, ps.size(), coordinator);
            if (earlier != null) {
                return earlier;
            }
        }
        Txn t = new Txn(UUID.randomUUID().toString().replace("-", ""));
        if (idemKey != null) {
            InFlight mine = new InFlight(digest, t);
            InFlight other = idempotent.putIfAbsent(idemKey, mine);
            if (other != null) {
                return awaitEarlier(other, idemKey, digest, writes, ps.size());
            }
            PartitionState.Decision d = states.get(coordinator).decisionsByIdempotencyKey.get(idemKey);
            if (d != null) { // decided between the first look and registering: re-attach to it
                idempotent.remove(idemKey, mine);
                return reattach(idemKey, digest, writes, ps.size(), coordinator);
            }
        }
        try {
            return runMulti(t, ps, coordinator, writes, idemKey, digest);
        } finally {
            if (idemKey != null) {
                idempotent.remove(idemKey);
            }
        }
    }

    /** The coordinator is the same for the same key set: the first participant log. */
    private AtomicResult reattach(String idemKey, long digest, int writes, int logs, LogId coordinator) {
        InFlight other = idempotent.get(idemKey);
        if (other != null) {
            return awaitEarlier(other, idemKey, digest, writes, logs);
        }
        PartitionState.Decision d = states.get(coordinator).decisionsByIdempotencyKey.get(idemKey);
        if (d == null) {
            return null;
        }
        if (d.digest != digest) {
            throw new IllegalArgumentException("idempotency key '" + idemKey + "' was used by an atomic write with a "
                    + "different set of keys");
        }
        if (!d.commit) {
            throw new AtomicWriteAbortedException("the atomic write with idempotency key '" + idemKey
                    + "' was aborted earlier; nothing of it was written", null);
        }
        return new AtomicResult(d.version, true, writes, logs);
    }

    private AtomicResult awaitEarlier(InFlight other, String idemKey, long digest, int writes, int logs) {
        if (other.digest() != digest) {
            throw new IllegalArgumentException("idempotency key '" + idemKey + "' is in use by an atomic write with a "
                    + "different set of keys");
        }
        try {
            return new AtomicResult(TreeImpl.await(other.txn().outcome), true, writes, logs);
        } catch (AtomicWriteAbortedException e) {
            throw new AtomicWriteAbortedException("the atomic write with idempotency key '" + idemKey
                    + "' was aborted: " + e.getMessage(), e);
        }
    }

    private AtomicResult runMulti(Txn t, List<Part> ps, LogId coordinator, int writes, String idemKey,
                                  long digest) {
        plans.put(t, new Plan(ps, coordinator));
        live.put(t.id, t);
        // 1. locks, in (tree, partition) order
        long deadline = System.nanoTime() + ctx.config.admissionTimeout.toNanos();
        for (Part p : ps) {
            try {
                p.pipeline.lockKeys(t, p.keys).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                abortBeforePrepare(t, ps);
                throw new LatticeSaturatedException("atomic write waited " + ctx.config.admissionTimeout.toMillis()
                        + " ms for keys in " + p.pipeline.log + " locked by other atomic writes; nothing was written",
                        null);
            } catch (ExecutionException e) {
                abortBeforePrepare(t, ps);
                throw rethrow(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                abortBeforePrepare(t, ps);
                throw new LatticeException("interrupted while locking the keys of an atomic write", e);
            }
        }
        // 2. fast precondition check on the committed state (nothing written if it fails), like a read
        for (Part p : ps) {
            if (ConditionGate.conditional(WalRecord.KIND_ATOMIC, p.mutations)) {
                try {
                    p.pipeline.proveFenceForRead();
                } catch (RuntimeException e) {
                    abortBeforePrepare(t, ps);
                    throw e;
                }
            }
            PartitionState.PreconditionFailure f = p.pipeline.state.check(p.mutations);
            if (f != null) {
                abortBeforePrepare(t, ps);
                recordAbort(t, idemKey, digest, ps.get(0));
                throw failure(p, f);
            }
        }
        // 3. prepare in every participant
        List<PendingWrite> prepares = new ArrayList<>(ps.size());
        byte[] prepareFields = PartitionState.prepareFields(coordinator);
        for (Part p : ps) {
            List<WalRecord.Mutation> ms = new ArrayList<>(p.mutations.size() + 1);
            ms.add(WalRecord.Mutation.txn(t.id, prepareFields));
            ms.addAll(p.mutations);
            PendingWrite pw = new PendingWrite(WalRecord.KIND_PREPARE, ms, List.copyOf(p.keys), t, null, null);
            p.prepareSubmitted = true;
            p.pipeline.submit(pw);
            prepares.add(pw);
        }
        RuntimeException prepareFailure = null;
        for (int i = 0; i < ps.size(); i++) {
            try {
                Object r = TreeImpl.await(prepares.get(i).future);
                if (r instanceof PartitionState.PreconditionFailure f && prepareFailure == null) {
                    prepareFailure = failure(ps.get(i), f);
                }
            } catch (RuntimeException e) {
                if (prepareFailure == null) {
                    prepareFailure = e;
                }
            }
        }
        if (prepareFailure != null) {
            abort(t, ps);
            if (prepareFailure instanceof PreconditionFailedException) {
                recordAbort(t, idemKey, digest, ps.get(0));
            }
            if (prepareFailure instanceof PreconditionFailedException || prepareFailure instanceof LatticeSaturatedException
                    || prepareFailure instanceof LatticeShuttingDownException) {
                throw prepareFailure;
            }
            throw new WriteFailedException("atomic write aborted, nothing of it is or will be visible: a prepare "
                    + "failed (" + prepareFailure.getMessage() + ")", prepareFailure);
        }
        // 4. the decision in the coordinator log: the commit point
        Set<TreeImpl> trees = new LinkedHashSet<>();
        List<LogId> participants = new ArrayList<>(ps.size());
        for (Part p : ps) {
            trees.add(p.tree);
            if (!p.pipeline.log.equals(coordinator)) {
                participants.add(p.pipeline.log);
            }
        }
        PendingWrite decision = decision(t, true, participants, idemKey, digest, () -> {
            long v = 0;
            for (TreeImpl tr : trees) {
                v = Math.max(v, tr.nextVersion());
            }
            for (TreeImpl tr : trees) {
                tr.advanceClock(v);
            }
            return v;
        });
        ps.get(0).pipeline.submit(decision);
        try {
            long version = (Long) TreeImpl.await(decision.future);
            return new AtomicResult(version, false, writes, ps.size());
        } catch (WriteOutcomeUnknownException e) {
            throw new WriteOutcomeUnknownException("atomic write " + t.id + ": its commit record may or may not be "
                    + "written; it is all or nothing either way and is resolved when log " + coordinator
                    + " recovers or at the next open", e);
        } catch (RuntimeException e) {
            abort(t, ps);
            if (e instanceof LatticeSaturatedException || e instanceof LatticeShuttingDownException) {
                throw e;
            }
            throw new WriteFailedException("atomic write aborted, nothing of it is or will be visible: its commit "
                    + "record was not written (" + e.getMessage() + ")", e);
        }
    }

    PendingWrite decision(Txn t, boolean commit, List<LogId> participants, String idemKey, long digest,
                                  java.util.function.LongSupplier version) {
        List<WalRecord.Mutation> ms = new ArrayList<>(2);
        ms.add(WalRecord.Mutation.txn(t.id, PartitionState.decisionFields(commit, System.currentTimeMillis(),
                participants)));
        if (idemKey != null) {
            ms.add(WalRecord.Mutation.idem(idemKey, ByteBuffer.allocate(8).putLong(digest).array()));
        }
        // a commit decision also resolves the coordinator's own part: it releases the write's locks there
        return new PendingWrite(WalRecord.KIND_DECISION, ms, List.of(), commit ? t : null, version,
                commit ? t.id : null);
    }

    /** Aborts before any prepare was submitted: just releases the locks. */
    private void abortBeforePrepare(Txn t, List<Part> ps) {
        markAborted(t, new AtomicWriteAbortedException("atomic write " + t.id + " was aborted before it was written",
                null));
        live.remove(t.id, t);
        resolveAll(t, false, 0);
    }

    /** Aborts after prepares were submitted: resolves the participants as aborted. */
    private void abort(Txn t, List<Part> ps) {
        markAborted(t, new AtomicWriteAbortedException("atomic write " + t.id + " was aborted", null));
        live.remove(t.id, t);
        resolveAll(t, false, 0);
    }

    /**
     * Records an abort decided by the data (a failed precondition) under the write's idempotency key, so a retry
     * re-attaches to it; aborts caused by failures are not recorded, so a retry writes anew.
     */
    private void recordAbort(Txn t, String idemKey, long digest, Part coordinator) {
        if (idemKey == null) {
            return;
        }
        // no participants: an abort needs no resolution tracking (a prepare without a commit decision is aborted)
        PendingWrite d = decision(t, false, List.of(), idemKey, digest, null);
        try {
            coordinator.pipeline.submit(d);
            TreeImpl.await(d.future);
        } catch (RuntimeException e) {
            LOG.warn("atomic write {}: recording its abort under idempotency key {} failed: {}", t.id, idemKey,
                    e.toString());
        }
    }

    private static RuntimeException rethrow(Throwable c) {
        if (c instanceof RuntimeException r) {
            return r;
        }
        return new LatticeException("atomic write failed", c);
    }

    /** A digest of the write's key set (tree, key, kind), independent of order and values. */
    private static long digest(AtomicWrite w) {
        List<String> items = new ArrayList<>(w.ops.size());
        for (AtomicWrite.Op op : w.ops) {
            items.add(op.tree().name() + "\u0000" + op.key() + "\u0000" + op.kind()
                    + (op.kind() == WalRecord.Mutation.DELETE_RANGE ? "\u0000" + new String(op.value(),
                    StandardCharsets.UTF_8) : ""));
        }
        return KeySetDigest.of(items);
    }
}
