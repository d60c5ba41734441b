package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.RepairReport;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.StagedBatchTable;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One log of a {@link ChronicleWalStorageProvider} (log part of the protocol, docs/providers/chronicle.md "On-disk
 * layout", "Two-phase append, commit groups, visibility", "Trim and retention", "Repair"): its durable records (epoch, trim, tail), its queue
 * ({@link LogQueue}), its in-memory frame index, its staged batches ({@link StagedBatchTable}) and its checkpoints
 * ({@link LogCheckpoints}). Writing a commit group is {@link CommitWriter}'s job, the scan at open
 * {@link RecoveryScanner}'s, the queue rewrite of repair {@link LogRepair}'s.
 *
 * <p>Not thread-safe by itself: every method runs with {@link #lock} held (the provider takes it).
 */
final class LogStore {

    static final String EPOCH_FILE = "epoch";
    static final String TRIM_FILE = "trim";
    /** Durable record of the committed tail, written at close and at checkpoint publish. */
    static final String TAIL_FILE = "tail";
    private static final int TAIL_MAGIC = 0x4C54414C;
    static final String QUEUE_DIR = "queue";
    static final String CHECKPOINT_DIR = "checkpoints";
    private static final int EPOCH_MAGIC = 0x4C455043;
    private static final int TRIM_MAGIC = 0x4C54524D;

    /** Guards everything in this object. */
    final ReentrantLock lock = new ReentrantLock();
    final LogId id;
    private final ChronicleConfig config;
    private final Path dir;
    private final Path queueDir;
    private final LogCheckpoints checkpoints;
    private final CommitWriter writer;

    private boolean loaded;
    private boolean exists;
    private boolean dirty;
    private boolean closed;

    private long epoch;
    private long watermark = -1;
    private long tail = -1;
    /** The committed tail in the log's tail record, -1 when none. */
    private long recordedTail = -1;
    private final FrameIndex frames = new FrameIndex();
    private long framePayloadBytes;
    private long framedBytes;
    private long hiddenPayloadBytes;
    private long pendingLeftovers;
    private final StagedBatchTable<CommitWriter.Fragment> staged = new StagedBatchTable<>();

    private LogQueue queue;
    /** Test hook run after each frame a commit wrote (to inject a failure between frames); null in production. */
    Runnable afterFrameWritten;

    LogStore(LogId id, Path logsDir, ChronicleConfig config) {
        this.id = id;
        this.config = config;
        this.dir = logsDir.resolve(dirName(id));
        this.queueDir = dir.resolve(QUEUE_DIR);
        this.checkpoints = new LogCheckpoints(id, dir.resolve(CHECKPOINT_DIR));
        this.writer = new CommitWriter(id, config, queueDir);
    }

    /** @see LogDirName#dirName */
    static String dirName(LogId id) {
        return LogDirName.dirName(id);
    }

    /** @see LogDirName#parseDirName */
    static LogId parseDirName(String name) {
        return LogDirName.parseDirName(name);
    }

    // ---------------------------------------------------------------- life cycle

    /** @return true once {@link #close()} ran */
    boolean isClosed() {
        return closed;
    }

    /**
     * Loads the log from disk on first use (and again after a failed write): epoch, trim record, checkpoints, and a
     * scan of the queue from the trim point that rebuilds the frame index. Does not create anything.
     */
    void ensureLoaded() {
        if (loaded && !dirty) {
            return;
        }
        boolean firstLoad = !loaded;
        if (queue != null) {
            closeQueue(); // a reload after a failed write, or a retry after a load that failed half-way
        }
        exists = Files.isDirectory(dir);
        if (exists) {
            if (firstLoad) {
                // Leftovers of a crash during an atomic write; never on a reload, a publish may be in flight.
                SmallFiles.deleteTempFiles(dir);
                SmallFiles.deleteTempFiles(checkpoints.dir());
            }
            long[] e = SmallFiles.readRecord(id, dir.resolve(EPOCH_FILE), EPOCH_MAGIC, 1);
            epoch = e == null ? 0 : e[0];
            long[] t = SmallFiles.readRecord(id, dir.resolve(TRIM_FILE), TRIM_MAGIC, 2);
            watermark = t == null ? -1 : t[0];
            long floor = t == null ? -1 : Math.max(t[0], t[1]);
            long[] r = SmallFiles.readRecord(id, dir.resolve(TAIL_FILE), TAIL_MAGIC, 1);
            recordedTail = r == null ? -1 : r[0];
            long knownTail = Math.max(floor, recordedTail);
            checkpoints.reload();
            frames.clear();
            framePayloadBytes = 0;
            framedBytes = 0;
            hiddenPayloadBytes = 0;
            tail = floor;
            if (Files.isDirectory(queueDir)) {
                queue = new LogQueue(id, config, dir, queueDir);
                scan(knownTail);
            } else if (knownTail > watermark) {
                // the queue is gone but offsets above the watermark were committed
                frames.add(watermark + 1, FrameIndex.CORRUPT, 0, 0);
                tail = knownTail;
            }
            tail = Math.max(tail, floor);
            staged.dropStartingThrough(tail);
        }
        loaded = true;
        dirty = false;
    }

    /** Makes the next call rebuild the log's state from disk (after a failure that may have left it unknown). */
    void markForReload() {
        if (loaded) {
            dirty = true;
        }
    }

    /** Creates the log's directories (durably) if they do not exist yet. */
    private void materialize() {
        if (exists) {
            return;
        }
        try {
            Path logs = dir.getParent();
            boolean newLogsDir = !Files.isDirectory(logs);
            Files.createDirectories(checkpoints.dir());
            if (newLogsDir) {
                SmallFiles.forceDirectory(logs.getParent());
            }
            SmallFiles.forceDirectory(logs);
            SmallFiles.forceDirectory(dir);
        } catch (IOException e) {
            throw StorageErrors.io(id, dir.getParent(), "cannot create log directory " + dir, e);
        }
        exists = true;
    }

    private void closeQueue() {
        LogQueue q = queue;
        queue = null;
        if (q != null) {
            q.close();
        }
    }

    /** Releases the queue, its mapped files and channels; staged batches are dropped. Idempotent. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        staged.clear();
        try {
            recordTail();
        } catch (WalStorageException e) {
            // best effort (e.g. a full disk): the record only sharpens damage detection at the next open
        } finally {
            closeQueue();
        }
    }

    /**
     * Writes the committed tail to the log's tail record (durably) when it moved since the last record, so that a
     * later open can tell a log that ends early (damage, truncation) from a torn last write. Cost: one small atomic
     * file write (temporary file, fsync, rename, directory fsync); done at close and checkpoint publish, not per
     * commit (see docs/providers/chronicle.md for the measurement).
     */
    private void recordTail() {
        if (!loaded || !exists || tail <= recordedTail || tail <= watermark) {
            return;
        }
        SmallFiles.writeRecord(id, dir.resolve(TAIL_FILE), TAIL_MAGIC, tail);
        recordedTail = tail;
    }

    // ---------------------------------------------------------------- fencing

    /**
     * Checks a caller's fence against the log's epoch (also for run writes and deletes).
     *
     * @param fence the caller's fence
     * @throws FencedException if the fence is older than the log's epoch
     * @throws UnclaimedFenceException if the fence's epoch was never claimed
     */
    void checkFence(Fence fence) {
        if (fence.epoch() < epoch) {
            throw new FencedException(id, fence.epoch(), epoch);
        }
        if (fence.epoch() > epoch) {
            throw new UnclaimedFenceException("fence " + fence + " was never claimed on this storage (the log's "
                    + "epoch is " + epoch + ")");
        }
    }


    /**
     * Raises the epoch durably (written, forced and renamed before this returns).
     *
     * @return the new fence
     */
    Fence claim() {
        materialize();
        long next = epoch + 1;
        SmallFiles.writeRecord(id, dir.resolve(EPOCH_FILE), EPOCH_MAGIC, next);
        epoch = next;
        return new Fence(id, next);
    }

    // ---------------------------------------------------------------- stage / commit / abort

    StagedBatch stage(Fence fence, EncodedBatch batch) {
        checkFence(fence);
        staged.stage(id, fence, batch, tail,
                () -> batch.firstOffset() > watermark
                        && isCommittedBatch(batch.firstOffset(), batch.lastOffset(), batch.batchId()),
                b -> new CommitWriter.Fragment(Frames.encodeBatch(b), b.size(), b.payloadBytes()));
        return StagedBatch.of(fence, batch);
    }

    private boolean isCommittedBatch(long first, long last, dev.lattice.spi.BatchId batchId) {
        int i = frames.find(first);
        if (i < 0 || frames.chronicleIndex(i) == FrameIndex.CORRUPT || frames.last(i, tail) < last) {
            return false;
        }
        byte[] doc = readFrame(i, first);
        Frames.Header h = Frames.readHeader(doc);
        dev.lattice.spi.BatchId found = Frames.findBatch(doc, h, first, last);
        return batchId.equals(found);
    }

    void abort(Fence fence, StagedBatch receipt) {
        checkFence(fence);
        staged.abort(receipt);
    }

    void commit(Fence fence, long through) {
        checkFence(fence);
        if (through <= tail) {
            return;
        }
        List<StagedBatchTable.Staged<CommitWriter.Fragment>> chain = staged.commitChain(id, fence, tail, through);
        materialize();
        if (queue == null) {
            queue = new LogQueue(id, config, dir, queueDir);
        }
        List<long[]> written;
        try {
            written = writer.write(queue, fence.epoch(), chain, tail + 1, through, afterFrameWritten);
        } catch (WalStorageException e) {
            if (writer.wroteAnything()) {
                // The group may or may not have become visible: rebuild from disk before the next call.
                dirty = true;
            }
            throw e;
        }
        for (long[] f : written) {
            frames.add(f[0], f[1], (int) f[2], (int) f[3]);
            framePayloadBytes += f[2];
            framedBytes += f[3];
        }
        staged.remove(chain);
        tail = through;
    }

    /** @return bytes reserved ahead of the write position so far (see {@link SpaceReserver}), for tests */
    long reservedBytes() {
        return queue == null ? 0 : queue.reserver.reservedBytes();
    }

    // ---------------------------------------------------------------- read / state

    ReadPage read(long fromExclusive, int maxEntries, long maxBytes) {
        return FrameReads.read(id, frames, watermark, tail, fromExclusive, maxEntries, maxBytes,
                (i, offset, into) -> queue.readFrame(frames.chronicleIndex(i), frames.first(i), frames.last(i, tail),
                        offset, into));
    }

    /**
     * Reads and checks frame {@code i} of the index.
     *
     * @param i the frame's position in the index
     * @param offset the offset the caller wants (for the error)
     * @return the frame bytes, intact and matching the index
     * @throws CorruptLogException if the frame is missing, damaged or not the one the index expects
     */
    private byte[] readFrame(int i, long offset) {
        return queue.readFrame(frames.chronicleIndex(i), frames.first(i), frames.last(i, tail), offset);
    }

    LogState state() {
        if (!exists) {
            return LogState.EMPTY;
        }
        long retained = Math.max(0, tail - watermark);
        long physical = framedBytes + 4L * frames.size() + checkpoints.bytes();
        return new LogState(watermark + 1, tail, watermark, epoch, retained, framePayloadBytes - hiddenPayloadBytes,
                physical);
    }

    /** @return how many times a commit forced a queue file to disk (fsync durability), for tests */
    long forcedFiles() {
        return writer.forcedFiles();
    }

    /** @return the log's directory */
    Path dir() {
        return dir;
    }

    /** @return the number of frames in the index (corrupt ranges included) */
    int indexedFrames() {
        return frames.size();
    }

    /** @return true when the log has a directory (was claimed, written or checkpointed) */
    boolean exists() {
        return exists;
    }

    // ---------------------------------------------------------------- trim / reconcile

    void trim(Fence fence, long through) {
        checkFence(fence);
        if (through <= watermark) {
            return;
        }
        long newTail = Math.max(tail, through);
        SmallFiles.writeRecord(id, dir.resolve(TRIM_FILE), TRIM_MAGIC, through, newTail);
        watermark = through;
        tail = newTail;
        staged.dropStartingThrough(through);
        int drop = 0;
        while (drop < frames.size() && frames.last(drop, tail) <= through) {
            framePayloadBytes -= frames.payloadBytes(drop);
            framedBytes -= frames.frameBytes(drop);
            drop++;
        }
        frames.dropFirst(drop);
        hiddenPayloadBytes = 0;
        if (frames.size() > 0 && frames.first(0) <= through && frames.chronicleIndex(0) != FrameIndex.CORRUPT) {
            try {
                byte[] doc = readFrame(0, through + 1);
                hiddenPayloadBytes = Frames.payloadBytesThrough(doc, Frames.readHeader(doc), through);
            } catch (CorruptLogException e) {
                hiddenPayloadBytes = 0; // a read of that frame reports the damage
            }
        }
        deleteTrimmedCycles();
    }

    /**
     * Deletes the cycle files whose every committed frame is at or below the trim watermark. The newest cycle file
     * is always kept (the appender writes there), and nothing is deleted when the oldest retained frame cannot be
     * located (a damaged frame stays as evidence).
     */
    private void deleteTrimmedCycles() {
        if (queue == null) {
            return;
        }
        long oldest = Long.MAX_VALUE;
        if (frames.size() > 0) {
            oldest = frames.chronicleIndex(0);
            if (oldest == FrameIndex.CORRUPT) {
                return;
            }
        }
        queue.deleteCyclesBefore(oldest);
    }

    ReconcileResult reconcile(Fence fence) {
        checkFence(fence);
        int rolledBack = staged.size();
        staged.clear();
        long bad = firstDamagedOffset();
        if (bad >= 0) {
            throw new CorruptLogException(id, bad, "committed offsets from " + bad + " are damaged or missing in "
                    + queueDir + " (committed tail " + tail + "); an operator can truncate the log there with "
                    + "'lattice wal repair', losing offsets " + bad + ".." + tail);
        }
        deleteTrimmedCycles();
        long leftovers = pendingLeftovers;
        pendingLeftovers = 0;
        return new ReconcileResult(tail, rolledBack, 0, leftovers);
    }

    /**
     * Operator repair: truncates the log at its first damaged or missing committed offset. The intact frames below
     * it are copied into a fresh queue ({@link LogRepair}), which replaces the damaged one; the damaged queue is kept
     * next to it as {@code queue.damaged-<ms>} for inspection (delete it to get the space back). The tail record is
     * lowered to the new tail, the trim record's tail too if it was above it, and checkpoints through offsets above
     * the new tail are deleted (they would name offsets the log no longer has). Everything is forced to disk before
     * this returns.
     *
     * @return what was lost; clean when the log had no damage
     */
    RepairReport repair(Fence fence) {
        checkFence(fence);
        staged.clear();
        long bad = firstDamagedOffset();
        if (bad < 0) {
            pendingLeftovers = 0;
            return RepairReport.clean(id, tail);
        }
        long tailBefore = tail;
        long tailAfter = bad - 1;
        LogRepair.Result r;
        try {
            r = LogRepair.rewrite(config, dir, queue, frames, tail, bad, this::closeQueue);
        } catch (IOException e) {
            dirty = true;
            throw StorageErrors.io(id, dir, "repair could not replace the damaged queue " + queueDir, e);
        }
        SmallFiles.writeRecord(id, dir.resolve(TAIL_FILE), TAIL_MAGIC, tailAfter);
        recordedTail = tailAfter;
        long[] t = SmallFiles.readRecord(id, dir.resolve(TRIM_FILE), TRIM_MAGIC, 2);
        if (t != null && t[1] > tailAfter) {
            SmallFiles.writeRecord(id, dir.resolve(TRIM_FILE), TRIM_MAGIC, t[0], Math.max(t[0], tailAfter));
        }
        List<Long> droppedCheckpoints = checkpoints.deleteFilesAbove(tailAfter);
        dirty = true;
        ensureLoaded();
        if (tail != Math.max(tailAfter, watermark) || firstDamagedOffset() >= 0) {
            throw new WalStorageException(id, "repair left the log at tail " + tail + " instead of " + tailAfter);
        }
        pendingLeftovers = 0;
        String detail = "truncated at the first damaged or missing committed offset " + bad + "; kept " + r.copied()
                + " intact frames" + (r.rewritten() > 0 ? " (" + r.rewritten()
                + " rewritten to end their commit group at " + tailAfter + ")" : "") + "; lost offsets " + bad + ".."
                + tailBefore + (droppedCheckpoints.isEmpty() ? "" : "; deleted checkpoints through "
                + droppedCheckpoints) + "; the damaged queue was moved to " + r.damaged()
                + " (delete it to free the space)";
        return new RepairReport(id, tailBefore, tailAfter, bad, tailBefore, detail);
    }

    /** @return the first committed offset above the watermark in a damaged or missing frame, or -1 when none */
    long firstDamagedOffset() {
        for (int i = 0; i < frames.size(); i++) {
            if (frames.chronicleIndex(i) == FrameIndex.CORRUPT && frames.last(i, tail) > watermark) {
                return Math.max(frames.first(i), watermark + 1);
            }
        }
        return -1;
    }

    // ---------------------------------------------------------------- checkpoints

    /** @return the log's checkpoints directory */
    Path checkpointDir() {
        return checkpoints.dir();
    }

    /**
     * Checks a publish before or after its data is written: fence current, through-offset within bounds.
     */
    void checkPublish(Fence fence, long through) {
        checkFence(fence);
        if (through > tail) {
            throw new dev.lattice.spi.OffsetConflictException(id, "checkpoint through " + through
                    + " is above the committed tail " + tail);
        }
        checkpoints.checkOrder(through);
    }

    /** Creates the log's directories for a publish. */
    void prepareCheckpointDir() {
        materialize();
    }

    /** Makes a written checkpoint the latest: atomic rename over any with the same through-offset. */
    CheckpointInfo publish(Fence fence, CheckpointFiles.Written written) {
        checkPublish(fence, written.info().throughOffset());
        CheckpointInfo info = checkpoints.publish(written);
        recordTail();
        return info;
    }

    Optional<CheckpointInfo> latestCheckpoint() {
        return checkpoints.latest();
    }

    InputStream openCheckpoint(CheckpointInfo info) {
        return checkpoints.open(info);
    }

    void deleteCheckpointsBefore(long throughExclusive) {
        checkpoints.deleteBefore(throughExclusive);
    }

    // ---------------------------------------------------------------- scan

    /**
     * Rebuilds the frame index with a {@link RecoveryScanner} scan of the queue.
     *
     * @param knownTail the committed tail recorded durably (tail and trim records), -1 when none
     */
    private void scan(long knownTail) {
        FrameScanner s = RecoveryScanner.scan(id, queue, watermark, knownTail, config.maxDocumentBytes());
        for (FrameScanner.Item it : s.accepted) {
            frames.add(it.first(), it.index(), it.payload(), it.frameBytes());
            framePayloadBytes += it.payload();
            framedBytes += it.frameBytes();
        }
        hiddenPayloadBytes = s.hiddenPayloadBytes;
        tail = Math.max(tail, s.next - 1);
        pendingLeftovers += s.leftovers;
    }
}
