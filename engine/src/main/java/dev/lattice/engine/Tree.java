package dev.lattice.engine;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A named, ordered map {@code String key -> byte[] value}, split into partitions by a stable hash of the key and
 * made durable by one write-ahead log per partition. Obtained from {@link Lattice#tree(String)}.
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li>Every write returns (or completes its future) only after its log entry is committed by the provider and
 *       applied to the in-memory state. Reads see only committed data.</li>
 *   <li>Point operations are linearizable: a read that starts after a write returned sees it (or a later write).</li>
 *   <li>Conditional writes ({@link #putIfAbsent}, {@link #putIfVersion}, atomic writes with preconditions) are
 *       decided in log order before they are logged: the log holds only their outcome (a write whose condition held,
 *       without its condition; nothing for one whose condition failed, which returns without a provider call), so
 *       replay and every change feed agree with the answer.</li>
 *   <li>{@link #putAll} is batched, not atomic: each key is committed on its own (all keys of one partition in
 *       one batch when they fit); on failure some keys may be written and others not. For all or nothing use {@link #putAllAtomic} or
 *       {@link #atomic()}.</li>
 *   <li>{@link #getAll} and {@link #scan} read a snapshot with respect to atomic writes: each atomic write is seen
 *       wholly or not at all.</li>
 * </ul>
 *
 * <h2>Limits</h2>
 * Keys are non-null strings of at most {@link #maxKeyBytes()} UTF-8 bytes (at least one character); values are
 * non-null arrays of at most {@link #maxValueBytes()} bytes (empty allowed). Both limits derive from the provider's
 * maximum entry size. Violations throw {@link NullPointerException} or {@link IllegalArgumentException} naming the
 * limit, before anything is written. Reads reject empty keys and keys of more than {@link #maxKeyBytes()}
 * characters the same way (a key of fewer characters but more UTF-8 bytes simply reads as absent).
 *
 * <h2>Failures of writes</h2>
 * Sync methods throw (async ones complete exceptionally with) {@link LatticeSaturatedException} when the log's
 * admission queue stays full (see below), {@link LatticeShuttingDownException} when the lattice is closing,
 * {@link MemoryBudgetExceededException} when the memory budget is spent, {@link WriteFailedException} when the
 * provider failed the batch and nothing was written, {@link WriteOutcomeUnknownException} when the engine could not
 * tell. Sync methods that are interrupted while they wait throw {@link LatticeException} with the interrupt flag set
 * (the write itself goes on and may still land). Once another process claimed one of the tree's logs, every read and
 * write throws {@link OwnershipLostException} (see {@link LatticeConfig.Builder#ownershipCheckInterval}).
 *
 * <h2>Which calls block, for how long, and on which thread</h2>
 * <ul>
 *   <li>Reads ({@code get}, {@code getAll}, {@code scan}, {@code count} and their async forms) never block on the
 *       provider; their futures are complete when returned.</li>
 *   <li>Sync writes ({@link #put}, {@link #putIfAbsent}, {@link #putIfVersion}, {@link #delete}, {@link #putAll},
 *       {@link #putAllAtomic}) block until committed and applied: at most
 *       {@link LatticeConfig.Builder#admissionTimeout} waiting for room in the log's admission queue (then
 *       {@link LatticeSaturatedException}), then the provider's calls, each bounded by
 *       {@link LatticeConfig.Builder#providerCallTimeout} (past it the write is answered as uncertain). For a
 *       provider with local calls ({@link dev.lattice.spi.ProviderFeature#LOCAL_CALLS}: memory, Chronicle) the
 *       calls run on the writers' own threads: a write to an idle log is staged, committed and applied on the
 *       calling thread; writers that arrive while the log is busy wait (briefly spinning, then parking) and the first
 *       of them leads the next batch, which carries all of them. For remote providers the engine's I/O threads make
 *       the calls and the caller waits.</li>
 *   <li>Async writes ({@code *Async}) never block the calling thread. When the log's admission queue is full the
 *       write waits for room inside its future (at most as many writes as the queue holds wait so; they are admitted
 *       in order as batches are cut); when that is full too the future fails at once with
 *       {@link LatticeSaturatedException}. Their futures complete on an engine thread (an I/O thread or a writer
 *       that led the batch) after the log moved on to its next batch, so continuations never hold up a commit; do not
 *       block for long in a continuation all the same, it holds that thread.</li>
 * </ul>
 *
 * <p>Thread-safe: any number of threads may read and write concurrently.
 */
public interface Tree {

    /**
     * Starts an atomic write bound to this tree (its {@code put(key, value)}, {@code delete(key)} and precondition
     * methods address this tree; other trees of the lattice may be added with the tree-taking methods).
     *
     * @return a new, empty atomic write (not thread-safe; commit once)
     * @throws LatticeShuttingDownException if the lattice is closed
     */
    AtomicWrite atomic();

    /**
     * Puts every entry in one atomic write: all or nothing, durable before it returns, never partially visible to a
     * concurrent reader (point reads, {@link #getAll}, scans), one version for every key. Limits as
     * {@link AtomicWrite}: at most {@code LatticeConfig.maxAtomicKeys} entries, each log's part within one entry of
     * its provider.
     *
     * @param entries key to value, at least one entry (values are copied)
     * @return the version every key now carries
     * @throws NullPointerException if {@code entries}, a key or a value is null
     * @throws IllegalArgumentException if empty, or a key, value or the write breaks a limit (nothing written)
     * @throws LatticeException as {@link AtomicWrite#commit()}
     */
    default long putAllAtomic(Map<String, byte[]> entries) {
        java.util.Objects.requireNonNull(entries, "entries");
        AtomicWrite w = atomic();
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            w.put(e.getKey(), e.getValue());
        }
        return w.commit().version();
    }

    /**
     * {@link #putAllAtomic(Map)} with a time-to-live for every entry (see {@link #put(String, byte[], Duration)}).
     *
     * @param entries key to value, at least one entry (values are copied)
     * @param ttl how long the values live, positive
     * @return the version every key now carries
     * @throws NullPointerException if {@code entries}, a key or a value is null
     * @throws IllegalArgumentException if {@code ttl} is null, zero or negative, or as {@link #putAllAtomic(Map)}
     * @throws LatticeException as {@link AtomicWrite#commit()}
     */
    default long putAllAtomic(Map<String, byte[]> entries, Duration ttl) {
        java.util.Objects.requireNonNull(entries, "entries");
        AtomicWrite w = atomic();
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            w.put(e.getKey(), e.getValue(), ttl);
        }
        return w.commit().version();
    }

    /**
     * Deletes every key in {@code [fromInclusive, toExclusive)}, all or nothing across the tree's partitions: one
     * range tombstone per partition (a multi-log atomic write when the tree has several), so its cost does not
     * depend on how many keys it covers. Reads (get, exists, getAll, scan, count) stop seeing the covered keys at
     * once; a snapshot older than the delete (an open scan) still sees them. Keys written after it returns are not
     * affected; puts in the same atomic write ({@link AtomicWrite#deleteRange}) survive it. Storage is reclaimed by
     * compaction.
     *
     * @param fromInclusive first key deleted
     * @param toExclusive first key after the range, greater than {@code fromInclusive}
     * @return the version of the write
     * @throws IllegalArgumentException if a bound is null or empty or breaks the key limits, or
     *     {@code fromInclusive >= toExclusive} (nothing written)
     * @throws LatticeException as {@link AtomicWrite#commit()}
     */
    long deleteRange(String fromInclusive, String toExclusive);

    /**
     * {@link #deleteRange} on the lattice's I/O threads.
     *
     * @param fromInclusive first key deleted
     * @param toExclusive first key after the range
     * @return completes with the write's version, or exceptionally as {@link #deleteRange} throws
     * @throws IllegalArgumentException if the bounds are invalid (thrown at once, nothing written)
     */
    CompletableFuture<Long> deleteRangeAsync(String fromInclusive, String toExclusive);

    /** {@return the tree's name} */
    String name();

    /** {@return the number of partitions (= logs), fixed when the tree was created} */
    int partitions();

    /** {@return the longest key, in UTF-8 bytes} */
    int maxKeyBytes();

    /** {@return the largest value, in bytes} */
    int maxValueBytes();

    /**
     * Reads a key's value.
     *
     * @param key the key
     * @return the value, or empty when absent
     * @throws NullPointerException if {@code key} is null
     */
    Optional<byte[]> get(String key);

    /**
     * Reads a key's value with its version.
     *
     * @param key the key
     * @return the value with its version, or empty when absent
     * @throws NullPointerException if {@code key} is null
     */
    Optional<Versioned> getVersioned(String key);

    /**
     * Tells whether a key holds a value.
     *
     * @param key the key
     * @return true when the key has a value
     * @throws NullPointerException if {@code key} is null
     */
    boolean exists(String key);

    /**
     * Reads several keys as of one snapshot with respect to atomic writes: an atomic write published during the call
     * is seen for all of these keys or for none. Single-key writes landing during the call may or may not be seen.
     *
     * @param keys the keys
     * @return the present keys with their values, in key order
     * @throws NullPointerException if {@code keys} or a key is null
     * @throws IllegalArgumentException if a key is empty or longer than {@link #maxKeyBytes()} characters
     */
    Map<String, byte[]> getAll(Collection<String> keys);

    /**
     * Writes a value.
     *
     * @param key the key
     * @param value the value
     * @return the version of the write
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key or value exceeds its limit
     */
    long put(String key, byte[] value);

    /**
     * Writes a value that expires: from {@code ttl} after the write (on this lattice's clock,
     * {@link LatticeConfig.Builder#clock}) it is absent for every read (get, exists, getAll, scan, count) and for
     * conditional writes, in this process and after a reopen; compaction reclaims it. The expiry is fixed when the
     * write is made (this process's clock); readers compare it with their own clock, so clock skew between processes
     * moves expiry by the skew. {@link #getVersioned} reports it ({@link Versioned#expiresAt()}). The value limit is
     * 8 bytes smaller than {@link #maxValueBytes()} (the entry carries the expiry).
     *
     * @param key the key
     * @param value the value
     * @param ttl how long the value lives, positive (rounded up to whole milliseconds)
     * @return the version of the write
     * @throws NullPointerException if the key or value is null
     * @throws IllegalArgumentException if {@code ttl} is null, zero or negative, or the key or value exceeds its limit
     */
    long put(String key, byte[] value, Duration ttl);

    /**
     * Writes a value only if the key is absent when the write is decided (in log order).
     *
     * @param key the key
     * @param value the value
     * @return true when it was written
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key or value exceeds its limit
     */
    boolean putIfAbsent(String key, byte[] value);

    /**
     * Writes a value only if the key's current version equals {@code expectedVersion} when the write is decided
     * (in log order); {@code 0} expects the key to be absent.
     *
     * @param key the key
     * @param value the value
     * @param expectedVersion the version read before, or 0 for "absent"
     * @return true when it was written
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key or value exceeds its limit or the version is negative
     */
    boolean putIfVersion(String key, byte[] value, long expectedVersion);

    /**
     * Removes a key (a no-op when absent; still logged).
     *
     * @param key the key
     * @return true when the key was present when the delete was decided
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if the key exceeds its limit
     */
    boolean delete(String key);

    /**
     * Writes many keys, batched per partition, not atomically. The keys of one partition are logged together, in
     * entries of at most 256 KiB (and within the provider's entry limit): keys of one entry take one version and are
     * written whole or not at all, while a failure may leave other entries of the call written (docs/wal-format.md).
     *
     * @param entries keys and values
     * @throws NullPointerException if the map, a key or a value is null
     * @throws IllegalArgumentException if a key or value exceeds its limit (checked for all before any is written)
     */
    void putAll(Map<String, byte[]> entries);

    /**
     * {@link #putAll(Map)} with a time-to-live for every entry (see {@link #put(String, byte[], Duration)}).
     *
     * @param entries keys and values
     * @param ttl how long the values live, positive
     * @throws NullPointerException if the map, a key or a value is null
     * @throws IllegalArgumentException if {@code ttl} is null, zero or negative, or a key or value exceeds its limit
     */
    void putAll(Map<String, byte[]> entries, Duration ttl);

    /**
     * Ordered scan of {@code [fromInclusive, toExclusive)} across partitions. Reads as of the snapshot taken when
     * the scan starts with respect to atomic writes (each is seen wholly or not at all); a single-key write landing
     * during the scan is returned with one of its committed values (or skipped if deleted). Close the cursor (or
     * read it to the end): while it is open, older values rewritten by atomic writes are kept for it.
     *
     * @param fromInclusive lowest key (inclusive), or null for the first key
     * @param toExclusive upper bound (exclusive), or null for no bound
     * @param reverse true for descending order
     * @return the cursor
     */
    ScanCursor scan(String fromInclusive, String toExclusive, boolean reverse);

    /**
     * Opens an unregistered change feed: the committed mutations of this tree after {@code from}, in log order per
     * partition (see {@link dev.lattice.engine.feed.ChangeCursor}). It only reads the logs (no claim, nothing written)
     * and holds back no trim: if the log is trimmed past its position, {@code poll} throws
     * {@link dev.lattice.engine.feed.ChangeFeedTrimmedException}.
     *
     * @param from where to start: {@link dev.lattice.engine.feed.ChangePosition#beginning()},
     *     {@link dev.lattice.engine.feed.ChangePosition#now()} or a position a cursor returned
     * @return the cursor (close it)
     * @throws NullPointerException if {@code from} is null
     * @throws IllegalArgumentException if {@code from} has another partition count than the tree
     * @throws dev.lattice.spi.WalStorageException if the provider fails while resolving {@code now()}
     */
    dev.lattice.engine.feed.ChangeCursor changes(dev.lattice.engine.feed.ChangePosition from);

    /**
     * Opens the change feed of a named, registered consumer. A consumer registered before resumes from its stored
     * position ({@code initial} is ignored); a new one is registered at {@code initial} (stored durably before this
     * returns). {@link dev.lattice.engine.feed.ChangeCursor#commit()} stores the cursor's position. While registered,
     * the consumer holds back the trim of every log of the tree to its position, by at most
     * {@link LatticeConfig.Builder#changeFeedRetentionEntries} entries; past that bound it gets
     * {@link dev.lattice.engine.feed.ChangeFeedTrimmedException}. Remove it with
     * {@link Lattice#removeChangeConsumer}.
     *
     * @param consumer the consumer's name, {@code [A-Za-z0-9._-]{1,128}}
     * @param initial where a new consumer starts (a marker or a position)
     * @return the cursor (close it)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name breaks the rule or {@code initial} has another partition count
     * @throws dev.lattice.spi.WalStorageException if the stored positions cannot be read or written
     */
    dev.lattice.engine.feed.ChangeCursor changes(String consumer, dev.lattice.engine.feed.ChangePosition initial);

    /**
     * A scan of {@code [fromInclusive, toExclusive)} (null bounds = open ends, ascending) with the change-feed
     * position it is consistent with: the scan reflects every change at or below the position (and maybe some
     * later ones); see {@link dev.lattice.engine.feed.ChangeSnapshot}. For a consumer that must start over after
     * {@link dev.lattice.engine.feed.ChangeFeedTrimmedException}.
     *
     * @param fromInclusive lowest key, or null
     * @param toExclusive upper bound, or null
     * @return the snapshot (close it)
     * @throws OwnershipLostException if another process claimed one of the tree's logs
     * @throws dev.lattice.spi.WalStorageException if the provider fails while the position is computed
     */
    dev.lattice.engine.feed.ChangeSnapshot snapshotWithPosition(String fromInclusive, String toExclusive);

    /** {@return the number of keys (sums the partitions; exact when no write runs concurrently)} */
    long count();

    /** {@return the tree's current saturation state} */
    SaturationState saturation();

    /**
     * What is wrong with the tree's logs now: the causes behind a saturation state other than {@code HEALTHY}
     * (ownership lost, a provider call past its deadline, a failing provider) and conditions an operator must act
     * on (a checkpoint larger than the provider stores). Cheap; safe to poll from a health check.
     *
     * @return the issues, empty when healthy; a snapshot, not updated later
     */
    java.util.List<HealthIssue> healthIssues();

    /**
     * Async form of {@link #put}.
     *
     * @param key the key
     * @param value the value
     * @return completes with the version once committed and applied, or exceptionally (see class doc)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key or value exceeds its limit
     */
    CompletableFuture<Long> putAsync(String key, byte[] value);

    /**
     * Asynchronous {@link #put(String, byte[], Duration)}.
     *
     * @param key the key
     * @param value the value
     * @param ttl how long the value lives, positive
     * @return completes with the version
     * @throws IllegalArgumentException if {@code ttl} is invalid or the key or value exceeds its limit (thrown at once)
     */
    CompletableFuture<Long> putAsync(String key, byte[] value, Duration ttl);

    /**
     * Async form of {@link #putIfAbsent}.
     *
     * @param key the key
     * @param value the value
     * @return completes with true when written
     */
    CompletableFuture<Boolean> putIfAbsentAsync(String key, byte[] value);

    /**
     * Async form of {@link #putIfVersion}.
     *
     * @param key the key
     * @param value the value
     * @param expectedVersion the expected version, 0 for absent
     * @return completes with true when written
     */
    CompletableFuture<Boolean> putIfVersionAsync(String key, byte[] value, long expectedVersion);

    /**
     * Async form of {@link #delete}.
     *
     * @param key the key
     * @return completes with true when the key was present
     */
    CompletableFuture<Boolean> deleteAsync(String key);

    /**
     * Async form of {@link #putAll}.
     *
     * @param entries keys and values
     * @return completes when every key is committed, or exceptionally with the first failure
     */
    CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries);

    /**
     * Asynchronous {@link #putAll(Map, Duration)}.
     *
     * @param entries keys and values
     * @param ttl how long the values live, positive
     * @return completes when all are written
     * @throws IllegalArgumentException if {@code ttl} is invalid or a key or value exceeds its limit (thrown at once)
     */
    CompletableFuture<Void> putAllAsync(Map<String, byte[]> entries, Duration ttl);

    /**
     * Async form of {@link #get} (completes at once: reads are served from memory).
     *
     * @param key the key
     * @return the value or empty
     */
    default CompletableFuture<Optional<byte[]>> getAsync(String key) {
        return CompletableFuture.completedFuture(get(key));
    }

    /**
     * Async form of {@link #getVersioned}.
     *
     * @param key the key
     * @return the versioned value or empty
     */
    default CompletableFuture<Optional<Versioned>> getVersionedAsync(String key) {
        return CompletableFuture.completedFuture(getVersioned(key));
    }

    /**
     * Async form of {@link #getAll}.
     *
     * @param keys the keys
     * @return the present keys with values
     */
    default CompletableFuture<Map<String, byte[]>> getAllAsync(Collection<String> keys) {
        return CompletableFuture.completedFuture(getAll(keys));
    }
}
