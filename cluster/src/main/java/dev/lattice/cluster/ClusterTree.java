package dev.lattice.cluster;

import dev.lattice.engine.AtomicWrite;
import dev.lattice.engine.HealthIssue;
import dev.lattice.engine.PartialTree;
import dev.lattice.engine.SaturationState;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.Versioned;
import dev.lattice.engine.feed.ChangeCursor;
import dev.lattice.engine.feed.ChangePosition;
import dev.lattice.engine.feed.ChangeSnapshot;
import org.apache.pekko.actor.typed.ActorRef;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * A tree served by the cluster: the {@link Tree} interface, with each operation routed to the owner of its key's
 * partition (by the tree's stored partition hash) and {@code getAll}, {@code putAll}, {@code scan} and
 * {@code count} fanned out to the owners and merged (in key order). Errors are the engine's types, thrown on this
 * node. Timeouts: see {@link LatticeClusterConfig.Builder#requestTimeout} and
 * {@link LatticeClusterConfig.Builder#operationTimeout}.
 *
 * <p>Atomic writes over several partitions ({@link #putAllAtomic}, {@link #deleteRange}, {@link #atomic()}, which may
 * also write other trees of the cluster) are coordinated by the entity of their lowest log
 * ({@link AtomicCoordinator}): all or nothing, and never seen partially by a read (a participant's reads wait until
 * it learns the outcome; {@link #getAllAsync getAll} reads rounds until two agree; a {@link #scan} validates its
 * partitions' snapshots as one cut, {@link ClusterScanCursor}; {@link #count()} validates its partitions' counts
 * the same way). Not served through the cluster (they throw
 * {@link UnsupportedOperationException} naming what to use): change feeds (open a read-only follower,
 * {@link dev.lattice.engine.Lattice#openReadOnly}, on any node instead). While a rolling upgrade mixes in members
 * of the previous wire protocol level, scans and counts are that level's, per partition and not one cut
 * ({@link #scan}, {@link #count()}).
 *
 * <p>The futures of the {@code *Async} calls complete on the node's reply threads ({@link NodeServices#replies()}),
 * not on a Pekko dispatcher or an engine thread (one refused before anything was sent is complete when returned);
 * a continuation may block there (the pool grows), but a long one holds a thread. A blocking point operation
 * ({@link #get}, {@link #put}, ...) waits for its answer, and pauses between its retries, on the calling thread.
 * Thread-safe.
 */
final class ClusterTree implements Tree {

    private final PartialTree meta;
    private final Router router;
    private final ReadBatcher reads;
    private final CutHolds holds;
    private final int pageEntries;

    private final long messageBudget;

    ClusterTree(PartialTree meta, Router router, ReadBatcher reads, CutHolds holds, int pageEntries,
                long messageBudget) {
        this.meta = meta;
        this.router = router;
        this.reads = reads;
        this.holds = holds;
        this.pageEntries = pageEntries;
        this.messageBudget = messageBudget;
    }

    /** @throws IllegalArgumentException if the value cannot travel in one cluster message */
    byte[] checkValue(byte[] value) {
        Objects.requireNonNull(value, "value");
        if (value.length > maxValueBytes()) {
            throw new IllegalArgumentException("value is " + value.length + " bytes, more than the limit of "
                    + maxValueBytes() + " bytes of a tree served by the cluster (the smaller of the provider's limit "
                    + meta.maxValueBytes() + " and what one message may carry below"
                    + " pekko.remote.artery.advanced.maximum-frame-size)");
        }
        return value;
    }

    /**
     * Checks a one-partition atomic write sent as one {@link Op#PUT_ALL_ATOMIC} message (the other atomic writes are
     * checked by {@link ClusterAtomicWrite}).
     *
     * @throws IllegalArgumentException if its keys and values cannot travel in one message
     */
    private void checkAtomicSize(Map<String, byte[]> entries) {
        long bytes = 0;
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            bytes += e.getKey().length() * 3L + checkValue(Objects.requireNonNull(e.getValue(), "value")).length + 16;
        }
        if (bytes > messageBudget) {
            throw new IllegalArgumentException("atomic write of " + bytes + " bytes is more"
                    + " than one cluster message carries (" + messageBudget + " bytes, below"
                    + " pekko.remote.artery.advanced.maximum-frame-size)");
        }
    }

    /**
     * Checks a key before it is sent (the owner checks it again).
     *
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException if it is empty or longer than the tree's key limit
     */
    void checkKey(String key) {
        dev.lattice.engine.KeyLimit.check(key, meta.maxKeyBytes());
    }

    /** @return the partition of {@code key} by the tree's stored hash */
    int partitionOf(String key) {
        return meta.partitionOf(key);
    }

    Router router() {
        return router;
    }

    long messageBudget() {
        return messageBudget;
    }

    private LogAddress logOf(String key) {
        Objects.requireNonNull(key, "key");
        return new LogAddress(meta.name(), meta.partitionOf(key));
    }

    @Override
    public String name() {
        return meta.name();
    }

    @Override
    public int partitions() {
        return meta.partitions();
    }

    @Override
    public int maxKeyBytes() {
        return meta.maxKeyBytes();
    }

    /** @return the smaller of the provider's value limit and what one cluster message carries, in bytes */
    @Override
    public int maxValueBytes() {
        return (int) Math.min(meta.maxValueBytes(), messageBudget - 3L * meta.maxKeyBytes() - 1024);
    }

    // ------------------------------------------------------------------ point operations

    @Override
    public Optional<byte[]> get(String key) {
        return getVersioned(key).map(Versioned::value);
    }

    @Override
    public Optional<Versioned> getVersioned(String key) {
        checkKey(key); // before it may join a batch, which one bad key would fail
        return reads.get(logOf(key), key);
    }

    @Override
    public CompletableFuture<Optional<Versioned>> getVersionedAsync(String key) {
        checkKey(key);
        return reads.getAsync(logOf(key), key);
    }

    /** @return the request of a point operation, for the reply-to reference an attempt makes */
    private static Function<ActorRef<Response>, Request> point(Op op, String key, byte[] value, long number) {
        return r -> Request.point(op, key, value, number, r);
    }

    @Override
    public CompletableFuture<Optional<byte[]>> getAsync(String key) {
        return getVersionedAsync(key).thenApply(v -> v.map(Versioned::value));
    }

    @Override
    public boolean exists(String key) {
        return getVersioned(key).isPresent();
    }

    @Override
    public long put(String key, byte[] value) {
        checkValue(value);
        return router.call(logOf(key), Op.PUT, point(Op.PUT, key, value, 0)).number();
    }

    @Override
    public CompletableFuture<Long> putAsync(String key, byte[] value) {
        checkValue(value);
        return router.send(logOf(key), Op.PUT, point(Op.PUT, key, value, 0)).thenApply(Response::number);
    }

    @Override
    public long put(String key, byte[] value, Duration ttl) {
        checkValue(value);
        return router.call(logOf(key), Op.PUT_TTL, point(Op.PUT_TTL, key, value, ttlMillis(ttl))).number();
    }

    @Override
    public CompletableFuture<Long> putAsync(String key, byte[] value, Duration ttl) {
        checkValue(value);
        return router.send(logOf(key), Op.PUT_TTL, point(Op.PUT_TTL, key, value, ttlMillis(ttl)))
                .thenApply(Response::number);
    }

    static long ttlMillis(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, got " + ttl);
        }
        long millis = ttl.toMillis();
        return ttl.minusMillis(millis).isZero() ? millis : millis + 1;
    }

    @Override
    public boolean putIfAbsent(String key, byte[] value) {
        checkValue(value);
        return router.call(logOf(key), Op.PUT_IF_ABSENT, point(Op.PUT_IF_ABSENT, key, value, 0)).flag();
    }

    @Override
    public CompletableFuture<Boolean> putIfAbsentAsync(String key, byte[] value) {
        checkValue(value);
        return router.send(logOf(key), Op.PUT_IF_ABSENT, point(Op.PUT_IF_ABSENT, key, value, 0))
                .thenApply(Response::flag);
    }

    @Override
    public boolean putIfVersion(String key, byte[] value, long expectedVersion) {
        checkValue(value);
        return router.call(logOf(key), Op.PUT_IF_VERSION, point(Op.PUT_IF_VERSION, key, value, expectedVersion))
                .flag();
    }

    @Override
    public CompletableFuture<Boolean> putIfVersionAsync(String key, byte[] value, long expectedVersion) {
        checkValue(value);
        return router.send(logOf(key), Op.PUT_IF_VERSION, point(Op.PUT_IF_VERSION, key, value, expectedVersion))
                .thenApply(Response::flag);
    }

    @Override
    public boolean delete(String key) {
        return router.call(logOf(key), Op.DELETE, point(Op.DELETE, key, null, 0)).flag();
    }

    @Override
    public CompletableFuture<Boolean> deleteAsync(String key) {
        return router.send(logOf(key), Op.DELETE, point(Op.DELETE, key, null, 0)).thenApply(Response::flag);
    }

    // ------------------------------------------------------------------ fan-out

    /** @return the entries grouped by partition, in ascending partition order */
    private TreeMap<Integer, List<String>> byPartition(Collection<String> keys) {
        TreeMap<Integer, List<String>> by = new TreeMap<>();
        for (String k : keys) {
            Objects.requireNonNull(k, "key");
            by.computeIfAbsent(meta.partitionOf(k), p -> new ArrayList<>()).add(k);
        }
        return by;
    }

    @Override
    public Map<String, byte[]> getAll(Collection<String> keys) {
        return Router.await(getAllAsync(keys));
    }

    /**
     * Reads the keys from their owners. The answer is one view: when it took more than one message (keys of several
     * partitions, or one partition's answer cut at the message budget), the owners are asked again until two rounds
     * in a row agree on every key's version (absent counts as version 0). Every round's reads are linearizable and
     * the second round starts after the first ended, so the keys held those versions together at a moment between
     * the two: a multi-partition atomic write is seen whole or not at all. Keys that change in every round make it
     * retry until the operation timeout, then fail with {@link dev.lattice.engine.LatticeSaturatedException}.
     */
    @Override
    public CompletableFuture<Map<String, byte[]>> getAllAsync(Collection<String> keys) {
        Objects.requireNonNull(keys, "keys");
        TreeMap<Integer, List<String>> by = byPartition(keys);
        long deadline = System.nanoTime() + router.operationTimeout().toNanos();
        return readRound(by).thenCompose(first -> first.messages <= 1
                ? CompletableFuture.completedFuture(first.values())
                : untilStable(by, first, deadline, 1));
    }

    /** One round of a getAll: every key found, with its version, and how many answers it took. */
    private static final class Round {
        final Map<String, Versioned> found = new java.util.concurrent.ConcurrentSkipListMap<>();
        final java.util.concurrent.atomic.AtomicInteger answers = new java.util.concurrent.atomic.AtomicInteger();
        int messages;

        Map<String, byte[]> values() {
            Map<String, byte[]> out = new TreeMap<>();
            for (Map.Entry<String, Versioned> e : found.entrySet()) {
                out.put(e.getKey(), e.getValue().value());
            }
            return out;
        }

        boolean sameVersions(Round other) {
            if (!found.keySet().equals(other.found.keySet())) {
                return false;
            }
            for (Map.Entry<String, Versioned> e : found.entrySet()) {
                if (e.getValue().version() != other.found.get(e.getKey()).version()) {
                    return false;
                }
            }
            return true;
        }
    }

    private CompletableFuture<Map<String, byte[]>> untilStable(TreeMap<Integer, List<String>> by, Round previous,
                                                              long deadline, int rounds) {
        return readRound(by).thenCompose(next -> {
            if (next.sameVersions(previous)) {
                return CompletableFuture.completedFuture(next.values());
            }
            if (System.nanoTime() > deadline) {
                return CompletableFuture.failedFuture(new dev.lattice.engine.LatticeSaturatedException("getAll over "
                        + by.size() + " partitions of tree '" + name() + "' found its keys changed in each of "
                        + (rounds + 1) + " rounds within the operation timeout of "
                        + router.operationTimeout().toMillis() + " ms; no consistent view was read", null));
            }
            return untilStable(by, next, deadline, rounds + 1);
        });
    }

    private CompletableFuture<Round> readRound(TreeMap<Integer, List<String>> by) {
        Round round = new Round();
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        for (Map.Entry<Integer, List<String>> e : by.entrySet()) {
            List<String> ks = new ArrayList<>(new java.util.TreeSet<>(e.getValue()));
            parts.add(getAllFrom(new LogAddress(name(), e.getKey()), ks, round));
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(v -> {
            round.messages = round.answers.get();
            return round;
        });
    }

    /** One partition's keys (sorted): an answer cut at the message budget is continued after its last key. */
    private CompletableFuture<Void> getAllFrom(LogAddress log, List<String> sorted, Round round) {
        List<String> ks = List.copyOf(sorted);
        return router.send(log, Op.GET_ALL, r -> new Request(Op.GET_ALL, null, null, null, 0, false, ks, null, r))
                .thenCompose(r -> {
                    round.answers.incrementAndGet();
                    for (int i = 0; i < r.keys().size(); i++) {
                        round.found.put(r.keys().get(i), new Versioned(r.values().get(i), r.versions()[i], 0));
                    }
                    if (!r.flag() || r.keys().isEmpty()) {
                        return CompletableFuture.completedFuture(null);
                    }
                    String last = r.keys().get(r.keys().size() - 1);
                    List<String> rest = new ArrayList<>();
                    for (String k : ks) {
                        if (k.compareTo(last) > 0) {
                            rest.add(k);
                        }
                    }
                    return rest.isEmpty() ? CompletableFuture.completedFuture(null) : getAllFrom(log, rest, round);
                });
    }

    @Override
    public void putAll(Map<String, byte[]> entries) {
        Router.await(putAllAsync(entries));
    }

    @Override
    public CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries) {
        Objects.requireNonNull(entries, "entries");
        List<CompletableFuture<Response>> parts = new ArrayList<>();
        for (Map.Entry<Integer, List<String>> e : byPartition(entries.keySet()).entrySet()) {
            List<String> ks = new ArrayList<>();
            List<byte[]> vs = new ArrayList<>();
            long bytes = 0;
            for (String k : e.getValue()) {
                byte[] v = checkValue(entries.get(k));
                long add = k.length() * 3L + v.length + 16;
                if (!ks.isEmpty() && bytes + add > messageBudget) { // not atomic anyway: one message per chunk
                    parts.add(putAllChunk(e.getKey(), ks, vs));
                    ks = new ArrayList<>();
                    vs = new ArrayList<>();
                    bytes = 0;
                }
                ks.add(k);
                vs.add(v);
                bytes += add;
            }
            parts.add(putAllChunk(e.getKey(), ks, vs));
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]));
    }

    private CompletableFuture<Response> putAllChunk(int partition, List<String> keys, List<byte[]> values) {
        List<String> ks = List.copyOf(keys);
        List<byte[]> vs = List.copyOf(values);
        return router.send(new LogAddress(name(), partition), Op.PUT_ALL,
                r -> new Request(Op.PUT_ALL, null, null, null, 0, false, ks, vs, r));
    }

    @Override
    public void putAll(Map<String, byte[]> entries, Duration ttl) {
        Router.await(putAllAsync(entries, ttl));
    }

    /**
     * Puts the entries with one expiry (now + {@code ttl}) for all, as the embedded engine does: every value is
     * checked before anything is sent, then each partition's keys (split at the message budget) are written as one
     * atomic write of that partition with the expiry in its entries. Not atomic across partitions or chunks, like
     * {@link #putAllAsync(Map)}.
     */
    @Override
    public CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries, Duration ttl) {
        Objects.requireNonNull(entries, "entries");
        long expiresAt = System.currentTimeMillis() + ttlMillis(ttl);
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            Objects.requireNonNull(e.getKey(), "key");
            checkValue(e.getValue());
        }
        List<CompletableFuture<?>> parts = new ArrayList<>();
        for (Map.Entry<Integer, List<String>> e : byPartition(entries.keySet()).entrySet()) {
            ClusterAtomicWrite w = new ClusterAtomicWrite(router, this);
            long bytes = 0;
            int n = 0;
            for (String k : e.getValue()) {
                byte[] v = entries.get(k);
                long add = k.length() * 6L + v.length + name().length() * 3L + 48;
                if (n > 0 && bytes + add > messageBudget) {
                    parts.add(w.commitAsync());
                    w = new ClusterAtomicWrite(router, this);
                    bytes = 0;
                    n = 0;
                }
                w.putUntil(this, k, v, expiresAt);
                bytes += add;
                n++;
            }
            parts.add(w.commitAsync());
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]));
    }

    @Override
    public long putAllAtomic(Map<String, byte[]> entries) {
        Objects.requireNonNull(entries, "entries");
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("an atomic write needs at least one key");
        }
        TreeMap<Integer, List<String>> by = byPartition(entries.keySet());
        if (by.size() > 1) {
            AtomicWrite w = atomic(); // checks the values and the message size
            for (Map.Entry<String, byte[]> e : entries.entrySet()) {
                w.put(e.getKey(), e.getValue());
            }
            return w.commit().version();
        }
        checkAtomicSize(entries);
        List<String> ks = List.copyOf(by.firstEntry().getValue());
        List<byte[]> vs = new ArrayList<>(ks.size());
        for (String k : ks) {
            vs.add(Objects.requireNonNull(entries.get(k), "value"));
        }
        return router.call(new LogAddress(name(), by.firstKey()), Op.PUT_ALL_ATOMIC,
                r -> new Request(Op.PUT_ALL_ATOMIC, null, null, null, 0, false, ks, vs, r)).number();
    }

    @Override
    public long putAllAtomic(Map<String, byte[]> entries, Duration ttl) {
        Objects.requireNonNull(entries, "entries");
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("an atomic write needs at least one key");
        }
        long expiresAt = System.currentTimeMillis() + ttlMillis(ttl);
        ClusterAtomicWrite w = new ClusterAtomicWrite(router, this); // checks the values and the message size
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            w.putUntil(this, e.getKey(), e.getValue(), expiresAt);
        }
        return w.commit().version();
    }

    /**
     * An atomic write bound to this tree, which may also write other trees of the cluster ({@link ClusterAtomicWrite}).
     *
     * @return a new builder
     */
    @Override
    public AtomicWrite atomic() {
        return new ClusterAtomicWrite(router, this);
    }

    /** Deletes the range atomically in every partition (one atomic write with a range tombstone per partition). */
    @Override
    public long deleteRange(String fromInclusive, String toExclusive) {
        return Router.await(deleteRangeAsync(fromInclusive, toExclusive));
    }

    @Override
    public CompletableFuture<Long> deleteRangeAsync(String fromInclusive, String toExclusive) {
        Objects.requireNonNull(fromInclusive, "fromInclusive");
        Objects.requireNonNull(toExclusive, "toExclusive");
        if (fromInclusive.compareTo(toExclusive) >= 0) {
            throw new IllegalArgumentException("range ['" + fromInclusive + "', '" + toExclusive + "') is empty");
        }
        return atomic().deleteRange(fromInclusive, toExclusive).commitAsync()
                .thenApply(dev.lattice.engine.AtomicResult::version);
    }

    /**
     * Scans every partition as one snapshot: a held scan on each owner, validated as a consistent cut before the
     * first entry is returned ({@link ClusterScanCursor} has the argument). Blocks while the scans open.
     *
     * <p>During a rolling upgrade, while some hosting member does not understand the held scans
     * ({@link PeerProtocols}; an open that such a member refused counts too), the scan is the previous level's
     * instead ({@link PagedScanCursor}): per page and partition, <b>not one cut</b> (a multi-partition atomic write
     * committed meanwhile may be seen in part). It is chosen for the whole scan, when it opens.
     *
     * @throws dev.lattice.engine.LatticeSaturatedException if atomic writes prepared in the scanned partitions failed
     *     every validation within the operation timeout
     * @throws dev.lattice.engine.ScanSessionLostException from the cursor, when an owner lost the scan's snapshot
     *     (idle past the operation timeout, or its partition handed off)
     */
    @Override
    public ScanCursor scan(String fromInclusive, String toExclusive, boolean reverse) {
        if (router.protocols().understood(Op.SCAN_OPEN)) {
            try {
                return new ClusterScanCursor(router, holds, name(), partitions(), fromInclusive, toExclusive, reverse,
                        pageEntries);
            } catch (UnsupportedOperationException e) {
                if (router.protocols().understood(Op.SCAN_OPEN)) {
                    throw e; // not a member of an older level (an owner refused it for a reason of its own)
                }
                // a member of an older level joined meanwhile: the scan of that level, as below
            }
        }
        return new PagedScanCursor(router, name(), partitions(), fromInclusive, toExclusive, reverse, pageEntries);
    }

    /**
     * Counts the tree's live keys as one cut across partitions: every owner counts its partition
     * ({@link Op#COUNT_CUT}, which waits for atomic writes pending there, as a read does) and answers the partition's
     * atomic-prepare counter read just before; rounds repeat until two in a row see every counter unchanged, and the
     * earlier round's counts are summed. The argument is {@link ClusterScanCursor}'s: a multi-partition atomic write
     * counted in partition a was prepared in every other partition b before a's count; if before b's counter
     * reading, b's count waited for it; if after, b's counter changed by the next round. So such a write is counted
     * whole or not at all. When the first comparison fails, the count holds new prepares in the tree's partitions
     * ({@link CutHolds}, bounded; released when it returns) so that the next rounds agree beside continuous
     * multi-partition writes; the holds never replace the comparison. If no two rounds agree within the operation
     * timeout it fails with {@link dev.lattice.engine.LatticeSaturatedException}. A one-partition tree takes one
     * round.
     *
     * <p>During a rolling upgrade, while some hosting member does not understand {@link Op#COUNT_CUT}
     * ({@link PeerProtocols}; a round that such a member refused counts too), the count is the previous level's
     * instead: the sum of each partition's {@link Op#COUNT}, each exact for its partition at its moment, <b>not one
     * cut</b> (a multi-partition atomic write committed meanwhile may be counted in part).
     */
    @Override
    public long count() {
        if (router.protocols().understood(Op.COUNT_CUT)) {
            try {
                return countCut();
            } catch (UnsupportedOperationException e) {
                if (router.protocols().understood(Op.COUNT_CUT)) {
                    throw e;
                }
            }
        }
        return countPerPartition();
    }

    /** The previous level's count: every partition's {@link Op#COUNT} at once, summed. */
    private long countPerPartition() {
        List<CompletableFuture<Response>> parts = new ArrayList<>();
        for (int p = 0; p < partitions(); p++) {
            parts.add(router.send(new LogAddress(name(), p), Op.COUNT,
                    r -> new Request(Op.COUNT, null, null, null, 0, false, null, null, r)));
        }
        long n = 0;
        for (CompletableFuture<Response> part : parts) {
            n += Router.await(part).number();
        }
        return n;
    }

    private long countCut() {
        long deadline = System.nanoTime() + router.operationTimeout().toNanos();
        long[][] previous = countRound();
        if (partitions() == 1) {
            return previous[0][0];
        }
        CutHolds.Cut hold = holds.begin(name(), partitions());
        try {
            for (int round = 2; ; round++) {
                boolean holding = round > 2 && hold.ensure();
                long[][] next = countRound();
                boolean same = true;
                for (int p = 0; p < partitions(); p++) {
                    same &= next[p][1] == previous[p][1];
                }
                if (same) {
                    long n = 0;
                    for (long[] part : previous) {
                        n += part[0];
                    }
                    return n;
                }
                if (System.nanoTime() > deadline) {
                    throw new dev.lattice.engine.LatticeSaturatedException("count over " + partitions()
                            + " partitions of tree '" + name() + "' found an atomic write prepared meanwhile in each"
                            + " of " + round + " rounds within the operation timeout of "
                            + router.operationTimeout().toMillis() + " ms" + (hold.sent() ? " (with prepare holds)"
                            : " (without prepare holds)") + "; no consistent count was taken", null);
                }
                if (holding) {
                    ClusterScanCursor.pause(round, true);
                }
                previous = next;
            }
        } finally {
            hold.release();
        }
    }

    /** One round of a count: per partition, its count and its atomic-prepare counter read before it. */
    private long[][] countRound() {
        List<CompletableFuture<Response>> parts = new ArrayList<>();
        for (int p = 0; p < partitions(); p++) {
            parts.add(router.send(new LogAddress(name(), p), Op.COUNT_CUT,
                    r -> new Request(Op.COUNT_CUT, null, null, null, 0, false, null, null, r)));
        }
        long[][] out = new long[parts.size()][];
        for (int p = 0; p < out.length; p++) {
            Response r = Router.await(parts.get(p));
            out[p] = new long[] {r.number(), r.session()};
        }
        return out;
    }

    @Override
    public ChangeCursor changes(ChangePosition from) {
        throw new UnsupportedOperationException("change feeds are read from a follower: Lattice.openReadOnly on the"
                + " cluster's provider, on any node");
    }

    @Override
    public ChangeCursor changes(String consumer, ChangePosition initial) {
        throw new UnsupportedOperationException("change feeds are read from a follower: Lattice.openReadOnly on the"
                + " cluster's provider, on any node");
    }

    @Override
    public ChangeSnapshot snapshotWithPosition(String fromInclusive, String toExclusive) {
        throw new UnsupportedOperationException("snapshots with a feed position are read from a follower");
    }

    /** @return {@link SaturationState#HEALTHY}: the owners' states are not gathered here (see each node's trees) */
    @Override
    public SaturationState saturation() {
        return SaturationState.HEALTHY;
    }

    /** @return empty: the owners' health is reported by each node's own meters */
    @Override
    public List<HealthIssue> healthIssues() {
        return List.of();
    }
}
