package dev.lattice.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A tree of which this process hosts only some partitions (for a cluster, where each partition's log has one owner
 * among several processes): {@link Lattice#hostTree}. Hosting a partition claims its log (fencing any earlier
 * owner) and replays it; releasing it drains its writes, checkpoints it and stops serving it, so that another
 * process can host it next (that process's claim fences this one if it did not release).
 *
 * <p>The {@link Tree} operations behave as on an embedded tree for keys of hosted partitions. A key, write or read
 * that needs a partition not hosted here throws {@link PartitionNotHostedException}; {@link #count()} and
 * {@link #scan} cover the hosted partitions only. Writes whose keys fall in more than one log (multi-partition
 * {@code putAllAtomic}, cross-tree atomic writes, {@code deleteRange}), moves and change feeds are refused with
 * {@link PartitionNotHostedException} unless every log they need is hosted here, and multi-log atomic writes are
 * refused on a partial tree altogether (their decision would not survive a hand-off of a participant). When another
 * process claims a hosted partition's log, only that partition stops being served: its reads and writes throw
 * {@link OwnershipLostException} until it is released and hosted again.
 *
 * <p>Thread-safe; {@link #host} and {@link #release} of one partition are serialised.
 */
public interface PartialTree extends Tree {

    /**
     * Maps a key to its partition by the tree's stored partition hash.
     *
     * @param key a key (not validated beyond null)
     * @return the partition, {@code 0..partitions()-1}, that holds {@code key} by the tree's stored partition hash
     * @throws NullPointerException if the key is null
     */
    int partitionOf(String key);

    /** {@return the partitions hosted now, a snapshot in ascending order} */
    Set<Integer> hostedPartitions();

    /**
     * Hosts a partition: claims its log (fencing any other writer), reconciles it, loads its latest checkpoint or
     * manifest and replays the log after it; with a read lease ({@link LatticeConfig.Builder#readLease}) it then
     * waits until the lease has passed since the claim, so no earlier owner can still serve a read from before this
     * owner's writes. Blocks until done (about what opening a one-partition tree costs, plus the lease).
     * A no-op when the partition is hosted already.
     *
     * @param partition {@code 0..partitions()-1}
     * @throws IndexOutOfBoundsException if the partition does not exist
     * @throws LatticeException if the log holds an atomic write prepared by a coordinator log this process does not
     *     host (open the tree embedded once to resolve it)
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.CorruptLogException if a log entry or checkpoint is corrupt
     * @throws dev.lattice.spi.WalStorageException if the provider fails
     */
    void host(int partition);

    /**
     * Stops hosting a partition: new operations on it throw {@link PartitionNotHostedException} at once; writes
     * already admitted are drained and the partition is checkpointed (so the next owner replays little), within the
     * timeout. A no-op when it is not hosted.
     *
     * @param partition {@code 0..partitions()-1}
     * @param timeout how long to wait for the drain and the checkpoint, not negative
     * @return true when every admitted write was answered and the checkpoint was written (or not needed)
     * @throws IndexOutOfBoundsException if the partition does not exist
     */
    boolean release(int partition, Duration timeout);

    /**
     * Reads several keys with their versions as of one snapshot, as {@link Tree#getAll} does (keys held by an atomic
     * write whose outcome this process has not learnt are waited for first, up to the admission timeout).
     *
     * @param keys the keys, each in a hosted partition
     * @return the present keys with their values and versions, in key order
     * @throws NullPointerException if {@code keys} or a key is null
     * @throws IllegalArgumentException if a key breaks the key rules
     * @throws PartitionNotHostedException if a key's partition is not hosted here
     * @throws AtomicWritePendingException if a key stayed held by an unresolved atomic write for the wait
     * @throws OwnershipLostException if another process claimed a key's log
     */
    Map<String, Versioned> getAllVersioned(java.util.Collection<String> keys);

    /**
     * Reads a key's latest value, as {@link Tree#getVersioned} does, but only when that needs no wait and no provider
     * call: the partition's read lease is current, the partition holds no atomic write whose outcome this process
     * has not learnt, and the memtable decides the key (it holds a value or a delete of it). For a thread that must
     * not block (an actor's), which falls back to {@link Tree#getVersioned} on another thread when this returns null.
     *
     * @param key a key in a hosted partition
     * @return the answer ({@code Optional.empty()} when the key is absent), or null when answering needs a wait or a
     *     provider call (look in the runs, renew the read lease, wait for an atomic write's outcome)
     * @throws NullPointerException if the key is null
     * @throws IllegalArgumentException if the key breaks the key rules
     * @throws PartitionNotHostedException if the key's partition is not hosted here
     * @throws OwnershipLostException if another process claimed the key's log
     */
    Optional<Versioned> getVersionedIfInMemory(String key);

    /**
     * Counts the live keys of one hosted partition (as {@link Tree#count()} does for a whole tree).
     *
     * @param partition a hosted partition
     * @return the number of live keys
     * @throws PartitionNotHostedException if the partition is not hosted here
     * @throws OwnershipLostException if another process claimed its log
     */
    long count(int partition);

    /**
     * Scans one hosted partition in key order, as {@link Tree#scan} does for a whole tree.
     *
     * @param partition a hosted partition
     * @param fromInclusive the lowest key, or null for the start
     * @param toExclusive the key after the last, or null for the end
     * @param reverse true for descending order
     * @return a cursor to close
     * @throws PartitionNotHostedException if the partition is not hosted here
     * @throws OwnershipLostException if another process claimed its log
     */
    ScanCursor scan(int partition, String fromInclusive, String toExclusive, boolean reverse);

    /**
     * A counter of the atomic-write prepares ({@link #prepareAtomic}, and those replayed) registered in this hosting
     * of a partition: it grows by one when a prepare is registered, after the write is registered as pending (so a
     * read that waits for pending writes, such as {@link #scan(int, String, String, boolean)}, opened after a reading
     * of the counter, waits for every prepare counted in that reading whose keys it covers). Values of different
     * hostings in this process never compare equal (each hosting starts from its own base, a per-process ordinal
     * times 2^40; at most 2^40 prepares per hosting keep this true), so two equal readings mean the same hosting and
     * no prepare registered between them. A cluster uses it to prove that per-partition scan snapshots form a
     * consistent cut. The fence is proved as for a read (with a read lease) first.
     *
     * @param partition a hosted partition
     * @return the counter's value now (not a count from zero: compare readings for equality only)
     * @throws PartitionNotHostedException if the partition is not hosted here
     * @throws OwnershipLostException if another process claimed its log
     */
    long atomicPreparesSeen(int partition);

    // ------------------------------------------------------------------ multi-log atomic writes across processes

    /**
     * Step 1 of a multi-log atomic write coordinated by a cluster: locks this partition's keys of the write (waiting
     * up to the admission timeout for other atomic writes), checks its preconditions and appends its PREPARE entry
     * (the write's values stay invisible). Reads of those keys wait for the write's outcome from then on.
     *
     * @param partition a hosted partition
     * @param txnId the write's id, unique per write
     * @param coordinator the write's coordinator log (where its decision is recorded)
     * @param ops this partition's operations (keys of other partitions are refused)
     * @return completes with a version floor (the write's version must be at least this) once the entry is
     *     committed; exceptionally with {@link PreconditionFailedException} (nothing prepared),
     *     {@link LatticeSaturatedException} (keys locked too long), or the write error
     * @throws PartitionNotHostedException if the partition is not hosted here
     * @throws IllegalArgumentException if a key or value breaks its limit, or a key is of another partition
     * @throws IllegalStateException if the write is already prepared here
     */
    CompletableFuture<Long> prepareAtomic(int partition, String txnId, dev.lattice.spi.LogId coordinator,
                                          List<AtomicOp> ops);

    /**
     * Step 2, in the coordinator log: appends the DECISION entry, the commit point. A commit needs this partition's
     * own part prepared by {@link #prepareAtomic} in this hosting; on commit the own part becomes visible, on abort it
     * is undone. Deciding an unknown write as aborted records the abort (so a later question gets the same answer).
     *
     * @param partition the coordinator partition, hosted here
     * @param txnId the write
     * @param commit true to commit
     * @param participants the other participant logs
     * @param versionFloor the highest floor the participants' prepares returned
     * @return completes with the write's version (0 for an abort) once the decision is committed
     * @throws PartitionNotHostedException if the partition is not hosted here
     * @throws IllegalStateException if a commit is asked for a write not prepared in this hosting, or the write is
     *     already decided the other way
     */
    CompletableFuture<Long> decideAtomic(int partition, String txnId, boolean commit,
                                         List<dev.lattice.spi.LogId> participants, long versionFloor);

    /**
     * {@link #decideAtomic(int, String, boolean, List, long)} that also records the decision under an idempotency
     * key, in the same DECISION entry (as the embedded engine's atomic writes do), so that
     * {@link #atomicDecisionByIdempotencyKey} finds it until {@link LatticeConfig.Builder#atomicRetention} has
     * passed, in this process and after any later open of the log.
     *
     * @param partition the coordinator partition, hosted here
     * @param txnId the write
     * @param commit true to commit
     * @param participants the other participant logs
     * @param versionFloor the highest floor the participants' prepares returned
     * @param idempotencyKey the caller's key, or null for none
     * @param digest the write's digest (which keys and operations it holds), checked on a retry with the same key
     * @return completes with the write's version (0 for an abort) once the decision is committed
     * @throws PartitionNotHostedException if the partition is not hosted here
     * @throws IllegalStateException as {@link #decideAtomic(int, String, boolean, List, long)}
     */
    CompletableFuture<Long> decideAtomic(int partition, String txnId, boolean commit,
                                         List<dev.lattice.spi.LogId> participants, long versionFloor,
                                         String idempotencyKey, long digest);

    /**
     * Looks up the decision a coordinator partition recorded under an idempotency key
     * ({@link #decideAtomic(int, String, boolean, List, long, String, long)}).
     *
     * @param partition a hosted coordinator partition
     * @param idempotencyKey the key
     * @param digest the retried write's digest
     * @return the recorded decision, or empty when none is recorded under the key (or it has expired)
     * @throws IllegalArgumentException if the key was recorded for a write with another digest
     * @throws PartitionNotHostedException if the partition is not hosted here
     */
    Optional<AtomicDecision> atomicDecisionByIdempotencyKey(int partition, String idempotencyKey, long digest);

    /**
     * Step 3, in every other participant: appends the RESOLVE entry, which makes the write's part visible (commit)
     * or undoes it (abort) and releases its keys. A no-op when the write is not prepared here (already resolved).
     *
     * @param partition a hosted partition
     * @param txnId the write
     * @param commit the decision
     * @param version the write's version (commit)
     * @return completes once the entry is committed
     * @throws PartitionNotHostedException if the partition is not hosted here
     */
    CompletableFuture<Void> resolveAtomic(int partition, String txnId, boolean commit, long version);

    /**
     * Looks up the decision a coordinator partition logged for an atomic write.
     *
     * @param partition a hosted coordinator partition
     * @param txnId the write
     * @return its recorded decision, or empty when none is recorded (in flight, or never decided)
     * @throws PartitionNotHostedException if the partition is not hosted here
     */
    Optional<AtomicDecision> atomicDecision(int partition, String txnId);

    /**
     * Tells the coordinator partition that a participant in another process wrote its RESOLVE entry, so that the
     * decision can be dropped from later checkpoints once every participant did.
     *
     * @param partition the coordinator partition, hosted here
     * @param txnId the write
     * @param participant the participant log
     * @throws PartitionNotHostedException if the partition is not hosted here
     */
    void atomicResolvedAt(int partition, String txnId, dev.lattice.spi.LogId participant);

    /**
     * Lists the atomic writes prepared in a partition and not yet resolved.
     *
     * @param partition a hosted partition
     * @return the atomic writes prepared here whose outcome is not known here yet, by id, with their coordinator
     *     logs (after a replay: those whose coordinator another process hosts)
     * @throws PartitionNotHostedException if the partition is not hosted here
     */
    Map<String, dev.lattice.spi.LogId> pendingAtomicWrites(int partition);
}
