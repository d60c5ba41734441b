package dev.lattice.engine;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The live state of one partition: a sorted map of committed values, plus the atomic writes in flight through it.
 * Written only by the partition's single applier (the log pipeline's commit step, or replay before the pipeline
 * starts); read by any thread.
 *
 * <p>A map value is either a {@link Versioned} (a committed single-key write, visible to everyone) or a
 * {@link TxnNode} written by an atomic write: it is visible once its {@link Txn} is published, and keeps the older
 * value in {@code prev} for readers that must not see it yet (pending writes, older snapshots). Nodes are folded
 * back into plain values once no open snapshot can need the older value.
 *
 * <p>Snapshot format {@value #SNAPSHOT_FORMAT} (format 1, without the two trailing sections, is still read):
 * {@code "LTCK", i32 format, i64 through offset, i64 max version, i64 count, then per key: i32 key length, key
 * (UTF-8), i64 version, i32 value length, value; i32 pending count, per pending atomic write: UTF id, UTF
 * coordinator tree, i32 coordinator partition, i32 mutation
 * count, per mutation u8 op, UTF key, [i32 value length, value]; i32 decision count, per decision: UTF id,
 * bool commit, i64 version, i64 time (epoch ms), bool has idempotency key, [UTF key, i64 digest], i32 outstanding
 * participants, per participant UTF tree, i32 partition; then i32 CRC32C of everything before}.
 */
final class PartitionState {

    static final int SNAPSHOT_FORMAT = 2;
    static final int SNAPSHOT_FORMAT_V1 = 1;
    /**
     * Format 2 with an {@code i64} expiry (epoch ms, 0 = never) after each key's version; written only when a value
     * expires (published under checkpoint format {@value #SNAPSHOT_FORMAT}, the bytes say which).
     */
    static final int SNAPSHOT_FORMAT_TTL = 4;
    static final int SNAPSHOT_MAGIC = 0x4C54434B; // "LTCK"
    /** Estimated JVM bytes per entry besides key and value bytes (skip-list node, index, String, Versioned, array headers). */
    static final int ENTRY_OVERHEAD_BYTES = 128;

    /** A value written by an atomic write; {@code value == null} is a delete; {@code expiresAt} 0 = never. */
    static final class TxnNode {
        final byte[] value;
        final Txn txn;
        final long expiresAt;
        volatile Object prev;

        TxnNode(byte[] value, Txn txn, Object prev) {
            this(value, 0, txn, prev);
        }

        TxnNode(byte[] value, long expiresAt, Txn txn, Object prev) {
            this.value = value;
            this.expiresAt = expiresAt;
            this.txn = txn;
            this.prev = prev;
        }

        Object view() {
            return value == null ? new Tombstone(txn.version) : new Versioned(value, txn.version, expiresAt);
        }
    }

    /** A precondition of an atomic write that did not hold. {@code actual == 0} means absent. */
    record PreconditionFailure(String key, long expected, long actual, boolean heldByOtherWrite) {
    }

    /** An atomic write prepared in this log and not resolved here yet; its decision is (to be) in {@code coordinator}. */
    record Unresolved(Txn txn, List<WalRecord.Mutation> mutations, LogId coordinator) {
    }

    /**
     * A decision, kept by the write's coordinator log (its first participant): the commit point (or recorded abort)
     * of a multi-log atomic write. {@code outstanding}: the other participants that have no durable resolve yet.
     */
    static final class Decision {
        final String id;
        final boolean commit;
        final long version;
        final long timeMillis;
        final String idempotencyKey;
        final long digest;
        final Set<LogId> outstanding = ConcurrentHashMap.newKeySet();

        Decision(String id, boolean commit, long version, long timeMillis, String idempotencyKey, long digest,
                 List<LogId> participants) {
            this.id = id;
            this.commit = commit;
            this.version = version;
            this.timeMillis = timeMillis;
            this.idempotencyKey = idempotencyKey;
            this.digest = digest;
            this.outstanding.addAll(participants);
        }
    }

    final LogId log;
    /** The memtable: replaced (not cleared) at each freeze, so readers read it before {@link #layers}. */
    volatile ConcurrentSkipListMap<String, Object> map = new ConcurrentSkipListMap<>();
    /** Frozen memtables and runs below the memtable. */
    final PartitionLayers layers;
    /** Deletes a retired run; set by the log's maintenance once it owns the log. */
    volatile java.util.function.Consumer<RunHandle> runDeleter = r -> {
        throw new IllegalStateException("no run store for " + r);
    };
    /** The manifest this state was opened from, or null. */
    dev.lattice.engine.lsm.Manifest loadedManifest;
    /** A whole-partition checkpoint (format 1 or 2) was loaded: the next flush converts it to runs. */
    volatile boolean legacyCheckpointLoaded;
    /** The memory estimate of the memtable (applier-owned). */
    long memtableBytes;
    final AtomicLong memoryBudgetUsed;
    final AtomicWrites atomics;
    final Function<String, Txn> replayTxns;
    /** Keys whose map value is a {@link TxnNode}; applier-owned, read by {@link #count()}. */
    private final Set<String> chained = ConcurrentHashMap.newKeySet();
    /** Atomic writes prepared here and not resolved yet, by id; written by the applier. */
    final Map<String, Unresolved> unresolved = new ConcurrentHashMap<>();
    /** Process-wide count of partition states made, the base of each one's {@link #preparesSeen}. */
    private static final java.util.concurrent.atomic.AtomicLong STATES = new java.util.concurrent.atomic.AtomicLong();
    /**
     * The atomic-write prepares applied to this state, counted after each one is in {@link #unresolved}, from a
     * base distinct per state (its ordinal times 2^40), so that readings of two hostings never compare equal
     * ({@link PartialTree#atomicPreparesSeen}). Written by the applier thread only.
     */
    final java.util.concurrent.atomic.AtomicLong preparesSeen =
            new java.util.concurrent.atomic.AtomicLong(STATES.incrementAndGet() << 40);
    /** Decisions of the multi-log atomic writes this log coordinated, by id and by idempotency key. */
    final Map<String, Decision> decisions = new ConcurrentHashMap<>();
    final Map<String, Decision> decisionsByIdempotencyKey = new ConcurrentHashMap<>();
    long appliedOffset = -1;
    long maxVersion;
    /** The memtable's range deletes, the gates of older snapshots, the versions compaction must respect. */
    final MemtableRanges ranges = new MemtableRanges();
    /** A value with an expiry was applied to this partition (reads must then filter even the memtable-only path). */
    volatile boolean expiringSeen;
    private long lastCompactHorizon = Long.MIN_VALUE;

    /**
     * @param replayTxns the shared {@link Txn} of an atomic write id while its tree replays (partitions of one tree
     *     see the same object), used for prepares that carry no live {@link Txn}
     */
    PartitionState(LogId log, AtomicLong memoryBudgetUsed, AtomicWrites atomics, Function<String, Txn> replayTxns) {
        this.log = log;
        this.memoryBudgetUsed = memoryBudgetUsed;
        this.atomics = atomics;
        this.replayTxns = replayTxns;
        this.layers = new PartitionLayers(r -> runDeleter.accept(r));
    }

    /** Adds to (or with a negative delta gives back) the memtable's estimate and the process-wide one. */
    private void account(long delta) {
        memtableBytes += delta;
        memoryBudgetUsed.addAndGet(delta);
    }

    static long estimate(String key, byte[] value) {
        return ENTRY_OVERHEAD_BYTES + key.length() + (value == null ? 0 : value.length);
    }

    // ------------------------------------------------------------------ reads

    /** @return the newest visible value, or null when absent (memtable, then the layers below it) */
    Versioned latest(String key) {
        return at(key, Long.MAX_VALUE);
    }

    /**
     * @return the value as of snapshot {@code s} (single-key writes always, atomic writes published at or before
     *     {@code s}), looking through the memtable and then the layers below it; null when absent
     */
    Versioned at(String key, long s) {
        return at(key, s, CLOCK_WHEN_NEEDED);
    }

    /**
     * As {@link #at(String, long)}, with expiry judged at {@code nowMillis}, or at {@link #nowMillis()} read only
     * when the value found carries an expiry if {@code nowMillis} is {@link #CLOCK_WHEN_NEEDED}.
     */
    Versioned at(String key, long s, long nowMillis) {
        List<MemRange> rs = ranges.list; // before the layers, as the map: a freeze moves ranges down
        Object r = topAt(map.get(key), s);
        PartitionLayers.Layers l = layers.current();
        if (r == null && !l.isEmpty()) {
            r = layers.find(key, s);
        }
        if (r instanceof Versioned v) {
            long now = nowMillis != CLOCK_WHEN_NEEDED ? nowMillis : v.expiresAtMillis() == 0 ? 0 : nowMillis();
            if (!ReadFilter.hidden(key, v, s, now, rs, l, ranges.gates)) {
                return v;
            }
        }
        return null;
    }

    /**
     * @return the latest value when the memtable decides the key ({@code Optional.empty()} for a delete or a value
     *     hidden by a range delete or its expiry), or null when the layers below it must be looked at
     */
    Optional<Versioned> latestInMemtable(String key) {
        List<MemRange> rs = ranges.list; // before the map, as in at()
        Object r = topAt(map.get(key), Long.MAX_VALUE);
        if (r == null) {
            return null;
        }
        if (r instanceof Versioned v) {
            long now = v.expiresAtMillis() == 0 ? 0 : nowMillis();
            if (!ReadFilter.hidden(key, v, Long.MAX_VALUE, now, rs, layers.current(), ranges.gates)) {
                return Optional.of(v);
            }
        }
        return Optional.empty();
    }

    /** For {@link #at(String, long, long)}: read the clock only for a value that carries an expiry. */
    static final long CLOCK_WHEN_NEEDED = Long.MIN_VALUE;

    /** @return the wall clock of time-to-live, in epoch ms */
    long nowMillis() {
        return atomics.clock().millis();
    }

    /** @return the wall-clock ms a write's version was cut at (its hybrid clock; deterministic on replay) */
    static long timeOf(long version) {
        return version >>> 12;
    }

    /** @return a memtable object's newest visible value, or null when it holds none (deleted or not here) */
    static Versioned latest(Object o) {
        return at(o, Long.MAX_VALUE);
    }

    /** @return a memtable object's value as of snapshot {@code s}, or null when it holds none (deleted or not here) */
    static Versioned at(Object o, long s) {
        return topAt(o, s) instanceof Versioned v ? v : null;
    }

    /**
     * What a memtable object says about its key as of snapshot {@code s}: a {@link Versioned}, a {@link Tombstone}
     * when deleted, or null when this layer does not know (look below it).
     */
    static Object topAt(Object o, long s) {
        while (o instanceof TxnNode n) {
            long seq = n.txn.seq;
            if (seq > 0 && seq <= s) {
                return n.value == null ? Tombstone.ABSENT : new Versioned(n.value, n.txn.version, n.expiresAt);
            }
            o = n.prev;
        }
        return o;
    }

    /**
     * @return the number of visible keys: the entries of a newest scan, skipping the tombstones it hands out raw
     *     while no layer is below the memtable (a memtable keeps the tombstones written while a layer was below it,
     *     even after that layer is gone, and a flush may remove the last layer while a count runs)
     */
    long count() {
        long n = 0;
        for (java.util.Iterator<Map.Entry<String, Object>> it = scan(null, null, false, Long.MAX_VALUE);
             it.hasNext(); ) {
            if (latest(it.next().getValue()) != null) {
                n++;
            }
        }
        return n;
    }

    /**
     * The visible entries in {@code [from, to)} as of {@code snapshot}; values are memtable objects (read them with
     * {@link #at(Object, long)}) while no layer exists below the memtable, {@link Versioned} otherwise. With layers
     * below (or range deletes, or expiring values) one entry object is refilled for each key: read it before the next.
     */
    java.util.Iterator<Map.Entry<String, Object>> scan(String from, String to, boolean reverse, long snapshot) {
        List<MemRange> rs = ranges.list;
        java.util.NavigableMap<String, Object> m = PartitionLayers.range(map, from, to);
        if (reverse) {
            m = m.descendingMap();
        }
        PartitionLayers.Layers l = layers.current();
        if (l.isEmpty() && rs.isEmpty() && !expiringSeen) {
            return m.entrySet().iterator();
        }
        if (l.isEmpty()) {
            return ReadFilter.filter(m.entrySet().iterator(), snapshot, nowMillis(), rs, l, ranges.gates);
        }
        // range deletes from the layers the merge pinned, never newer ones (a compaction may have dropped one)
        java.util.Iterator<Map.Entry<String, Object>> it = layers.scan(m, from, to, reverse, snapshot);
        return ReadFilter.filter(it, snapshot, nowMillis(), rs, PartitionLayers.layersOf(it), ranges.gates);
    }

    // ------------------------------------------------------------------ apply

    /**
     * Applies one entry with its version; returns the caller's result: the version (Long) or a Boolean for
     * single-key writes; the version or a {@link PreconditionFailure} for a single-log atomic write; TRUE or a
     * {@link PreconditionFailure} for a prepare; the version for a decision; null for a resolve.
     *
     * @param liveTxn the atomic write this process is running (prepare and decision), or null on replay
     */
    Object apply(byte kind, List<WalRecord.Mutation> ms, long version, Txn liveTxn) {
        if (version > maxVersion) {
            maxVersion = version;
        }
        switch (kind) {
            case WalRecord.KIND_MUTATIONS: {
                Object result = null;
                for (int i = 0, n = ms.size(); i < n; i++) {
                    result = applyMutation(ms.get(i), version);
                }
                return result;
            }
            case WalRecord.KIND_ATOMIC:
                return applyAtomic(ms, version);
            case WalRecord.KIND_PREPARE:
                return applyPrepare(ms, liveTxn, version);
            case WalRecord.KIND_RESOLVE:
                applyResolve(ms.get(0));
                return null;
            case WalRecord.KIND_DECISION:
                return applyDecision(ms, version);
            default:
                throw new IllegalStateException("not a tree entry: kind " + kind);
        }
    }

    private Object applyMutation(WalRecord.Mutation m, long version) {
        switch (m.op()) {
            case WalRecord.Mutation.PUT:
                put(m.key(), m.value(), version);
                return version;
            case WalRecord.Mutation.PUT_TTL:
                put(m.key(), m.value(), version, m.expiresAtMillis());
                return version;
            case WalRecord.Mutation.DELETE_RANGE:
                addRange(new MemRange(m.key(), m.rangeEnd(), version, null));
                return version;
            case WalRecord.Mutation.PUT_IF_VERSION: { // written by releases before conditions were decided at cut
                if (!versionMatches(m.key(), m.expectedVersion(), version)) {
                    return Boolean.FALSE;
                }
                put(m.key(), m.value(), version);
                return Boolean.TRUE;
            }
            case WalRecord.Mutation.DELETE: {
                boolean existed = at(m.key(), Long.MAX_VALUE, timeOf(version)) != null;
                if (layers.isEmpty() && ranges.list.isEmpty()) {
                    Object old = map.remove(m.key());
                    drop(m.key(), old);
                    return existed;
                }
                Object old = map.put(m.key(), new Tombstone(version));
                account(estimate(m.key(), null));
                drop(m.key(), old);
                return existed;
            }
            default:
                throw new IllegalStateException("not a tree mutation: op " + m.op());
        }
    }

    /**
     * The condition of a put-if-version: whether {@code key}'s version (0 = absent, expiry judged at the time of the
     * write's {@code version}) equals {@code expected}.
     */
    boolean versionMatches(String key, long expected, long version) {
        Versioned cur = at(key, Long.MAX_VALUE, timeOf(version));
        return (cur == null ? 0 : cur.version()) == expected;
    }

    void put(String key, byte[] value, long version) {
        put(key, value, version, 0);
    }

    /** Applier: a committed value; {@code expiresAt} 0 = never. */
    void put(String key, byte[] value, long version, long expiresAt) {
        if (expiresAt != 0 && !expiringSeen) {
            expiringSeen = true;
        }
        ranges.noteVersion(version);
        Object old = map.put(key, new Versioned(value, version, expiresAt));
        account(estimate(key, value));
        drop(key, old);
    }

    /** Applier: a range delete joins the memtable (no key is touched: the cost is independent of the range). */
    void addRange(MemRange r) {
        account(ranges.add(r));
    }

    /** @return the lowest version an entry above the runs may have (see {@link MemtableRanges#floorAboveRuns}) */
    long versionFloorAboveRuns() {
        return ranges.floorAboveRuns(!unresolved.isEmpty(), layers.current().frozen());
    }

    /** Gives back the estimate of a value (chain) no longer in the map. */
    private void drop(String key, Object o) {
        if (o instanceof TxnNode) {
            chained.remove(key);
        }
        dropChain(key, o);
    }

    /** @return the first precondition that fails now, or null (deterministic in log order) */
    PreconditionFailure check(List<WalRecord.Mutation> ms) {
        return check(ms, nowMillis());
    }

    /** As {@link #check(List)}, with expiry judged at {@code timeMillis} (the entry's time when applying). */
    PreconditionFailure check(List<WalRecord.Mutation> ms, long timeMillis) {
        for (WalRecord.Mutation m : ms) {
            if (m.op() != WalRecord.Mutation.EXPECT) {
                continue;
            }
            Object top = map.get(m.key());
            if (top instanceof TxnNode n && n.txn.seq == 0) {
                return new PreconditionFailure(m.key(), m.expectedVersion(), 0, true);
            }
            Versioned cur = at(m.key(), Long.MAX_VALUE, timeMillis);
            long actual = cur == null ? 0 : cur.version();
            if (actual != m.expectedVersion()) {
                return new PreconditionFailure(m.key(), m.expectedVersion(), actual, false);
            }
        }
        return null;
    }

    private Object applyAtomic(List<WalRecord.Mutation> ms, long version) {
        PreconditionFailure f = check(ms, timeOf(version));
        if (f != null) {
            return f;
        }
        Txn t = new Txn("single");
        List<String> keys = insert(ms, t);
        atomics.visibility.publish(t, version);
        ranges.noteVersion(version);
        long horizon = atomics.visibility.horizon();
        for (String k : keys) {
            compact(k, horizon);
        }
        ranges.fold(horizon);
        return version;
    }

    /** Inserts the puts and deletes of {@code ms} as nodes of {@code t} on top of each key; returns their keys. */
    List<String> insert(List<WalRecord.Mutation> ms, Txn t) {
        List<String> keys = new ArrayList<>(ms.size());
        for (WalRecord.Mutation m : ms) {
            byte op = m.op();
            if (op == WalRecord.Mutation.DELETE_RANGE) {
                addRange(new MemRange(m.key(), m.rangeEnd(), 0, t));
                continue;
            }
            if (op != WalRecord.Mutation.PUT && op != WalRecord.Mutation.DELETE && op != WalRecord.Mutation.PUT_TTL) {
                continue;
            }
            String k = m.key();
            byte[] v = op == WalRecord.Mutation.DELETE ? null : m.value();
            long expiresAt = op == WalRecord.Mutation.PUT_TTL ? m.expiresAtMillis() : 0;
            if (expiresAt != 0 && !expiringSeen) {
                expiringSeen = true;
            }
            map.compute(k, (key, older) -> new TxnNode(v, expiresAt, t, older));
            chained.add(k);
            account(estimate(k, v));
            keys.add(k);
        }
        return keys;
    }

    private Object applyPrepare(List<WalRecord.Mutation> ms, Txn liveTxn, long version) {
        String id = ms.get(0).key();
        LogId coordinator = readLogId(ms.get(0).value());
        PreconditionFailure f = check(ms, timeOf(version));
        if (f != null) {
            return f;
        }
        Txn t = liveTxn != null ? liveTxn : replayTxns.apply(id);
        List<WalRecord.Mutation> writes = new ArrayList<>(ms.size());
        for (WalRecord.Mutation m : ms) {
            if (m.op() == WalRecord.Mutation.PUT || m.op() == WalRecord.Mutation.DELETE
                    || m.op() == WalRecord.Mutation.PUT_TTL || m.op() == WalRecord.Mutation.DELETE_RANGE) {
                writes.add(m);
            }
        }
        insert(writes, t);
        unresolved.put(id, new Unresolved(t, writes, coordinator));
        preparesSeen.incrementAndGet(); // after the put: a reader that sees the count sees the write pending
        return Boolean.TRUE;
    }

    /** PREPARE fields: the coordinator log (UTF tree, i32 partition). */
    static byte[] prepareFields(LogId coordinator) {
        return logIdBytes(coordinator);
    }

    private static byte[] logIdBytes(LogId l) {
        byte[] tree = l.tree().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + tree.length + 4).putShort((short) tree.length).put(tree).putInt(l.partition())
                .array();
    }

    private static LogId readLogId(ByteBuffer b) {
        byte[] tree = new byte[b.getShort() & 0xFFFF];
        b.get(tree);
        return new LogId(new String(tree, StandardCharsets.UTF_8), b.getInt());
    }

    private static LogId readLogId(byte[] bytes) {
        return readLogId(ByteBuffer.wrap(bytes));
    }

    /** RESOLVE fields: u8 outcome (1 commit, 0 abort), i64 version, then the coordinator log. */
    static byte[] resolveFields(boolean commit, long version, LogId coordinator) {
        byte[] c = logIdBytes(coordinator);
        return ByteBuffer.allocate(9 + c.length).put((byte) (commit ? 1 : 0)).putLong(version).put(c).array();
    }

    /** A RESOLVE entry's fields, read without applying it. */
    record ResolveFields(String id, boolean commit, long version, LogId coordinator) {
    }

    /**
     * Reads a RESOLVE entry's fields without applying it (a follower decides itself when the write becomes visible).
     *
     * @param m the entry's TXN op
     * @return its fields
     */
    static ResolveFields peekResolve(WalRecord.Mutation m) {
        ByteBuffer b = ByteBuffer.wrap(m.value());
        boolean commit = b.get() == 1;
        long version = b.getLong();
        return new ResolveFields(m.key(), commit, version, readLogId(b));
    }

    private void applyResolve(WalRecord.Mutation m) {
        ByteBuffer b = ByteBuffer.wrap(m.value());
        boolean commit = b.get() == 1;
        long version = b.getLong();
        LogId coordinator = readLogId(b);
        resolve(m.key(), commit, version);
        // durable here: the coordinator need not keep the decision for this log any more
        atomics.resolvedIn(coordinator, log, m.key());
    }

    /**
     * Resolves an atomic write prepared here in memory (no-op if unknown: resolved before this state's checkpoint).
     * Durable only through a RESOLVE entry (or the decision its coordinator log keeps until then).
     */
    void resolve(String id, boolean commit, long version) {
        // the write leaves `unresolved` only after its outcome is in its Txn: a partial tree's reader that stops
        // waiting when the write is gone from here must then see it published (or aborted), never still pending
        Unresolved u = unresolved.get(id);
        if (u == null) {
            return;
        }
        if (commit) {
            atomics.visibility.publish(u.txn(), version);
            if (version > maxVersion) {
                maxVersion = version;
            }
            ranges.noteVersion(version);
            long horizon = atomics.visibility.horizon();
            for (WalRecord.Mutation m : u.mutations()) {
                if (m.op() != WalRecord.Mutation.DELETE_RANGE) {
                    compact(m.key(), horizon);
                }
            }
            ranges.fold(horizon);
        } else {
            if (u.txn().seq == 0) {
                u.txn().seq = Txn.ABORTED;
            }
            for (WalRecord.Mutation m : u.mutations()) {
                if (m.op() == WalRecord.Mutation.DELETE_RANGE) {
                    account(ranges.remove(u.txn()));
                } else {
                    unlink(m.key(), u.txn());
                }
            }
        }
        unresolved.remove(id, u);
    }

    /** Removes the node of an aborted write from a key's chain. */
    private void unlink(String key, Txn t) {
        Object top = map.get(key);
        TxnNode parent = null;
        Object o = top;
        while (o instanceof TxnNode n) {
            if (n.txn == t) {
                account(-estimate(key, n.value));
                if (parent != null) {
                    parent.prev = n.prev;
                } else if (n.prev == null) {
                    map.remove(key);
                    chained.remove(key);
                } else {
                    map.put(key, n.prev);
                    if (!(n.prev instanceof TxnNode)) {
                        chained.remove(key);
                    }
                }
                return;
            }
            parent = n;
            o = n.prev;
        }
    }

    /**
     * Folds a key's newest node into a plain value (or removes the key for a delete) once it is published and no
     * open snapshot is older than it; otherwise keeps the chain and retries at a later apply.
     */
    void compact(String key, long horizon) {
        Object top = map.get(key);
        if (!(top instanceof TxnNode n)) {
            return;
        }
        long seq = n.txn.seq;
        if (seq <= 0) {
            return;
        }
        if (seq > horizon) {
            lastCompactHorizon = horizon; // kept for an open snapshot: retry once the oldest snapshot moves
            return;
        }
        Object older = n.prev;
        n.prev = null;
        if (n.value == null) {
            if (layers.isEmpty()) {
                map.remove(key);
                account(-estimate(key, null));
            } else {
                map.put(key, new Tombstone(n.txn.version)); // hides older values below; same estimate as the node
            }
        } else {
            map.put(key, new Versioned(n.value, n.txn.version, n.expiresAt));
        }
        chained.remove(key);
        dropChain(key, older);
    }

    /** Gives back the estimate of every value in a chain. */
    private void dropChain(String key, Object o) {
        while (o != null) {
            if (o instanceof TxnNode n) {
                account(-estimate(key, n.value));
                o = n.prev;
            } else {
                account(-estimate(key, o instanceof Versioned v ? v.value() : null));
                o = null;
            }
        }
    }

    /**
     * Retries folding nodes that an open snapshot kept (applier, after each batch), when the oldest open snapshot
     * moved since the last try.
     */
    void compactChained() {
        if (chained.isEmpty() && ranges.settled()) {
            return;
        }
        long horizon = atomics.visibility.horizon();
        if (horizon == lastCompactHorizon) {
            return;
        }
        lastCompactHorizon = horizon;
        ranges.fold(horizon);
        for (String k : List.copyOf(chained)) {
            Object top = map.get(k);
            if (top instanceof TxnNode n && n.txn.seq > 0) {
                compact(k, horizon);
            }
        }
    }

    /**
     * DECISION fields: bool commit, i64 time (epoch ms), i32 participants, per participant UTF tree, i32 partition
     * (the participants other than the coordinator, which the decision itself resolves).
     */
    static byte[] decisionFields(boolean commit, long timeMillis, List<LogId> participants) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeBoolean(commit);
            out.writeLong(timeMillis);
            out.writeInt(participants.size());
            for (LogId l : participants) {
                out.writeUTF(l.tree());
                out.writeInt(l.partition());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private Object applyDecision(List<WalRecord.Mutation> ms, long version) {
        String id = ms.get(0).key();
        Decision existing = decisions.get(id);
        if (existing != null) {
            return existing.version; // the first decision for an id wins
        }
        try {
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(ms.get(0).value()));
            boolean commit = in.readBoolean();
            long time = in.readLong();
            int n = in.readInt();
            List<LogId> parts = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                parts.add(new LogId(in.readUTF(), in.readInt()));
            }
            String idem = null;
            long digest = 0;
            if (ms.size() > 1 && ms.get(1).op() == WalRecord.Mutation.IDEM) {
                idem = ms.get(1).key();
                digest = ByteBuffer.wrap(ms.get(1).value()).getLong();
            }
            Decision d = new Decision(id, commit, version, time, idem, digest, parts);
            addDecision(d);
            if (unresolved.containsKey(id)) { // this log's own part: the decision resolves it
                resolve(id, commit, version);
            }
            atomics.decisionApplied(d);
            return version;
        } catch (IOException e) {
            throw new IllegalArgumentException("decision " + id + " cannot be decoded", e);
        }
    }

    /**
     * The outcome and participants of a DECISION entry, read without applying it (a follower catches the participants
     * up before it applies the decision, so that the write becomes visible whole).
     *
     * @param ms the decision entry's mutations
     * @return the decision's outcome and participants (its outstanding set)
     * @throws IllegalArgumentException if the fields cannot be decoded
     */
    static Decision peekDecision(List<WalRecord.Mutation> ms, long version) {
        String id = ms.get(0).key();
        try {
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(ms.get(0).value()));
            boolean commit = in.readBoolean();
            long time = in.readLong();
            int n = in.readInt();
            List<LogId> parts = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                parts.add(new LogId(in.readUTF(), in.readInt()));
            }
            return new Decision(id, commit, version, time, null, 0, parts);
        } catch (IOException e) {
            throw new IllegalArgumentException("decision " + id + " cannot be decoded", e);
        }
    }

    void addDecision(Decision d) {
        decisions.put(d.id, d);
        if (d.idempotencyKey != null) {
            decisionsByIdempotencyKey.put(d.idempotencyKey, d);
        }
    }

    /**
     * The prepared writes pending now. Decided once, first: a coordinator's applier may publish one meanwhile, and
     * each write must land wholly in the pending section or wholly in the committed view.
     */
    List<Map.Entry<String, Unresolved>> pendingNow() {
        List<Map.Entry<String, Unresolved>> pending = new ArrayList<>();
        for (Map.Entry<String, Unresolved> e : unresolved.entrySet()) {
            if (e.getValue().txn().seq == 0) {
                pending.add(e);
            }
        }
        return pending;
    }

    static Set<Txn> txnsOf(List<Map.Entry<String, Unresolved>> pending) {
        Set<Txn> out = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Map.Entry<String, Unresolved> e : pending) {
            out.add(e.getValue().txn());
        }
        return out;
    }

    // ------------------------------------------------------------------ memtable + runs

    /**
     * Applier: freezes the memtable (see {@link FrozenMemtable}) and starts a new one, which takes over the keys
     * that hold atomic-write chains. Each moved chain gets its older value as an explicit base, so that once the
     * frozen memtable is flushed (and holds the chain's committed value) an older snapshot still finds the value
     * below the chain in the new memtable rather than in the run.
     *
     * @return the frozen memtable, already the top layer below the new memtable
     */
    FrozenMemtable freeze() {
        List<Map.Entry<String, Unresolved>> pending = pendingNow();
        Set<Txn> pendingTxns = txnsOf(pending);
        ConcurrentSkipListMap<String, Object> old = map;
        ConcurrentSkipListMap<String, Object> next = new ConcurrentSkipListMap<>();
        Map<String, Object> views = new java.util.HashMap<>();
        long moved = 0;
        for (String k : chained) {
            Object o = old.get(k);
            if (!(o instanceof TxnNode top)) {
                continue;
            }
            TxnNode last = top;
            while (last.prev instanceof TxnNode p) {
                last = p;
            }
            if (last.prev == null) {
                Object below = layers.isEmpty() ? null : layers.find(k, Long.MAX_VALUE);
                Object base = below instanceof Versioned ? below : new Tombstone(0);
                last.prev = base;
                account(estimate(k, base instanceof Versioned v ? v.value() : null));
            }
            Object view = committedTop(o, pendingTxns);
            views.put(k, view == null ? FrozenMemtable.NOTHING : view);
            next.put(k, o);
            moved += chainEstimate(k, o);
        }
        byte[] engineState;
        try {
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(256);
            DataOutputStream out = new DataOutputStream(bytes);
            PartitionSnapshotCodec.writeAtomicSections(this, out, pending);
            out.flush();
            engineState = bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // range deletes: committed ones freeze with the memtable (its run keeps them); pending ones stay
        long nextMin = Long.MAX_VALUE;
        for (Object o : next.values()) { // moved chains keep their published versions
            for (Object c = o; c instanceof TxnNode n; c = n.prev) {
                if (n.txn.seq > 0) {
                    nextMin = Math.min(nextMin, n.txn.version);
                }
            }
        }
        MemtableRanges.Frozen fr = ranges.freeze(atomics.visibility.horizon(), nextMin);
        moved += fr.keptBytes();
        FrozenMemtable f = new FrozenMemtable(old, views, appliedOffset, maxVersion, engineState,
                memtableBytes - moved, fr.ranges(), fr.minVersion());
        // readers take the range list, then the map, then the layers: publish in the reverse order
        layers.addFrozen(f);
        ranges.publish(fr);
        map = next;
        memtableBytes = moved;
        return f;
    }

    /** Gives back the memory estimate of a flushed memtable (after its runs replaced it in the layers). */
    void flushed(FrozenMemtable f) {
        memoryBudgetUsed.addAndGet(-f.estimateBytes());
    }

    private static long chainEstimate(String key, Object o) {
        long n = 0;
        while (o != null) {
            if (o instanceof TxnNode t) {
                n += estimate(key, t.value);
                o = t.prev;
            } else {
                n += estimate(key, o instanceof Versioned v ? v.value() : null);
                o = null;
            }
        }
        return n;
    }

    /**
     * The newest published value of a chain that is not pending: a {@link Versioned}, a {@link Tombstone}, or null
     * when the chain ends without one.
     */
    static Object committedTop(Object o, Set<Txn> pending) {
        while (o instanceof TxnNode n) {
            if (n.txn.seq > 0 && !pending.contains(n.txn)) {
                return n.view();
            }
            o = n.prev;
        }
        return o;
    }

    /**
     * At open: takes a manifest's runs as the layers below the (empty) memtable and its engine state.
     *
     * @throws CorruptLogException if the engine state cannot be decoded
     */
    void loadManifest(dev.lattice.engine.lsm.Manifest m, List<RunHandle> runs) {
        layers.setRuns(runs);
        try {
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(m.engineState()));
            PartitionSnapshotCodec.readAtomicSections(this, in, m.throughOffset());
            if (in.read() != -1) {
                throw new CorruptLogException(log, m.throughOffset(), "manifest engine state has trailing bytes");
            }
        } catch (EOFException e) {
            throw new CorruptLogException(log, m.throughOffset(), "manifest engine state is truncated", e);
        } catch (IOException e) {
            throw new CorruptLogException(log, m.throughOffset(), "manifest engine state: " + e.getMessage(), e);
        }
        appliedOffset = m.throughOffset();
        maxVersion = m.lastVersion();
        loadedManifest = m;
    }

    /** Serialises the state as of {@link #appliedOffset} (snapshot format 2); call only from the applier. */
    byte[] snapshot() {
        return PartitionSnapshotCodec.snapshot(this);
    }

    /**
     * Loads a snapshot (format 1 or 2) into this (empty) state.
     *
     * @param budgetBytes the memory budget: loading stops once the estimated live data of all trees exceeds it
     * @throws CorruptLogException if the stream fails its checksum or cannot be decoded
     * @throws MemoryBudgetExceededException if the data does not fit the memory budget
     */
    void load(long throughOffset, InputStream raw, long budgetBytes) {
        PartitionSnapshotCodec.load(this, throughOffset, raw, budgetBytes);
    }

    /**
     * Gives this state's memtable bytes back to the memory budget without touching its data: a follower replaced it
     * with a state rebuilt from a checkpoint, and readers that started on it may still be iterating it.
     */
    void releaseBudget() {
        memoryBudgetUsed.addAndGet(-memtableBytes);
        memtableBytes = 0;
    }

    /** Drops everything (used when a load fails half-way). */
    void clear() {
        for (Map.Entry<String, Object> e : map.entrySet()) {
            dropChain(e.getKey(), e.getValue());
        }
        map.clear();
        layers.setRuns(List.of());
        ranges.clear();
        memtableBytes = 0;
        chained.clear();
        unresolved.clear();
        decisions.clear();
        decisionsByIdempotencyKey.clear();
        appliedOffset = -1;
        maxVersion = 0;
    }

    /** @return the unresolved atomic writes (a copy) */
    Map<String, Unresolved> unresolvedSnapshot() {
        return new LinkedHashMap<>(unresolved);
    }
}
