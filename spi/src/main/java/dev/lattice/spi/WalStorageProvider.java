package dev.lattice.spi;

import java.util.List;

/**
 * A durable write-ahead log store: the SPI every Lattice provider implements. One provider instance holds many
 * logs, each addressed by a {@link LogId}.
 *
 * <h2>General rules (every method)</h2>
 * <ul>
 *   <li>The SPI is synchronous: a call returns when its work is done on the backend. The engine owns threads and
 *       timeouts.</li>
 *   <li>Arguments are validated before any I/O: null arguments throw {@link NullPointerException}, out-of-range
 *       ones {@link IllegalArgumentException}, a fence claimed on another log than the one addressed
 *       {@link IllegalArgumentException}. A fence whose epoch is higher than any claimed on the log (forged, or
 *       from other storage) is refused with {@link IllegalArgumentException} where the provider can tell.</li>
 *   <li>After {@link #close()}, every method but {@code close} and {@code describe} throws
 *       {@link IllegalStateException}.</li>
 *   <li>Order of checks: arguments first, then closed state, then the fence; a stale fence is reported as
 *       {@link FencedException} even when the call would also conflict ({@link OffsetConflictException}).</li>
 *   <li>Backend failures surface as {@link WalStorageException} subclasses with the cause attached, never as a bare
 *       SDK or driver exception: {@link ProviderUnavailableException} for transient ones (outcome unknown; safe to
 *       retry with the same batch id), {@link CorruptLogException} for data that fails its checksum.</li>
 *   <li>Implementations are thread-safe: calls on different logs may run concurrently; on one log, stages of
 *       consecutive batches may run concurrently with each other and with a commit when the provider declares
 *       {@link ProviderFeature#CONCURRENT_STAGE} (otherwise the provider serialises them itself).</li>
 * </ul>
 *
 * <h2>Offsets</h2>
 * Offsets of a log are dense {@code long}s from 0: there are no holes. The <em>committed tail</em> is the highest
 * committed offset ({@code -1} when none); it never decreases, not through trim, reopen or reconcile. Trimming
 * beyond the tail moves the tail up to the trim point (those offsets count as committed and trimmed), so a log
 * trimmed through {@code N} accepts {@code N + 1} next. No offset exceeds {@link #MAX_OFFSET}: {@code stage},
 * {@code commit} and {@code trim} arguments beyond it are refused with {@link IllegalArgumentException} before any
 * I/O, so that offset arithmetic ({@code tail + 1}, {@code watermark + 1}, {@code first + entries - 1}) never
 * overflows.
 *
 * <h2>Two-phase append</h2>
 * {@link #stage} makes a batch durable but invisible; {@link #commit} makes every staged batch up to an offset
 * visible at once, in offset order. {@link #append} does both.
 *
 * <h2>Fencing</h2>
 * {@link #claim} raises the log's epoch. {@code commit}, {@code trim}, {@code reconcile} and checkpoint
 * {@code publish} with an older fence throw {@link FencedException} and change nothing. A stage with an older
 * fence throws {@link FencedException} at once where the backend can check, and is otherwise refused at commit; it
 * never changes committed data or a newer writer's staged batch.
 */
public interface WalStorageProvider extends AutoCloseable {

    /**
     * The highest offset a log may hold, trim or commit: {@code Long.MAX_VALUE - Integer.MAX_VALUE}, so that the
     * offset after it and the last offset of any batch that starts below it still fit in a {@code long}. "Delete
     * everything" is {@code trim(log, fence, state(log).committedTail())}, not {@code trim(log, fence,
     * Long.MAX_VALUE)}.
     */
    long MAX_OFFSET = Long.MAX_VALUE - Integer.MAX_VALUE;

    /**
     * Describes the provider: name, version, limits, durability with the current configuration, features.
     *
     * @return the descriptor; constant for the life of the instance
     */
    ProviderDescriptor describe();

    /**
     * Becomes the log's writer: atomically raises the log's epoch and returns a fence with the new epoch, which is
     * strictly higher than any epoch claimed on this log before (also across reopen). Older fences are stale from
     * now on. Does not change committed data or staged batches; call {@link #reconcile} next.
     *
     * @param log the log
     * @return the new fence, with {@code fence.log().equals(log)}
     * @throws ProviderUnavailableException on a transient backend failure (the epoch may or may not have moved;
     *     claim again)
     * @throws WalStorageException on any other backend failure
     */
    Fence claim(LogId log);

