package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.RollingResourcesCache;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore;
import net.openhft.chronicle.wire.DocumentContext;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * One log of a {@link ChronicleWalStorageProvider}: its directory, its Chronicle queue, its durable epoch and trim
 * watermark, its in-memory frame index and its staged batches.
 *
 * <pre>
 * &lt;root&gt;/logs/&lt;tree&gt;.&lt;pppp&gt;/
 *     epoch                 durable epoch record (SmallFiles)
 *     trim                  durable trim record: watermark, tail at trim time (SmallFiles)
 *     queue/                the Chronicle queue: metadata.cq4t and one .cq4 file per roll cycle
 *     checkpoints/          checkpoint-&lt;through&gt;.ckpt files (CheckpointFiles)
 * </pre>
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
    private final Path checkpointDir;

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
    private final TreeMap<Long, Staged> staged = new TreeMap<>();
    private TreeMap<Long, Path> checkpoints = new TreeMap<>();
    private long checkpointBytes;

    private SingleChronicleQueue queue;
    private ExcerptAppender appender;
    private ExcerptTailer tailer;
    private RollingResourcesCache cycleNames;
    private FileChannel syncChannel;
    private File syncFile;
    private long forcedFiles;
    private SpaceReserver reserver;
    /** Chronicle documents begun by the commit in progress (0: a failure left the queue untouched). */
    private int documentsBegun;
    /** Test hook run after each frame a commit wrote (to inject a failure between frames); null in production. */
    Runnable afterFrameWritten;

    /**
     * A batch staged in memory (the provider declares DEFERRED_STAGE), already encoded as its frame fragment.
     *
     * @param first first offset
     * @param last last offset
     * @param epoch the stager's epoch
     * @param id the batch id
     * @param fragment the encoded batch ({@link Frames#encodeBatch})
     * @param entries the entry count
     * @param payloadBytes the payload bytes
     */
    record Staged(long first, long last, long epoch, BatchId id, byte[] fragment, int entries, long payloadBytes) {
    }

    LogStore(LogId id, Path logsDir, ChronicleConfig config) {
        this.id = id;
        this.config = config;
        this.dir = logsDir.resolve(dirName(id));
        this.queueDir = dir.resolve(QUEUE_DIR);
        this.checkpointDir = dir.resolve(CHECKPOINT_DIR);
    }

    /**
     * The directory name of a log: {@link LogId#key()} with every upper-case letter written as {@code ~} and its
     * lower-case form ({@code Orders.0001} becomes {@code ~orders.0001}), so that trees differing only by case stay
     * apart on case-insensitive file systems ({@code ~} is not allowed in tree names, so the form is unambiguous).
     *
     * @param id the log
     * @return the directory name
     */
    static String dirName(LogId id) {
        String key = id.key();
        StringBuilder b = new StringBuilder(key.length() + 4);
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                b.append('~').append((char) (c - 'A' + 'a'));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /**
     * Parses a directory name written by {@link #dirName}.
     *
     * @param name the name
     * @return the log, or null when the name is not a log directory name
     */
    static LogId parseDirName(String name) {
        StringBuilder key = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '~') {
                if (i + 1 >= name.length() || name.charAt(i + 1) < 'a' || name.charAt(i + 1) > 'z') {
                    return null;
                }
                key.append((char) (name.charAt(++i) - 'a' + 'A'));
            } else if (c >= 'A' && c <= 'Z') {
                return null;
            } else {
                key.append(c);
            }
        }
        String k = key.toString();
        int dot = k.lastIndexOf('.');
        if (dot <= 0 || k.length() - dot - 1 != 4) {
            return null;
        }
        for (int i = dot + 1; i < k.length(); i++) {
            if (!Character.isDigit(k.charAt(i))) {
                return null;
            }
        }
        try {
            LogId id = new LogId(k.substring(0, dot), Integer.parseInt(k.substring(dot + 1)));
            return dirName(id).equals(name) ? id : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
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
            closeChronicle(); // a reload after a failed write, or a retry after a load that failed half-way
        }
        exists = Files.isDirectory(dir);
        if (exists) {
            if (firstLoad) {
                // Leftovers of a crash during an atomic write; never on a reload, a publish may be in flight.
                deleteTempFiles(dir);
                deleteTempFiles(checkpointDir);
            }
            long[] e = SmallFiles.readRecord(id, dir.resolve(EPOCH_FILE), EPOCH_MAGIC, 1);
            epoch = e == null ? 0 : e[0];
            long[] t = SmallFiles.readRecord(id, dir.resolve(TRIM_FILE), TRIM_MAGIC, 2);
            watermark = t == null ? -1 : t[0];
            long floor = t == null ? -1 : Math.max(t[0], t[1]);
            long[] r = SmallFiles.readRecord(id, dir.resolve(TAIL_FILE), TAIL_MAGIC, 1);
            recordedTail = r == null ? -1 : r[0];
            long knownTail = Math.max(floor, recordedTail);
            checkpoints = CheckpointFiles.list(id, checkpointDir);
            checkpointBytes = 0;
            for (Path p : checkpoints.values()) {
                checkpointBytes += sizeOf(p);
            }
            frames.clear();
            framePayloadBytes = 0;
            framedBytes = 0;
            hiddenPayloadBytes = 0;
            tail = floor;
            if (Files.isDirectory(queueDir)) {
                openQueue();
                scan(knownTail);
            } else if (knownTail > watermark) {
                // the queue is gone but offsets above the watermark were committed
                frames.add(watermark + 1, FrameIndex.CORRUPT, 0, 0);
                tail = knownTail;
            }
            tail = Math.max(tail, floor);
            staged.headMap(tail, true).clear();
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
            Files.createDirectories(checkpointDir);
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

    private void openQueue() {
        boolean created = !Files.isDirectory(queueDir);
        reserver = new SpaceReserver(id, queueDir);
        if (created) {
            // Chronicle writes the new metadata file through a mapping: make sure it can be backed.
            reserver.checkFreeSpace(0);
        }
        queue = build(queueDir);
        // Creating the appender also writes end-of-file markers into older cycles that lack them (after a crash).
        appender = queue.createAppender();
        appender.singleThreadedCheckDisabled(true);
        RollCycle rc = queue.rollCycle();
        cycleNames = new RollingResourcesCache(rc, queue.epoch(), name -> new File(queueDir.toFile(),
                name + SingleChronicleQueue.SUFFIX), f -> f.getName().substring(0, f.getName().length()
                - SingleChronicleQueue.SUFFIX.length()));
        if (created) {
            try {
                if (config.durability() == ChronicleDurability.FSYNC) {
                    try (FileChannel ch = FileChannel.open(queueDir.resolve(SingleChronicleQueue.QUEUE_METADATA_FILE),
                            StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                        ch.force(true);
                    }
                }
                SmallFiles.forceDirectory(queueDir);
                SmallFiles.forceDirectory(dir);
            } catch (IOException e) {
                throw new WalStorageException(id, "cannot force directory " + queueDir, e);
            }
        }
    }

    private SingleChronicleQueue build(Path path) {
        return SingleChronicleQueueBuilder.binary(path)
                .blockSize(config.blockSize())
                .rollCycle(config.rollCycle())
                .timeProvider(config.clock())
                .syncMode(SyncMode.NONE)
                .build();
    }

    private ExcerptTailer tailer() {
        if (tailer == null) {
            tailer = queue.createTailer();
            tailer.singleThreadedCheckDisabled(true);
        }
        return tailer;
    }

    private void closeChronicle() {
        Throwable first = null;
        for (AutoCloseable c : new AutoCloseable[]{tailer, appender, queue, syncChannel, reserver}) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception | Error e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        tailer = null;
        appender = null;
        queue = null;
        syncChannel = null;
        syncFile = null;
        reserver = null;
        if (first != null) {
            throw new WalStorageException(id, "closing the Chronicle queue failed", first);
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
            closeChronicle();
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

    private void checkFence(Fence fence) {
        if (fence.epoch() < epoch) {
            throw new FencedException(id, fence.epoch(), epoch);
        }
        if (fence.epoch() > epoch) {
            throw new UnclaimedFenceException("fence " + fence + " was never claimed on this storage (the log's "
                    + "epoch is " + epoch + ")");
        }
    }

    /** An argument error: a fence with an epoch above anything claimed on the log. */
    static final class UnclaimedFenceException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        UnclaimedFenceException(String message) {
            super(message);
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
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        StagedBatch receipt = StagedBatch.of(fence, batch);
        if (first <= tail) {
            if (first > watermark && isCommittedBatch(first, last, batch.batchId())) {
                return receipt;
            }
            throw new OffsetConflictException(id, "batch " + first + ".." + last + " overlaps committed offsets "
                    + "(committed tail " + tail + (watermark >= 0 ? ", trim watermark " + watermark : "") + ")");
        }
        List<Long> older = new ArrayList<>();
        Map.Entry<Long, Staged> below = staged.floorEntry(first);
        List<Staged> overlapping = new ArrayList<>();
        if (below != null && below.getValue().last >= first) {
            overlapping.add(below.getValue());
        }
        overlapping.addAll(staged.subMap(first, false, last, true).values());
        for (Staged s : overlapping) {
            if (s.epoch < fence.epoch()) {
                older.add(s.first);
            } else if (s.first == first && s.last == last && s.id.equals(batch.batchId())) {
                return receipt;
            } else {
                throw new OffsetConflictException(id, "batch " + first + ".." + last + " (id " + batch.batchId()
                        + ") overlaps staged batch " + s.first + ".." + s.last + " (id " + s.id + ")");
            }
        }
        older.forEach(staged::remove);
        staged.put(first, new Staged(first, last, fence.epoch(), batch.batchId(), Frames.encodeBatch(batch),
                batch.size(), batch.payloadBytes()));
        return receipt;
    }

    private boolean isCommittedBatch(long first, long last, BatchId batchId) {
        int i = frames.find(first);
        if (i < 0 || frames.chronicleIndex(i) == FrameIndex.CORRUPT || frames.last(i, tail) < last) {
            return false;
        }
        byte[] doc = readFrame(i, first);
        Frames.Header h = Frames.readHeader(doc);
        BatchId found = Frames.findBatch(doc, h, first, last);
        return batchId.equals(found);
    }

    void abort(Fence fence, StagedBatch receipt) {
        checkFence(fence);
        Staged s = staged.get(receipt.firstOffset());
        if (s != null && s.epoch == receipt.epoch() && s.id.equals(receipt.batchId()) && s.last == receipt.lastOffset()) {
            staged.remove(receipt.firstOffset());
        }
    }

    void commit(Fence fence, long through) {
        checkFence(fence);
        if (through <= tail) {
            return;
        }
        List<Staged> chain = new ArrayList<>();
        long pos = tail + 1;
        while (pos <= through) {
            Staged s = staged.get(pos);
            if (s == null || s.epoch != fence.epoch()) {
                throw new OffsetConflictException(id, "cannot commit through " + through + ": offset " + pos
                        + " is not staged under epoch " + fence.epoch());
            }
            if (s.last > through) {
                throw new OffsetConflictException(id, "cannot commit through " + through
                        + ": it falls inside staged batch " + s.first + ".." + s.last);
            }
            chain.add(s);
            pos = s.last + 1;
        }
        materialize();
        if (queue == null) {
            openQueue();
        }
        List<long[]> written;
        documentsBegun = 0;
        try {
            written = writeGroup(fence.epoch(), chain, tail + 1, through);
        } catch (RuntimeException | Error e) {
            if (documentsBegun > 0) {
                // The group may or may not have become visible: rebuild from disk before the next call.
                dirty = true;
            }
            throw mapWriteFailure(e, through);
        }
        for (long[] f : written) {
            frames.add(f[0], f[1], (int) f[2], (int) f[3]);
            framePayloadBytes += f[2];
            framedBytes += f[3];
        }
        for (Staged s : chain) {
            staged.remove(s.first);
        }
        tail = through;
    }

    /**
     * Maps a failed commit write to the typed error: a full disk (ENOSPC from the reservation, or a mapped page that
     * could not be backed, which the JVM reports as an {@code InternalError}) to a disk-full
     * {@link dev.lattice.spi.ProviderUnavailableException}; never lets an {@link Error} escape.
     */
    private WalStorageException mapWriteFailure(Throwable e, long through) {
        String what = "writing the commit through " + through + " failed"
                + (documentsBegun > 0 ? "; its outcome is known after the next call reloads the log"
                : "; nothing was written");
        if (e instanceof WalStorageException w) {
            return w;
        }
        if (e instanceof InternalError && e.getMessage() != null && e.getMessage().contains("unsafe memory access")) {
            return StorageErrors.diskFull(id, queueDir, what + " (a page of the memory-mapped file could not be "
                    + "backed: the file system is out of space, or the file could not be extended)", e);
        }
        if (StorageErrors.isDiskFull(e)) {
            return StorageErrors.diskFull(id, queueDir, what, e);
        }
        return new WalStorageException(id, what, e);
    }

    /**
     * Writes one commit group: the chain's fragments packed into as few frames (Chronicle documents) as fit.
     *
     * @return per frame: first offset, Chronicle index, payload bytes, frame bytes
     */
    private List<long[]> writeGroup(long fenceEpoch, List<Staged> chain, long groupFirst, long groupThrough) {
        int budget = config.maxDocumentBytes() - Frames.FRAME_OVERHEAD;
        List<long[]> out = new ArrayList<>();
        List<File> touched = new ArrayList<>();
        int i = 0;
        while (i < chain.size()) {
            int j = i;
            long bytes = 0;
            while (j < chain.size() && (j == i || bytes + chain.get(j).fragment.length <= budget)) {
                bytes += chain.get(j).fragment.length;
                j++;
            }
            List<Staged> part = chain.subList(i, j);
            out.add(writeFrame(fenceEpoch, part, groupFirst, groupThrough, (int) bytes));
            if (afterFrameWritten != null) {
                afterFrameWritten.run();
            }
            File f = appender.currentFile();
            if (f != null && !touched.contains(f)) {
                touched.add(f);
            }
            i = j;
        }
        if (config.durability() == ChronicleDurability.FSYNC) {
            force(touched);
        }
        return out;
    }

    private long[] writeFrame(long fenceEpoch, List<Staged> part, long groupFirst, long groupThrough, int bodyBytes) {
        int entries = 0;
        long payload = 0;
        for (Staged s : part) {
            entries += s.entries;
            payload += s.payloadBytes;
        }
        long first = part.get(0).first;
        long last = part.get(part.size() - 1).last;
        int frameLength = Frames.FRAME_OVERHEAD + bodyBytes;
        byte[] header = Frames.header(frameLength, part.size(), entries, fenceEpoch, first, last, groupFirst,
                groupThrough, (int) payload);
        CRC32C crc = new CRC32C();
        crc.update(header);
        for (Staged s : part) {
            crc.update(s.fragment);
        }
        int c = (int) crc.getValue();
        byte[] trailer = {(byte) (c >>> 24), (byte) (c >>> 16), (byte) (c >>> 8), (byte) c};
        long reserve = frameLength + 16L;
        reserver.beforeDocument(appender.currentFile(), appender.cycle() != queue.cycle(), reserve);
        documentsBegun++;
        DocumentContext dc = appender.writingDocument();
        try {
            Bytes<?> b = dc.wire().bytes();
            reserver.ensure(appender.currentFile(), b.writePosition(), reserve);
            b.write(header);
            for (Staged s : part) {
                b.write(s.fragment);
            }
            b.write(trailer);
            reserver.written(b.writePosition());
        } catch (RuntimeException | Error e) {
            dc.rollbackOnClose();
            throw e;
        } finally {
            dc.close();
        }
        return new long[]{first, appender.lastIndexAppended(), payload, frameLength};
    }

    /** @return bytes reserved ahead of the write position so far (see {@link SpaceReserver}), for tests */
    long reservedBytes() {
        return reserver == null ? 0 : reserver.reservedBytes();
    }

    /** Forces the cycle files a commit wrote (fdatasync), and the queue directory when a cycle file is new. */
    private void force(List<File> touched) {
        try {
            boolean newFile = false;
            for (File f : touched) {
                FileChannel reserved = reserver.channelFor(f);
                if (reserved != null) {
                    reserved.force(false); // the reserver's channel on the current file
                    if (!f.equals(syncFile)) {
                        syncFile = f;
                        newFile = true;
                        if (syncChannel != null) {
                            syncChannel.close();
                            syncChannel = null;
                        }
                    }
                    continue;
                }
                if (!f.equals(syncFile) || syncChannel == null) {
                    if (syncChannel != null) {
                        syncChannel.force(false);
                        syncChannel.close();
                    }
                    syncChannel = FileChannel.open(f.toPath(), StandardOpenOption.READ, StandardOpenOption.WRITE);
                    syncFile = f;
                    newFile = true;
                }
                if (f.equals(syncFile)) {
                    syncChannel.force(false);
                } else {
                    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ,
                            StandardOpenOption.WRITE)) {
                        ch.force(false);
                    }
                }
            }
            forcedFiles += touched.size();
            if (newFile) {
                SmallFiles.forceDirectory(queueDir);
            }
        } catch (IOException e) {
            throw StorageErrors.io(id, queueDir, "cannot force the queue files to disk", e);
        }
    }

    // ---------------------------------------------------------------- read / state

    ReadPage read(long fromExclusive, int maxEntries, long maxBytes) {
        List<LogEntry> out = new ArrayList<>();
        if (fromExclusive >= tail || watermark >= tail || frames.size() == 0) {
            return new ReadPage(out, tail);
        }
        long start = Math.max(fromExclusive, watermark) + 1;
        int i = frames.find(start);
        if (i < 0) {
            throw new CorruptLogException(id, start, "no frame holds this committed offset (committed tail " + tail
                    + ")");
        }
        long[] bytes = {0};
        long want = start;
        while (i < frames.size() && out.size() < maxEntries && want <= tail) {
            if (frames.chronicleIndex(i) == FrameIndex.CORRUPT) {
                if (out.isEmpty()) {
                    throw new CorruptLogException(id, want, "committed offsets " + frames.first(i) + ".."
                            + frames.last(i, tail) + " are in a frame that failed its checksum or is missing");
                }
                break;
            }
            byte[] doc;
            try {
                doc = readFrame(i, want);
            } catch (CorruptLogException e) {
                if (out.isEmpty()) {
                    throw e;
                }
                break;
            }
            Frames.Header h = Frames.readHeader(doc);
            final long from = want;
            Frames.forEachEntry(doc, h, (offset, d, pos, len) -> {
                if (offset < from) {
                    return true;
                }
                if (out.size() >= maxEntries || (!out.isEmpty() && bytes[0] + len > maxBytes)) {
                    return false;
                }
                out.add(new LogEntry(offset, Arrays.copyOfRange(d, pos, pos + len)));
                bytes[0] += len;
                return true;
            });
            if (!out.isEmpty() && (out.size() >= maxEntries || out.get(out.size() - 1).offset() < h.last())) {
                break;
            }
            want = h.last() + 1;
            i++;
        }
        return new ReadPage(out, tail);
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
        long index = frames.chronicleIndex(i);
        ExcerptTailer t = tailer();
        byte[] doc = null;
        long got = Long.MIN_VALUE;
        if (t.index() != index && !t.moveToIndex(index)) {
            throw new CorruptLogException(id, offset, "the frame at Chronicle index 0x" + Long.toHexString(index)
                    + " (offsets from " + frames.first(i) + ") is missing");
        }
        try (DocumentContext dc = t.readingDocument()) {
            if (dc.isPresent()) {
                got = dc.index();
                Bytes<?> b = dc.wire().bytes();
                doc = new byte[(int) b.readRemaining()];
                b.read(doc);
            }
        }
        if (doc == null || got != index) {
            throw new CorruptLogException(id, offset, "the frame at Chronicle index 0x" + Long.toHexString(index)
                    + " (offsets from " + frames.first(i) + ") is missing");
        }
        Frames.Header h = Frames.readHeader(doc);
        if (h == null || h.first() != frames.first(i) || h.last() != frames.last(i, tail)) {
            throw new CorruptLogException(id, offset, "the frame of offsets " + frames.first(i) + ".."
                    + frames.last(i, tail) + " has a damaged header");
        }
        String problem = Frames.checkBody(doc, h);
        if (problem != null) {
            throw new CorruptLogException(id, offset, "the frame of offsets " + h.first() + ".." + h.last() + ": "
                    + problem);
        }
        return doc;
    }

    LogState state() {
        if (!exists) {
            return LogState.EMPTY;
        }
        long retained = Math.max(0, tail - watermark);
        long physical = framedBytes + 4L * frames.size() + checkpointBytes;
        return new LogState(watermark + 1, tail, watermark, epoch, retained, framePayloadBytes - hiddenPayloadBytes,
                physical);
    }

    /** @return how many times a commit forced a queue file to disk (fsync durability), for tests */
    long forcedFiles() {
        return forcedFiles;
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
        staged.headMap(through, true).clear();
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
     *
     * @return the number of files deleted
     */
    private int deleteTrimmedCycles() {
        if (queue == null) {
            return 0;
        }
        int last = queue.lastCycle();
        if (last == Integer.MIN_VALUE || last == Integer.MAX_VALUE) {
            return 0;
        }
        int cutoff = last;
        if (frames.size() > 0) {
            long idx = frames.chronicleIndex(0);
            if (idx == FrameIndex.CORRUPT) {
                return 0;
            }
            cutoff = Math.min(cutoff, queue.rollCycle().toCycle(idx));
        }
        List<Path> victims = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(queueDir, "*" + SingleChronicleQueue.SUFFIX)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                int cycle;
                try {
                    cycle = cycleNames.parseCount(n.substring(0, n.length() - SingleChronicleQueue.SUFFIX.length()));
                } catch (RuntimeException e) {
                    continue;
                }
                if (cycle < cutoff) {
                    victims.add(p);
                }
            }
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot list " + queueDir, e);
        }
        if (victims.isEmpty()) {
            return 0;
        }
        // A tailer reading a deleted cycle would skip to the next one: drop ours, it is re-created on demand.
        if (tailer != null) {
            tailer.close();
            tailer = null;
        }
        try {
            for (Path p : victims) {
                Files.deleteIfExists(p);
            }
            SmallFiles.forceDirectory(queueDir);
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot delete trimmed cycle files in " + queueDir, e);
        }
        queue.refreshDirectoryListing();
        return victims.size();
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
     * it are copied into a fresh queue (a commit group cut by the damage is rewritten to end at the last intact
     * offset), which replaces the damaged one; the damaged queue is kept next to it as {@code queue.damaged-<ms>}
     * for inspection (delete it to get the space back). The tail record is lowered to the new tail, the trim record's
     * tail too if it was above it, and checkpoints through offsets above the new tail are deleted (they would name
     * offsets the log no longer has). Everything is forced to disk before this returns.
     *
     * @return what was lost; clean when the log had no damage
     */
    dev.lattice.spi.RepairReport repair(Fence fence) {
        checkFence(fence);
        staged.clear();
        long bad = firstDamagedOffset();
        if (bad < 0) {
            pendingLeftovers = 0;
            return dev.lattice.spi.RepairReport.clean(id, tail);
        }
        long tailBefore = tail;
        long tailAfter = bad - 1;
        Path fresh = dir.resolve(QUEUE_DIR + ".repair");
        Path damaged = dir.resolve(QUEUE_DIR + ".damaged-" + System.currentTimeMillis());
        int copied = 0;
        int rewritten = 0;
        try {
            deleteTree(fresh);
            try (SingleChronicleQueue q = build(fresh)) {
                ExcerptAppender a = q.createAppender();
                a.singleThreadedCheckDisabled(true);
                for (int i = 0; i < frames.size() && frames.first(i) < bad; i++) {
                    if (frames.chronicleIndex(i) == FrameIndex.CORRUPT) {
                        break;
                    }
                    byte[] doc = readFrame(i, frames.first(i));
                    if (Frames.readHeader(doc).groupThrough() > tailAfter) {
                        doc = Frames.withGroupThrough(doc, tailAfter);
                        rewritten++;
                    }
                    try (DocumentContext dc = a.writingDocument()) {
                        dc.wire().bytes().write(doc);
                    }
                    copied++;
                }
            }
            net.openhft.chronicle.core.io.BackgroundResourceReleaser.releasePendingResources();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(fresh)) {
                for (Path p : ds) {
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                        ch.force(true);
                    }
                }
            }
            SmallFiles.forceDirectory(fresh);
            closeChronicle();
            if (Files.isDirectory(queueDir)) {
                Files.move(queueDir, damaged, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            }
            Files.move(fresh, queueDir, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            SmallFiles.forceDirectory(dir);
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
        List<Long> droppedCheckpoints = new ArrayList<>(checkpoints.tailMap(tailAfter, false).keySet());
        try {
            for (long through : droppedCheckpoints) {
                Files.deleteIfExists(checkpoints.get(through));
            }
            if (!droppedCheckpoints.isEmpty()) {
                SmallFiles.forceDirectory(checkpointDir);
            }
        } catch (IOException e) {
            throw StorageErrors.io(id, checkpointDir, "repair could not delete checkpoints above offset "
                    + tailAfter, e);
        }
        dirty = true;
        ensureLoaded();
        if (tail != Math.max(tailAfter, watermark) || firstDamagedOffset() >= 0) {
            throw new WalStorageException(id, "repair left the log at tail " + tail + " instead of " + tailAfter);
        }
        pendingLeftovers = 0;
        String detail = "truncated at the first damaged or missing committed offset " + bad + "; kept " + copied
                + " intact frames" + (rewritten > 0 ? " (" + rewritten + " rewritten to end their commit group at "
                + tailAfter + ")" : "") + "; lost offsets " + bad + ".." + tailBefore
                + (droppedCheckpoints.isEmpty() ? "" : "; deleted checkpoints through " + droppedCheckpoints)
                + "; the damaged queue was moved to " + damaged + " (delete it to free the space)";
        return new dev.lattice.spi.RepairReport(id, tailBefore, tailAfter, bad, tailBefore, detail);
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (java.util.stream.Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
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
        return checkpointDir;
    }

    /**
     * Checks a publish before or after its data is written: fence current, through-offset within bounds.
     */
    void checkPublish(Fence fence, long through) {
        checkFence(fence);
        if (through > tail) {
            throw new OffsetConflictException(id, "checkpoint through " + through + " is above the committed tail "
                    + tail);
        }
        if (!checkpoints.isEmpty() && through < checkpoints.lastKey()) {
            throw new OffsetConflictException(id, "checkpoint through " + through
                    + " is below the latest checkpoint's " + checkpoints.lastKey());
        }
    }

    /** Creates the log's directories for a publish. */
    void prepareCheckpointDir() {
        materialize();
    }

    /** Makes a written checkpoint the latest: atomic rename over any with the same through-offset. */
    CheckpointInfo publish(Fence fence, CheckpointFiles.Written written) {
        checkPublish(fence, written.info().throughOffset());
        long through = written.info().throughOffset();
        Path target = CheckpointFiles.fileFor(checkpointDir, through);
        long old = checkpoints.containsKey(through) ? sizeOf(target) : 0;
        try {
            SmallFiles.moveAtomically(written.tmp(), target);
            SmallFiles.forceDirectory(checkpointDir);
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot publish checkpoint " + target, e);
        }
        checkpoints.put(through, target);
        checkpointBytes += sizeOf(target) - old;
        recordTail();
        return written.info();
    }

    java.util.Optional<CheckpointInfo> latestCheckpoint() {
        if (checkpoints.isEmpty()) {
            return java.util.Optional.empty();
        }
        Map.Entry<Long, Path> e = checkpoints.lastEntry();
        return java.util.Optional.of(CheckpointFiles.readInfo(id, e.getValue(), e.getKey()));
    }

    java.io.InputStream openCheckpoint(CheckpointInfo info) {
        Path p = checkpoints.get(info.throughOffset());
        if (p == null) {
            throw new WalStorageException(id, "checkpoint through " + info.throughOffset() + " no longer exists");
        }
        CheckpointInfo onDisk = CheckpointFiles.readInfo(id, p, info.throughOffset());
        if (!onDisk.equals(info)) {
            throw new WalStorageException(id, "checkpoint through " + info.throughOffset()
                    + " no longer exists (replaced by " + onDisk + ")");
        }
        return CheckpointFiles.open(id, p, info);
    }

    void deleteCheckpointsBefore(long throughExclusive) {
        if (checkpoints.isEmpty()) {
            return;
        }
        long keep = Math.min(throughExclusive, checkpoints.lastKey());
        Iterator<Map.Entry<Long, Path>> it = checkpoints.headMap(keep, false).entrySet().iterator();
        boolean deleted = false;
        try {
            while (it.hasNext()) {
                Path p = it.next().getValue();
                checkpointBytes -= sizeOf(p);
                Files.deleteIfExists(p);
                it.remove();
                deleted = true;
            }
            if (deleted) {
                SmallFiles.forceDirectory(checkpointDir);
            }
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot delete old checkpoints in " + checkpointDir, e);
        }
    }

    // ---------------------------------------------------------------- scan

    /**
     * Rebuilds the frame index by reading every frame of the queue, cycle by cycle, then looks past the last record
     * Chronicle returned in the newest cycle file for intact frames ({@link RawFrameFinder}): damage followed by
     * intact data, or a log that ends before its known committed tail, is corruption, never a torn tail.
     *
     * @param knownTail the committed tail recorded durably (tail and trim records), -1 when none
     */
    private void scan(long knownTail) {
        FrameScanner s = new FrameScanner(watermark);
        RollCycle rc = queue.rollCycle();
        int firstCycle = queue.firstCycle();
        int lastCycle = queue.lastCycle();
        List<Frames.Header> raw = List.of();
        if (firstCycle != Integer.MAX_VALUE && lastCycle != Integer.MIN_VALUE) {
            NavigableSet<Long> cycles = queue.listCyclesBetween(firstCycle, lastCycle);
            ExcerptTailer t = tailer();
            long nextCycle = Long.MIN_VALUE;
            long newestEnd = 0;
            long newestHeader = -1;
            long newestIntactHeader = -1;
            for (long cycle : cycles) {
                if (cycle < nextCycle || !t.moveToIndex(rc.toIndex((int) cycle, 0))) {
                    continue;
                }
                try {
                    while (true) {
                        try (DocumentContext dc = t.readingDocument()) {
                            if (!dc.isPresent()) {
                                break;
                            }
                            long index = dc.index();
                            Bytes<?> b = dc.wire().bytes();
                            long end = b.readLimit();
                            boolean newest = rc.toCycle(index) == lastCycle;
                            if (newest) {
                                newestHeader = b.readPosition() - 4;
                            }
                            byte[] doc = new byte[(int) b.readRemaining()];
                            b.read(doc);
                            if (s.document(index, doc) && newest) {
                                newestEnd = end; // the raw search starts after the last intact frame
                                newestIntactHeader = newestHeader;
                            }
                            nextCycle = rc.toCycle(index) + 1L;
                        }
                    }
                } catch (RuntimeException unreadable) {
                    // a record header Chronicle cannot parse: what follows is judged below and by the next cycle
                    s.unreadable();
                    tailer.close();
                    tailer = null;
                    t = tailer();
                }
            }
            raw = checkNewestEnd(s, lastCycle, newestHeader, newestIntactHeader, newestEnd);
        }
        s.finish(knownTail, raw);
        for (FrameScanner.Item it : s.accepted) {
            frames.add(it.first(), it.index(), it.payload(), it.frameBytes());
            framePayloadBytes += it.payload();
            framedBytes += it.frameBytes();
        }
        hiddenPayloadBytes = s.hiddenPayloadBytes;
        tail = Math.max(tail, s.next - 1);
        pendingLeftovers += s.leftovers;
    }

    /**
     * Looks past the last record Chronicle returned in the newest cycle file. Chronicle records the header position
     * of its last complete record in the file's header on every append. When that is the last intact frame we read,
     * the end is clean and nothing more is read. Otherwise: a complete record after the one that follows the last
     * intact frame, or a last complete record that no longer reads as a data record (its 4-byte header is stored in
     * one write when the record completes, so this is not a torn write) is evidence of unreadable committed records;
     * and the raw bytes are searched for intact frames of later groups ({@link RawFrameFinder}).
     *
     * @return the intact frame headers found in the raw bytes
     */
    private List<Frames.Header> checkNewestEnd(FrameScanner s, int cycle, long newestHeader, long newestIntactHeader,
                                               long newestEnd) {
        Path file = cycleNames.resourceFor(cycle).path.toPath();
        long last = -1;
        SingleChronicleQueueStore store = queue.storeForCycle(cycle, queue.epoch(), false, null);
        if (store != null) {
            try {
                last = store.writePosition();
            } finally {
                queue.closeStore(store);
            }
        }
        if (last >= 0 && last == newestIntactHeader) {
            return List.of(); // Chronicle's last complete record is the last intact frame
        }
        try {
            if (newestEnd > 0 && last >= 0) {
                long next = RawFrameFinder.firstDataRecordAt(file, (newestEnd + 3) & ~3L);
                if (last > next || (last > newestHeader && !RawFrameFinder.isDataRecordHeader(file, last))) {
                    s.unreadableAfterEnd();
                }
            }
            return RawFrameFinder.find(file, newestEnd, config.maxDocumentBytes());
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot read the newest cycle file " + file, e);
        }
    }

    // ---------------------------------------------------------------- helpers

    private static long sizeOf(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return 0;
        }
    }

    private static void deleteTempFiles(Path dir) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + SmallFiles.TMP_SUFFIX)) {
            for (Path p : ds) {
                Files.deleteIfExists(p);
            }
        } catch (IOException ignored) {
            // harmless: a leftover temp file is never read
        }
    }
}
