package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageException;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.RollingResourcesCache;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One log as a read-only instance sees it (read-only part of the protocol, docs/providers/chronicle.md "Read-only
 * instances"): before each call it re-reads the writer's small records (epoch, trim), opens the log's queue with
 * Chronicle's read-only mode on first need, and feeds the documents appended since its last call, from where its
 * tailer stopped, to a {@link FrameScanner}, which accepts a commit group once its last frame is present (the same
 * rule as the writer's recovery scan). Accepted frames go to its own {@link FrameIndex}; reads go through
 * {@link FrameReads}. Never writes a file.
 *
 * <p>Not thread-safe by itself: every method runs with {@link #lock} held.
 */
final class ReadOnlyLog {

    private static final int EPOCH_MAGIC = 0x4C455043;
    private static final int TRIM_MAGIC = 0x4C54524D;
    private static final int FORMAT_MAGIC = 0x4C434647;
    /** Polls in a row that may fail on one unreadable record before it is reported as damage. */
    private static final int UNREADABLE_POLLS = 3;

    /** Guards everything in this object. */
    final ReentrantLock lock = new ReentrantLock();
    private final LogId id;
    private final ChronicleConfig config;
    private final Path root;
    private final Path dir;
    private final Path queueDir;
    private final LogCheckpoints checkpoints;

    private boolean exists;
    private long epoch;
    private long watermark = -1;
    private long tail = -1;
    private final FrameIndex frames = new FrameIndex();
    private long framePayloadBytes;
    private long framedBytes;
    private long hiddenPayloadBytes;

    private SingleChronicleQueue queue;
    private Object queueKey;
    private RollingResourcesCache cycleNames;
    private ExcerptTailer scanTailer;
    private ExcerptTailer readTailer;
    private FrameScanner scanner;
    private int drained;
    /** Chronicle index of the last document scanned, or {@link Long#MIN_VALUE} when none. */
    private long lastIndex = Long.MIN_VALUE;
    private int unreadablePolls;
    /** Corrupt ranges the scanner accepted so far (a jump in offsets). */
    private long corruptSeen;

    ReadOnlyLog(LogId id, Path root, Path logsDir, ChronicleConfig config) {
        this.id = id;
        this.config = config;
        this.root = root;
        this.dir = logsDir.resolve(LogStore.dirName(id));
        this.queueDir = dir.resolve(LogStore.QUEUE_DIR);
        this.checkpoints = new LogCheckpoints(id, dir.resolve(LogStore.CHECKPOINT_DIR));
    }

    // ---------------------------------------------------------------- calls

    ReadPage read(long fromExclusive, int maxEntries, long maxBytes) {
        refresh();
        try {
            return FrameReads.read(id, frames, watermark, tail, fromExclusive, maxEntries, maxBytes, this::frame);
        } catch (CorruptLogException e) {
            // the writer may have trimmed and deleted the frame since this call refreshed: look again once
            long before = watermark;
            refresh();
            if (watermark == before) {
                throw e;
            }
            return FrameReads.read(id, frames, watermark, tail, fromExclusive, maxEntries, maxBytes, this::frame);
        }
    }

    LogState state() {
        refresh();
        if (!exists) {
            return LogState.EMPTY;
        }
        checkpoints.reload();
        long retained = Math.max(0, tail - watermark);
        long physical = framedBytes + 4L * frames.size() + checkpoints.bytes();
        return new LogState(watermark + 1, tail, watermark, epoch, retained, framePayloadBytes - hiddenPayloadBytes,
                physical);
    }

    Optional<CheckpointInfo> latestCheckpoint() {
        checkpoints.reload();
        return checkpoints.latest();
    }

    InputStream openCheckpoint(CheckpointInfo info) {
        checkpoints.reload();
        return checkpoints.open(info);
    }

    /** Closes the queue and its tailers. Idempotent. */
    void close() {
        closeQueue();
    }

    private byte[] frame(int i, long offset) {
        return FrameReads.readFrame(id, readTailer(), frames.chronicleIndex(i), frames.first(i), frames.last(i, tail),
                offset);
    }

    private FrameReads.FrameBuffer frame(int i, long offset, FrameReads.FrameBuffer into) {
        return FrameReads.readFrame(id, readTailer(), frames.chronicleIndex(i), frames.first(i), frames.last(i, tail),
                offset, into);
    }

    private ExcerptTailer readTailer() {
        if (readTailer == null) {
            readTailer = queue.createTailer();
            readTailer.singleThreadedCheckDisabled(true);
        }
        return readTailer;
    }

    // ---------------------------------------------------------------- refresh

    /**
     * Brings the view up to what the writer has committed now: small records, then the documents appended since the
     * last call. Cost when nothing changed: a few {@code stat}s, two small file reads and one Chronicle read attempt.
     */
    private void refresh() {
        exists = Files.isDirectory(dir);
        if (!exists) {
            if (queue != null || tail >= 0 || watermark >= 0) {
                reset(); // dropped
            }
            return;
        }
        long[] e = SmallFiles.readRecord(id, dir.resolve(LogStore.EPOCH_FILE), EPOCH_MAGIC, 1);
        epoch = e == null ? 0 : e[0];
        readTrim();
        if (!openQueueIfPresent()) {
            return;
        }
        long corruptBefore = corruptSeen;
        scan();
        if (corruptSeen > corruptBefore) {
            // a jump in offsets: the writer may have trimmed (and moved its tail up) after this call read the trim
            readTrim();
        }
    }

    private void readTrim() {
        long[] t = SmallFiles.readRecord(id, dir.resolve(LogStore.TRIM_FILE), TRIM_MAGIC, 2);
        if (t == null || t[0] <= watermark) {
            return;
        }
        watermark = t[0];
        // the trim's recorded tail (t[1]) is not used: this view's tail is what its frames cover, or the watermark
        tail = Math.max(tail, t[0]);
        int drop = 0;
        while (drop < frames.size() && frames.last(drop, tail) <= watermark) {
            framePayloadBytes -= frames.payloadBytes(drop);
            framedBytes -= frames.frameBytes(drop);
            drop++;
        }
        frames.dropFirst(drop);
        hiddenPayloadBytes = 0;
        if (frames.size() > 0 && frames.first(0) <= watermark && frames.chronicleIndex(0) != FrameIndex.CORRUPT
                && queue != null) {
            try {
                byte[] doc = frame(0, watermark + 1);
                hiddenPayloadBytes = Frames.payloadBytesThrough(doc, Frames.readHeader(doc), watermark);
            } catch (CorruptLogException ex) {
                hiddenPayloadBytes = 0; // a read of that frame reports the damage
            }
        }
        if (scanner != null && scanner.next - 1 <= watermark) {
            // this view is at or behind the trim: start over from the oldest retained cycle with the new watermark
            restartScan();
        }
    }

    /**
     * Opens the queue when its metadata file exists; notices a queue replaced under the same name (repair, or a
     * drop and a new log) by its metadata file's identity and starts over then.
     *
     * @return true when a queue is open
     */
    private boolean openQueueIfPresent() {
        Path meta = queueDir.resolve(SingleChronicleQueue.QUEUE_METADATA_FILE);
        Object key;
        try {
            BasicFileAttributes a = Files.readAttributes(meta, BasicFileAttributes.class);
            key = a.fileKey() != null ? a.fileKey() : a.creationTime();
        } catch (NoSuchFileException ex) {
            if (queue != null) {
                reset();
            }
            return false;
        } catch (IOException ex) {
            throw new WalStorageException(id, "cannot read " + meta, ex);
        }
        if (queue != null && !Objects.equals(key, queueKey)) {
            reset();
        }
        if (queue == null) {
            queue = SingleChronicleQueueBuilder.binary(queueDir)
                    .readOnly(true)
                    .blockSize(blockSize())
                    .rollCycle(config.rollCycle())
                    .timeProvider(config.clock())
                    .build();
            queueKey = key;
            cycleNames = new RollingResourcesCache(queue.rollCycle(), queue.epoch(), name -> new File(
                    queueDir.toFile(), name + SingleChronicleQueue.SUFFIX), f -> f.getName().substring(0,
                    f.getName().length() - SingleChronicleQueue.SUFFIX.length()));
            restartScan();
        }
        return true;
    }

    /** The directory's recorded block size (the writer's), else the configured one. */
    private long blockSize() {
        long[] f = SmallFiles.readRecord(null, root.resolve(ChronicleWalStorageProvider.FORMAT_FILE), FORMAT_MAGIC,
                2);
        return f == null ? config.blockSize() : f[1];
    }

    /** Forgets everything read from the queue (the log was dropped or its queue replaced). */
    private void reset() {
        closeQueue();
        frames.clear();
        framePayloadBytes = 0;
        framedBytes = 0;
        hiddenPayloadBytes = 0;
        tail = -1;
        watermark = -1;
        if (Files.isDirectory(dir)) {
            readTrim();
        }
    }

    private void closeQueue() {
        for (AutoCloseable c : new AutoCloseable[]{scanTailer, readTailer, queue}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // read-only mappings: nothing to lose
                }
            }
        }
        scanTailer = null;
        readTailer = null;
        queue = null;
        queueKey = null;
        scanner = null;
        lastIndex = Long.MIN_VALUE;
    }

    /** A new scanner from the watermark; the scan tailer goes back to the oldest cycle file. */
    private void restartScan() {
        scanner = new FrameScanner(watermark);
        drained = 0;
        lastIndex = Long.MIN_VALUE;
        if (scanTailer != null) {
            scanTailer.close();
            scanTailer = null;
        }
        // the scanner finds the frames above the watermark again
        frames.clear();
        framePayloadBytes = 0;
        framedBytes = 0;
        hiddenPayloadBytes = 0;
    }

    private ExcerptTailer scanTailer() {
        if (scanTailer == null) {
            // no refreshDirectoryListing(): on a read-only queue it may try to update metadata.cq4t and fail
            scanTailer = queue.createTailer();
            scanTailer.singleThreadedCheckDisabled(true);
            int first = nextCycleFile(Integer.MIN_VALUE);
            boolean resumed = false;
            if (lastIndex != Long.MIN_VALUE && scanTailer.moveToIndex(lastIndex)) {
                try (DocumentContext dc = scanTailer.readingDocument()) {
                    resumed = true; // skips the document scanned last
                }
            }
            // not resumed: nothing scanned yet, or the last scanned cycle was deleted (all of it trimmed)
            if (!resumed && first != Integer.MAX_VALUE) {
                scanTailer.moveToIndex(queue.rollCycle().toIndex(first, 0));
            }
        }
        return scanTailer;
    }

    /** Feeds the documents appended since the last scan to the scanner and indexes the groups it accepts. */
    private void scan() {
        ExcerptTailer t = scanTailer();
        RollCycle rc = queue.rollCycle();
        boolean retried = false;
        FrameReads.FrameBuffer buf = new FrameReads.FrameBuffer(); // one array for the documents of this call
        try {
            while (true) {
                int length = -1;
                long index = 0;
                try (DocumentContext dc = t.readingDocument()) {
                    if (dc.isPresent()) {
                        index = dc.index();
                        Bytes<?> b = dc.wire().bytes();
                        length = (int) b.readRemaining();
                        b.read(buf.ensure(length), 0, length);
                    }
                }
                if (length >= 0) {
                    lastIndex = index;
                    scanner.document(index, buf.bytes, length);
                    retried = false;
                    continue;
                }
                // End of what is visible. A later cycle file means the writer moved on (it writes no more here once
                // it does): look once more, then go to the next cycle even if no end-of-file marker was written.
                int cycle = rc.toCycle(t.index());
                int last = queue.lastCycle(); // the writer records each new cycle there: a cheap first look
                if (last == Integer.MIN_VALUE || last == Integer.MAX_VALUE || last <= cycle) {
                    break;
                }
                int later = nextCycleFile(cycle);
                if (later == Integer.MAX_VALUE) {
                    break;
                }
                if (!retried) {
                    retried = true;
                    continue;
                }
                if (!t.moveToIndex(rc.toIndex(later, 0))) {
                    break;
                }
                retried = false;
            }
            unreadablePolls = 0;
        } catch (RuntimeException unreadable) {
            // a record Chronicle cannot parse (or a cycle deleted under the tailer): start again from the last
            // document scanned next time, and call it damage when it does not go away
            scanTailer.close();
            scanTailer = null;
            if (++unreadablePolls >= UNREADABLE_POLLS) {
                unreadablePolls = 0;
                throw new CorruptLogException(id, tail + 1, "the record after committed offset " + tail + " in "
                        + queueDir + " cannot be read: " + unreadable, unreadable);
            }
        }
        drain();
    }

    /**
     * The first cycle file in the queue directory after a cycle, from a directory listing (Chronicle's own listing in
     * {@code metadata.cq4t} may lag behind the writer's deletions and cannot be refreshed read-only).
     *
     * @param after the cycle, exclusive
     * @return the cycle, or {@link Integer#MAX_VALUE} when none
     */
    private int nextCycleFile(int after) {
        int best = Integer.MAX_VALUE;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(queueDir, "*" + SingleChronicleQueue.SUFFIX)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                int cycle;
                try {
                    cycle = cycleNames.parseCount(n.substring(0, n.length() - SingleChronicleQueue.SUFFIX.length()));
                } catch (RuntimeException notACycleFile) {
                    continue;
                }
                if (cycle > after && cycle < best) {
                    best = cycle;
                }
            }
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot list " + queueDir, e);
        }
        return best;
    }

    private void drain() {
        while (drained < scanner.accepted.size()) {
            FrameScanner.Item it = scanner.accepted.get(drained++);
            if (it.last() <= watermark) {
                continue;
            }
            if (it.index() == FrameIndex.CORRUPT) {
                corruptSeen++;
            }
            frames.add(it.first(), it.index(), it.payload(), it.frameBytes());
            framePayloadBytes += it.payload();
            framedBytes += it.frameBytes();
            if (frames.size() == 1 && it.first() <= watermark) {
                hiddenPayloadBytes = scanner.hiddenPayloadBytes;
            }
        }
        if (drained > 1024 && drained == scanner.accepted.size()) {
            scanner.accepted.clear();
            drained = 0;
        }
        tail = Math.max(tail, scanner.next - 1);
    }
}