    /**
     * Phase 1 of an append: stores the batch durably (unless the provider declares
     * {@link ProviderFeature#DEFERRED_STAGE}) where readers do not look. Staged batches are invisible to
     * {@link #read} and {@link #state}.
     *
     * <p>Stages of consecutive batches may finish in any order, so a batch may be staged above a gap; the gap must
     * be filled before a commit can cover it. Staging the same batch again (same batch id, same offsets) is
     * success and stores it once, also when it was committed meanwhile.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}
     * @param batch the batch; its first offset must be above the committed tail
     * @return the receipt to pass to {@link #abort}
     * @throws EntryTooLargeException if an entry exceeds {@link ProviderLimits#maxEntryBytes()} (before any I/O)
     * @throws BatchTooLargeException if the batch exceeds the entry-count or byte limit (before any I/O)
     * @throws OffsetConflictException if the batch overlaps committed offsets (unless it is that very batch, same
     *     id), trimmed offsets, or a batch staged under the same epoch with another id or offset range
     * @throws FencedException if the fence is stale and the provider can tell at stage time
     * @throws ProviderUnavailableException on a transient failure (retry with the same batch)
     * @throws WalStorageException on any other backend failure
     */
    StagedBatch stage(LogId log, Fence fence, EncodedBatch batch);

    /**
     * Phase 2 of an append: makes every batch staged under this fence's epoch with offsets up to
     * {@code throughOffset} visible, atomically and in offset order, and moves the committed tail to
     * {@code throughOffset}. Idempotent: when {@code throughOffset} is at or below the committed tail, nothing
     * happens (after the fence check).
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}; must be current
     * @param throughOffset the last offset to commit (inclusive), {@code >= -1}; above the tail it must be the last
     *     offset of a staged batch
     * @throws FencedException if the fence is stale (nothing changes)
     * @throws OffsetConflictException if an offset between the tail and {@code throughOffset} is not staged under
     *     this epoch, or {@code throughOffset} falls inside a staged batch (nothing changes)
     * @throws ProviderUnavailableException on a transient failure (the commit may or may not have landed; retry)
     * @throws WalStorageException on any other backend failure
     */
    void commit(LogId log, Fence fence, long throughOffset);

