package dev.lattice.cluster;

import dev.lattice.engine.OwnershipLostException;
import dev.lattice.engine.PartialTree;
import dev.lattice.engine.PartitionNotHostedException;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.TreeEntry;
import dev.lattice.engine.Versioned;
import org.apache.pekko.actor.NoSerializationVerificationNeeded;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The sharded entity of one log {@code (tree, partition)}: it hosts the partition through the node's engine
 * ({@link PartialTree#host}: claim, replay) before serving, stashing what arrives meanwhile; serves requests
 * without blocking its actor (writes through the engine's asynchronous calls, reads on the node's blocking pool);
 * on hand-off ({@link Release}, Pekko's stop message) drains and checkpoints the partition ({@link PartialTree#release})
 * and stops; when another process claimed the log (its calls throw {@link OwnershipLostException}) it stops too, so
 * that the next request hosts it again wherever Pekko places it.
 */
final class PartitionEntity {

    /** Pekko's hand-off stop message, and the entity's own signal to stop after a lost claim. */
    enum Release implements EntityMessage, NoSerializationVerificationNeeded {
        HAND_OFF, LOST
    }

    private record Hosted(Throwable failure) implements EntityMessage, NoSerializationVerificationNeeded {
    }

    private record Released(boolean drained) implements EntityMessage, NoSerializationVerificationNeeded {
    }

    /** The entity's own timer: close the held scans idle past the session timeout. */
    private enum SweepScans implements EntityMessage, NoSerializationVerificationNeeded {
        INSTANCE
    }

    /**
     * A held scan ({@link Op#SCAN_OPEN} .. {@link Op#SCAN_CLOSE}): the engine's cursor on this partition, which keeps
     * its snapshot (and the runs it reads) until closed, and the last page answered, so that a retried
     * {@link Op#SCAN_NEXT} of a page whose answer was lost gets the same page. Its monitor guards the cursor and the
     * pages; it stays registered after its last page (cursor closed) until closed or idle, so that a validation
     * ({@link Op#SCAN_CHECK}) still finds it.
     */
    private static final class ScanSession {
        final long id;
        final int limit;
        private ScanCursor cursor;
        private long served;
        private Response last;
        volatile long usedNanos = System.nanoTime();

        ScanSession(long id, ScanCursor cursor, int limit) {
            this.id = id;
            this.cursor = cursor;
            this.limit = limit;
        }

        synchronized Response page(long index, long budget, String entity) {
            usedNanos = System.nanoTime();
            if (index == served && last != null) {
                return last; // a retry of the page just answered
            }
            if (index != served + 1 && !(index == 0 && last == null)) {
                throw new IllegalArgumentException("scan session " + id + " of " + entity + " answered page " + served
                        + ", not able to answer page " + index);
            }
            if (cursor == null) { // closed under this request (expired, or the partition is being released)
                throw new dev.lattice.engine.ScanSessionLostException("scan session " + id + " of " + entity
                        + " was closed while its page " + index + " was asked for (idle too long, or the partition"
                        + " was handed off); open a new scan");
            }
            Response r = fill(cursor, limit, budget);
            if (!r.flag()) {
                // the snapshot is not needed any more; the session stays for a validation or a retry (of this page)
                cursor.close();
                cursor = null;
            }
            served = index;
            last = r;
            return r;
        }

        synchronized void close() {
            if (cursor != null) {
                cursor.close();
                cursor = null;
            }
        }
    }

    private final java.util.concurrent.ConcurrentHashMap<Long, ScanSession> scans =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** False once the entity releases its partition: no held scan may be opened after that. */
    private volatile boolean scansOpen = true;
    private boolean sweepScheduled;

    /** Diagnostics of the atomic-write steps and reads (debug level; off by default). */
    private static final org.slf4j.Logger TRACE = org.slf4j.LoggerFactory.getLogger("dev.lattice.cluster.trace");

    private final ActorContext<EntityMessage> ctx;
    private final NodeServices node;
    private final String entityId;
    private final String treeName;
    private final int partition;
    /** Where prepares that begin a write's part in this tree wait while a scan or count holds them. */
    private final PrepareGate gate;
    private volatile PartialTree tree;
    private boolean hosted;
    /** Set when the actor stopped (a host still running then releases what it opened). */
    private volatile boolean stopped;

    private PartitionEntity(ActorContext<EntityMessage> ctx, NodeServices node, String entityId) {
        this.ctx = ctx;
        this.node = node;
        this.entityId = entityId;
        LogAddress a = LogAddress.parse(entityId);
        this.treeName = a.tree();
        this.partition = a.partition();
        this.gate = node.newPrepareGate();
    }

    /** @return the behaviour of the entity {@code entityId} ("tree/partition") */
    static Behavior<EntityMessage> create(String entityId, NodeServices node) {
        return Behaviors.setup(ctx -> Behaviors.withStash(node.stashCapacity(),
                stash -> new PartitionEntity(ctx, node, entityId).starting(stash)));
    }

    private Behavior<EntityMessage> starting(StashBuffer<EntityMessage> stash) {
        CompletableFuture<Void> host = CompletableFuture.runAsync(() -> {
            PartialTree t = node.tree(treeName);
            if (t.hostedPartitions().contains(partition)) {
                // left by an entity that stopped while it was still opening: start from a fresh claim and replay
                t.release(partition, node.releaseTimeout());
            }
            t.host(partition);
            tree = t;
            if (stopped) {
                t.release(partition, node.releaseTimeout()); // nobody serves it: do not keep the claim
            }
        }, node.blocking());
        ctx.pipeToSelf(host, (ok, err) -> new Hosted(err));
        return Behaviors.receive(EntityMessage.class)
                .onMessage(Hosted.class, h -> {
                    if (h.failure() != null) {
                        ctx.getLog().warn("{}: hosting failed: {}", entityId, h.failure().toString());
                        Response r = RemoteErrors.toResponse(h.failure());
                        stash.forEach(m -> {
                            if (m instanceof Request q) {
                                q.replyTo().tell(r);
                            } else if (m instanceof UnknownRequest u) {
                                u.replyTo().tell(u.refusal(node.protocols().own()));
                            }
                        });
                        return Behaviors.stopped();
                    }
                    hosted = true;
                    ctx.getLog().info("{}: hosted", entityId);
                    node.atomics().resolvePending(tree, partition); // prepares left by an earlier host
                    return stash.unstashAll(serving());
                })
                .onSignal(PostStop.class, sig -> {
                    stopped = true;
                    return Behaviors.same();
                })
                .onAnyMessage(m -> {
                    if (stash.isFull()) {
                        if (m instanceof Request q) {
                            q.replyTo().tell(RemoteErrors.toResponse(new dev.lattice.engine.LatticeSaturatedException(
                                    entityId + " is still opening and has " + node.stashCapacity()
                                            + " requests waiting", null)));
                        }
                    } else {
                        stash.stash(m);
                    }
                    return Behaviors.same();
                })
                .build();
    }

    private Behavior<EntityMessage> serving() {
        return Behaviors.receive(EntityMessage.class)
                .onMessage(Request.class, q -> {
                    serve(q);
                    return Behaviors.same();
                })
                .onMessage(UnknownRequest.class, u -> {
                    u.replyTo().tell(u.refusal(node.protocols().own()));
                    return Behaviors.same();
                })
                .onMessage(Release.class, r -> releasing(r))
                .onMessage(SweepScans.class, m -> {
                    sweepScans();
                    return Behaviors.same();
                })
                .onSignal(PostStop.class, sig -> {
                    stopped = true;
                    releaseNow();
                    return Behaviors.same();
                })
                .build();
    }

    /** Actor thread: closes the held scans idle past the session timeout; runs again while some are held. */
    private void sweepScans() {
        sweepScheduled = false;
        long idle = node.scanSessionTimeout().toNanos();
        long now = System.nanoTime();
        for (ScanSession s : scans.values()) {
            if (now - s.usedNanos > idle && scans.remove(s.id, s)) {
                node.blocking().execute(s::close); // a page being read holds the session's monitor
            }
        }
        scheduleSweep(false);
    }

    /** @param opening true when a scan is being opened (its session is registered later, on the blocking pool) */
    private void scheduleSweep(boolean opening) {
        if (!sweepScheduled && (opening || !scans.isEmpty()) && scansOpen) {
            sweepScheduled = true;
            ctx.scheduleOnce(node.scanSessionTimeout().dividedBy(2), ctx.getSelf(), SweepScans.INSTANCE);
        }
    }

    /** Closes every held scan and refuses new ones (before the partition is released). */
    private void closeScans() {
        scansOpen = false;
        for (ScanSession s : scans.values()) {
            if (scans.remove(s.id, s)) {
                s.close();
            }
        }
    }

    private Behavior<EntityMessage> releasing(Release why) {
        ctx.getLog().info("{}: releasing ({})", entityId, why == Release.LOST ? "claim lost" : "hand-off");
        hosted = false;
        PartialTree t = tree;
        Duration timeout = node.releaseTimeout();
        scansOpen = false;
        gate.close(); // held prepares go on (and meet the release) instead of waiting out their bound
        ctx.pipeToSelf(CompletableFuture.supplyAsync(() -> {
                    closeScans(); // their snapshots must not outlive the hosting (the next owner compacts the runs)
                    return t.release(partition, timeout);
                }, node.blocking()),
                (drained, err) -> new Released(err == null && drained));
        return Behaviors.receive(EntityMessage.class)
                .onMessage(Request.class, q -> {
                    q.replyTo().tell(RemoteErrors.toResponse(new PartitionNotHostedException(treeName, partition,
                            entityId + " is being handed off")));
                    return Behaviors.same();
                })
                .onMessage(UnknownRequest.class, u -> {
                    u.replyTo().tell(u.refusal(node.protocols().own()));
                    return Behaviors.same();
                })
                .onMessage(Released.class, r -> {
                    if (!r.drained()) {
                        ctx.getLog().warn("{}: released without a full drain or checkpoint", entityId);
                    }
                    return Behaviors.stopped();
                })
                .onAnyMessage(m -> Behaviors.same())
                .build();
    }

    /** The actor stopped without a hand-off (its node is shutting down): release on the way out. */
    private void releaseNow() {
        gate.close();
        closeScans();
        if (hosted) {
            hosted = false;
            tree.release(partition, node.releaseTimeout());
        }
    }

    private void serve(Request q) {
        if (q.op().level > node.protocols().own()) {
            // a node whose level was lowered to simulate an older release: that release could not read the
            // code (its serializer refused the message, Pekko dropped it); this covers the local deliveries
            return;
        }
        CompletionStage<Response> answer;
        try {
            answer = answer(q);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        if (TRACE.isDebugEnabled()) {
            answer = traced(q, answer);
        }
        answer.whenComplete((r, err) -> {
            if (err != null) {
                Throwable c = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
                        ? err.getCause() : err;
                if (c instanceof OwnershipLostException) {
                    ctx.getSelf().tell(Release.LOST);
                } else if (c instanceof dev.lattice.engine.AtomicWritePendingException) {
                    node.atomics().resolvePending(tree, partition); // the reader retries meanwhile
                }
                q.replyTo().tell(RemoteErrors.toResponse(c));
            } else {
                q.replyTo().tell(r);
            }
        });
        if (q.op() == Op.SCAN_OPEN) {
            scheduleSweep(true); // the session is registered on the blocking pool; the sweep looks later
        }
    }

    private CompletionStage<Response> traced(Request q, CompletionStage<Response> answer) {
        boolean atomic = q.op() == Op.PREPARE || q.op() == Op.RESOLVE || q.op() == Op.DECISION
                || q.op() == Op.ATOMIC_COMMIT || q.op() == Op.ATOMIC_COMMIT_TREES
                || q.op() == Op.ATOMIC_COMMIT_IDEMPOTENT;
        boolean wideRead = q.op() == Op.GET && q.key() != null && q.key().startsWith("w-");
        if (!atomic && !wideRead) {
            return answer;
        }
        long t0 = System.currentTimeMillis();
        int hosting = System.identityHashCode(this);
        return answer.whenComplete((r, err) -> TRACE.debug("{}@{} {} {} from {} -> {}", entityId,
                Integer.toHexString(hosting), q.op(), q.key(), t0,
                err != null ? err.toString() : r.ok() ? "ok " + r.number() + " " + r.flag()
                        + (wideRead && r.versions() != null && r.versions().length > 0 ? " v" + r.versions()[0] : "")
                        : "error " + r));
    }

    private CompletionStage<Response> answer(Request q) {
        PartialTree t = tree;
        switch (q.op()) {
            case PUT:
                checkKey(q.key());
                return t.putAsync(q.key(), q.value()).thenApply(v -> Response.ok(v, true));
            case PUT_TTL:
                checkKey(q.key());
                return t.putAsync(q.key(), q.value(), Duration.ofMillis(q.number())).thenApply(v -> Response.ok(v, true));
            case PUT_IF_ABSENT:
                checkKey(q.key());
                return t.putIfAbsentAsync(q.key(), q.value()).thenApply(b -> Response.ok(0, b));
            case PUT_IF_VERSION:
                checkKey(q.key());
                return t.putIfVersionAsync(q.key(), q.value(), q.number()).thenApply(b -> Response.ok(0, b));
            case DELETE:
                checkKey(q.key());
                return t.deleteAsync(q.key()).thenApply(b -> Response.ok(0, b));
            case PUT_ALL:
                return t.putAllAsync(entries(q)).thenApply(v -> Response.ok(0, true));
            case ATOMIC_COMMIT:
            case ATOMIC_COMMIT_TREES:
            case ATOMIC_COMMIT_IDEMPOTENT:
                return node.atomics().commit(t, partition, q, gate);
            case PREPARE: {
                List<dev.lattice.engine.AtomicOp> ops = q.atomicOps();
                LogAddress c = LogAddress.parse(q.toKey());
                dev.lattice.spi.LogId coordinator = new dev.lattice.spi.LogId(c.tree(), c.partition());
                // a write coordinated in this tree prepared its coordinator's part here first; one coordinated
                // elsewhere says so in the flag (older coordinators send false): such a write holds keys in this
                // tree, a scan's snapshot waits for it, so it does not wait at the gate
                boolean continues = q.flag() || c.tree().equals(treeName);
                java.util.function.Supplier<CompletableFuture<Long>> prepare =
                        () -> t.prepareAtomic(partition, q.key(), coordinator, ops);
                return (continues ? prepare.get() : gate.admit(prepare)).thenApply(floor -> Response.ok(floor, true));
            }
            case PREPARE_HOLD:
                if (node.dropsPrepareHolds()) {
                    return new CompletableFuture<>(); // never answered, as an older node that cannot read the op
                }
                return CompletableFuture.completedFuture(Response.ok(gate.place(q.session(), q.number()), true));
            case PREPARE_RELEASE:
                return CompletableFuture.completedFuture(Response.ok(0, gate.release(q.session())));
            case RESOLVE:
                return t.resolveAtomic(partition, q.key(), q.flag(), q.number()).thenApply(v -> Response.ok(0, true));
            case DECISION:
                return node.atomics().decision(t, partition, q.key());
            case GET: {
                checkKey(q.key());
                Optional<Versioned> now = t.getVersionedIfInMemory(q.key());
                if (now != null) { // a memtable hit is answered here: no hop to the blocking pool and back
                    return CompletableFuture.completedFuture(found(q.key(), now));
                }
                return CompletableFuture.supplyAsync(() -> read(t, q), node.blocking());
            }
            case GET_BATCH: {
                Response now = batch(t, q, true);
                if (now != null) {
                    return CompletableFuture.completedFuture(now);
                }
                return CompletableFuture.supplyAsync(() -> read(t, q), node.blocking());
            }
            default:
                return CompletableFuture.supplyAsync(() -> read(t, q), node.blocking());
        }
    }

    private static Response found(String key, Optional<Versioned> v) {
        return v.map(x -> Response.entries(List.of(key), List.of(x.value()), new long[] {x.version()},
                        new long[] {x.expiresAtMillis()}, false))
                .orElseGet(() -> Response.entries(List.of(), List.of(), new long[0], new long[0], false));
    }

    /**
     * Answers a {@link Op#GET_BATCH}: each key as {@link Op#GET} reads it, in the order asked, stopping (the answer's
     * flag) before the key whose value would take the answer past the message budget (never before the first).
     *
     * @param inMemoryOnly read the memtable only ({@link PartialTree#getVersionedIfInMemory}): null when some key
     *     needs more (runs, the read lease proven again, a pending atomic write), and the batch goes to the blocking
     *     pool
     * @throws IllegalArgumentException if a key is empty or longer than the tree's limit
     */
    private Response batch(PartialTree t, Request q, boolean inMemoryOnly) {
        List<String> asked = q.keys();
        int n = asked.size();
        List<String> keys = new ArrayList<>(n);
        List<byte[]> values = new ArrayList<>(n);
        long[] versions = new long[n];
        long[] expiries = new long[n];
        long bytes = 0;
        boolean cut = false;
        for (String k : asked) {
            checkKey(k);
            Optional<Versioned> v = inMemoryOnly ? t.getVersionedIfInMemory(k) : t.getVersioned(k);
            if (v == null) {
                return null;
            }
            long add = k.length() * 3L + (v.isPresent() ? v.get().value().length : 0) + 24;
            if (!keys.isEmpty() && bytes + add > node.messageBudget()) {
                cut = true; // the sender asks again for the keys after the last one answered
                break;
            }
            bytes += add;
            int i = keys.size();
            keys.add(k);
            values.add(v.map(Versioned::value).orElse(null));
            versions[i] = v.map(Versioned::version).orElse(0L);
            expiries[i] = v.map(Versioned::expiresAtMillis).orElse(0L);
        }
        int m = keys.size();
        return Response.entries(keys, values, java.util.Arrays.copyOf(versions, m),
                java.util.Arrays.copyOf(expiries, m), cut);
    }

    /** The calls that may block (reads may fetch run blocks from the provider; an atomic write waits). */
    private Response read(PartialTree t, Request q) {
        switch (q.op()) {
            case GET:
                checkKey(q.key());
                return found(q.key(), t.getVersioned(q.key()));
            case GET_BATCH:
                return batch(t, q, false);
            case GET_ALL: {
                for (String k : q.keys()) {
                    checkKey(k);
                }
                Map<String, Versioned> found = t.getAllVersioned(q.keys());
                List<String> keys = new ArrayList<>();
                List<byte[]> values = new ArrayList<>();
                List<Long> versions = new ArrayList<>();
                long bytes = 0;
                boolean cut = false;
                for (Map.Entry<String, Versioned> e : found.entrySet()) {
                    long add = e.getKey().length() * 3L + e.getValue().value().length + 24;
                    if (!keys.isEmpty() && bytes + add > node.messageBudget()) {
                        cut = true; // the caller asks again for the keys after the last one returned
                        break;
                    }
                    bytes += add;
                    keys.add(e.getKey());
                    values.add(e.getValue().value());
                    versions.add(e.getValue().version());
                }
                long[] v = new long[versions.size()];
                for (int i = 0; i < v.length; i++) {
                    v[i] = versions.get(i);
                }
                return Response.entries(keys, values, v, new long[keys.size()], cut);
            }
            case PUT_ALL_ATOMIC:
                return Response.ok(t.putAllAtomic(entries(q)), true);
            case SCAN:
                return scanPage(t, q);
            case SCAN_OPEN:
                return openScan(t, q);
            case SCAN_NEXT:
                return session(q).page(q.number(), node.messageBudget(), entityId);
            case SCAN_CHECK: {
                ScanSession s = session(q);
                s.usedNanos = System.nanoTime();
                return Response.ok(t.atomicPreparesSeen(partition), true);
            }
            case COUNT_CUT: {
                long before = t.atomicPreparesSeen(partition); // before the count, as a scan reads it before its snapshot
                return Response.counted(t.count(partition), before);
            }
            case SCAN_CLOSE: {
                ScanSession s = scans.remove(q.session());
                if (s != null) {
                    s.close();
                }
                return Response.ok(0, s != null);
            }
            case COUNT:
                return Response.ok(t.count(partition), true);
            default:
                throw new IllegalArgumentException("operation " + q.op() + " is not served by " + entityId);
        }
    }

    /**
     * Opens a held scan: reads the partition's atomic-prepare counter, then opens the engine's cursor (which waits
     * for pending atomic writes holding keys of the range, then takes its snapshot), so that every prepare not
     * counted in the answered counter is one the snapshot either waited for or that came after the reading. When a
     * prepare came while the cursor opened, it opens again (twice at most), as the validation would fail anyway.
     */
    private Response openScan(PartialTree t, Request q) {
        if (scans.size() >= node.maxScanSessions()) {
            throw new dev.lattice.engine.LatticeSaturatedException(entityId + " holds " + scans.size()
                    + " open scans, its limit; close cursors that are done", null);
        }
        int limit = (int) Math.max(1, Math.min(q.number(), node.scanPageEntries()));
        long seen;
        ScanCursor c;
        for (int attempt = 0; ; attempt++) {
            seen = t.atomicPreparesSeen(partition);
            c = t.scan(partition, q.key(), q.toKey(), q.flag());
            if (attempt == 2 || t.atomicPreparesSeen(partition) == seen) {
                break;
            }
            c.close();
        }
        long id;
        do {
            id = java.util.concurrent.ThreadLocalRandom.current().nextLong();
        } while (id == 0 || scans.containsKey(id));
        ScanSession s = new ScanSession(id, c, limit);
        scans.put(id, s);
        if (!scansOpen) { // released meanwhile: closeScans may have run before the put
            scans.remove(id, s);
            s.close();
            throw new PartitionNotHostedException(treeName, partition, entityId + " is being handed off");
        }
        try {
            return s.page(0, node.messageBudget(), entityId).withSession(id, seen);
        } catch (RuntimeException e) {
            scans.remove(id, s);
            s.close();
            throw e;
        }
    }

    private ScanSession session(Request q) {
        ScanSession s = scans.get(q.session());
        if (s == null) {
            throw new dev.lattice.engine.ScanSessionLostException("scan session " + q.session() + " is not held by "
                    + entityId + ": it sat idle longer than " + node.scanSessionTimeout().toMillis()
                    + " ms, or the partition was handed off or its owner restarted since it was opened; a scan's"
                    + " snapshot cannot be continued elsewhere, open a new scan");
        }
        return s;
    }

    private Response scanPage(PartialTree t, Request q) {
        int limit = (int) Math.max(1, Math.min(q.number(), node.scanPageEntries()));
        try (ScanCursor c = t.scan(partition, q.key(), q.toKey(), q.flag())) {
            return fill(c, limit, node.messageBudget());
        }
    }

    /** Up to {@code limit} entries (and about half a message's budget) of the cursor; "more" when some are left. */
    private static Response fill(ScanCursor c, int limit, long budget) {
        List<String> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        List<Long> versions = new ArrayList<>();
        boolean more = false;
        long bytes = 0;
        while (c.hasNext()) {
            if (keys.size() == limit || bytes > budget / 2) {
                more = true;
                break;
            }
            TreeEntry e = c.next();
            bytes += e.key().length() * 3L + e.value().length + 24;
            keys.add(e.key());
            values.add(e.value());
            versions.add(e.version());
        }
        long[] v = new long[versions.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = versions.get(i);
        }
        return Response.entries(keys, values, v, new long[v.length], more);
    }

    private Map<String, byte[]> entries(Request q) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (int i = 0; i < q.keys().size(); i++) {
            checkKey(q.keys().get(i));
            m.put(q.keys().get(i), q.values().get(i));
        }
        return m;
    }

    /** A request routed here must be for this partition (another hosted partition would answer, but wrongly routed). */
    private void checkKey(String key) {
        if (key == null) {
            throw new NullPointerException("key");
        }
        int p = tree.partitionOf(key);
        if (p != partition) {
            throw new IllegalArgumentException("key '" + key + "' belongs to partition " + p + " of tree '" + treeName
                    + "', not to " + entityId + " (the sender routes with another partition count or hash)");
        }
    }
}