    /**
     * Drops a staged batch, best effort. Never touches committed entries, batches staged under another epoch, or
     * batches with another batch id. A batch that is no longer staged (committed, already aborted, rolled back) is
     * ignored.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}
     * @param staged the receipt {@link #stage} returned
     * @throws FencedException if the fence is stale and the provider can tell (nothing changes)
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    void abort(LogId log, Fence fence, StagedBatch staged);

    /**
     * Stages and commits one batch. When the commit fails, the staged batch is aborted (best effort) and the
     * commit's exception is thrown.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}
     * @param batch the batch; its first offset must be {@code committedTail + 1}
     * @throws OffsetConflictException if the batch does not start right after the tail or overlaps other data
     * @throws FencedException if the fence is stale
     * @throws EntryTooLargeException if an entry is too large
     * @throws BatchTooLargeException if the batch is too large
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    default void append(LogId log, Fence fence, EncodedBatch batch) {
        StagedBatch staged = stage(log, fence, batch);
        try {
            commit(log, fence, batch.lastOffset());
        } catch (RuntimeException e) {
            try {
                abort(log, fence, staged);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Reads committed entries with offsets above {@code fromExclusive}, ascending and consecutive: at most
     * {@code maxEntries} entries and at most {@code maxBytes} payload bytes, but always at least one entry when one
     * exists (so a single entry larger than {@code maxBytes} is still returned). A page may be shorter than the
     * bounds allow (a backend's own page size): readers page on until they reach {@link ReadPage#committedTail()} or
     * get an empty page. Never returns staged entries, nor anything at or below the trim watermark.
     *
     * @param log the log; a log never written reads empty
     * @param fromExclusive the strict lower bound, {@code >= -1}
     * @param maxEntries at most this many entries, {@code >= 1}
     * @param maxBytes at most this many payload bytes, {@code >= 1} (soft for the first entry)
     * @return the page; empty when nothing committed lies above {@code fromExclusive}
     * @throws CorruptLogException if a stored record fails its checksum or cannot be decoded
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes);

    /**
     * The log's committed state, from counters or bounded metadata reads, never a scan of the log.
     *
     * @param log the log; a log never written reports {@link LogState#EMPTY} (with its epoch if claimed)
     * @return the state
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    LogState state(LogId log);

    /**
     * Drops committed entries at or below {@code throughInclusive}. Durably records the trim watermark first, then
     * deletes, so an interrupted trim is finished by the next trim or reconcile and nothing at or below the
     * watermark is ever read again. Idempotent; a lower value than the current watermark is a no-op. Trimming
     * beyond the tail is allowed and moves the tail up to {@code throughInclusive}; staged batches at or below the
     * new watermark are dropped.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}; must be current
     * @param throughInclusive the highest offset to drop, {@code >= 0}
     * @throws FencedException if the fence is stale (nothing changes)
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    void trim(LogId log, Fence fence, long throughInclusive);

    /**
     * Repairs what a crash between phases left behind, so that {@link #state}, {@link #read} and the next
     * {@link #stage} agree: rolls back staged-but-uncommitted batches (or rolls them forward only where a durable
     * commit intent exists), removes torn frames, leftovers above the tail or below the trim watermark, and finishes
     * an interrupted trim. Never lowers the tail and never drops a committed batch. The engine calls it right after
     * {@link #claim} and after a failed batch.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}; must be current
     * @return what was repaired
     * @throws FencedException if the fence is stale
     * @throws CorruptLogException if committed data fails its checksum
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    ReconcileResult reconcile(LogId log, Fence fence);

    /**
     * Checks that {@code fence} is still the log's current fence, without changing anything: a cheap fenced call
     * the engine makes on an idle log to bound how long a process that lost its claim can serve stale reads. The
     * default commits through {@code -1}, a no-op that every provider must still refuse for a stale fence.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}
     * @throws FencedException if another writer claimed the log since
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    default void checkFence(LogId log, Fence fence) {
        commit(log, fence, -1);
    }

    /**
     * Explicit, opt-in repair of a damaged log for operators: truncates the log at its first damaged or unreadable
     * record (the offset a {@link CorruptLogException} named) and reports exactly which offsets were lost. This is
     * the one operation that lowers the committed tail; the engine never calls it by itself. Offered only by
     * providers that declare {@link ProviderFeature#REPAIR}.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}; must be current
     * @return what was lost; {@link RepairReport#isClean()} when nothing was damaged
     * @throws UnsupportedOperationException if the provider does not declare {@link ProviderFeature#REPAIR}
     * @throws FencedException if the fence is stale
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    default RepairReport repair(LogId log, Fence fence) {
        throw new UnsupportedOperationException("provider '" + describe().name() + "' does not offer wal repair");
    }

    /**
     * Deletes a log wholly, for dropping a tree: its committed and staged entries, trim watermark, checkpoints, runs
     * (when the provider declares {@link ProviderFeature#RUNS}) and epoch record, so that afterwards {@link #logs}
     * and {@link #trees} no longer list it, {@link #state} reports {@link LogState#EMPTY}, {@link #read} is empty,
     * {@link CheckpointStore#latest} is empty and {@code runs().list(log)} is empty. Other logs are untouched.
     * Offered by providers that declare {@link ProviderFeature#DROP}.
     *
     * <p>Safe to interrupt and repeat: the record that makes the log listed (its epoch or head) is deleted last, so
     * a drop cut short leaves a log that {@link #logs} still lists and that a new {@link #claim} plus {@code drop}
     * finishes. Dropping a log that does not exist (never written, or already dropped) does nothing, whatever the
     * fence's epoch. A dropped log's epochs are forgotten: a later {@link #claim} may start again from epoch 1, and
     * a fence from before the drop is refused ({@link FencedException} or {@link IllegalArgumentException}) by every
     * fenced call until a new claim reaches its epoch, so a stale writer cannot bring the log back. The engine
     * therefore records the drop before dropping and never lets a writer of the old log come back (see
     * {@code docs/engine.md}, tree lifecycle).
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}; must be current when the log exists
     * @throws UnsupportedOperationException if the provider does not declare {@link ProviderFeature#DROP}
     * @throws FencedException if the log exists and the fence is stale (nothing is deleted)
     * @throws ProviderUnavailableException on a transient failure (part of the log may be gone; drop again)
     * @throws WalStorageException on any other backend failure
     */
    default void drop(LogId log, Fence fence) {
        throw new UnsupportedOperationException("provider '" + describe().name() + "' does not offer dropping a log");
    }

    /**
     * The store for this provider's runs (ARCHITECTURE.md 4.9), offered by providers that declare
     * {@link ProviderFeature#RUNS}.
     *
     * @return the run store; the same instance on every call
     * @throws UnsupportedOperationException if the provider does not declare {@link ProviderFeature#RUNS}
     */
    default RunStore runs() {
        throw new UnsupportedOperationException("provider '" + describe().name() + "' has no run store");
    }

    /**
     * The store for this provider's checkpoints.
     *
     * @return the checkpoint store; same instance on every call
     */
    CheckpointStore checkpoints();

    /**
     * The logs of a tree that exist on this provider (claimed, written or checkpointed), for inspection and moves.
     *
     * @param tree the tree name (rules of {@link LogId})
     * @return the logs, sorted by partition; empty when the tree has none here
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    List<LogId> logs(String tree);

    /**
     * The names of the trees that have at least one log on this provider.
     *
     * @return tree names, sorted
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    List<String> trees();

    /**
     * Releases the provider's resources (connections, files, locks). Idempotent. Staged batches that were not
     * committed are left for {@link #reconcile}. Calls still running on other threads may fail.
     */
    @Override
    void close();
}
