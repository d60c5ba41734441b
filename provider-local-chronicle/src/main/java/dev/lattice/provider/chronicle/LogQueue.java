package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.RollingResourcesCache;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The Chronicle queue of one log (queue part of the protocol, docs/providers/chronicle.md "On-disk layout", "Frame format",
 * "Trim and retention"): opening and
 * closing the queue, its appender, tailer and space reserver, reading one frame back by Chronicle index, forcing
 * written cycle files to disk, rolling a full cycle file ({@link #rollIfFull}) and deleting trimmed cycle files.
 *
 * <p>Not thread-safe: used under the owning {@link LogStore}'s lock.
 */
final class LogQueue implements AutoCloseable {

    private final LogId id;
    private final ChronicleConfig config;
    private final Path dir;
    private final Path queueDir;
    private final CycleClock clock;

    SingleChronicleQueue queue;
    ExcerptAppender appender;
    SpaceReserver reserver;
    private RollingResourcesCache cycleNames;
    private ExcerptTailer tailer;
    private FileChannel syncChannel;
    private File syncFile;
    /** Cycle of the last frame written through this queue, {@link Integer#MIN_VALUE} before the first. */
    private int endCycle = Integer.MIN_VALUE;
    /** File position after the last frame written, in bytes. */
    private long endPosition;
    private long sizeRolls;

    /**
     * Opens (creating when absent) the queue in {@code <logDir>/queue}; a new queue's metadata file and directories
     * are forced to disk before this returns.
     *
     * @param id the log
     * @param config the provider settings
     * @param dir the log's directory
     * @param queueDir the queue directory
     * @throws WalStorageException if the queue cannot be created or forced (a full disk is a disk-full error)
     */
    LogQueue(LogId id, ChronicleConfig config, Path dir, Path queueDir) {
        this.id = id;
        this.config = config;
        this.dir = dir;
        this.queueDir = queueDir;
        this.clock = new CycleClock(config.clock());
        try {
            open();
        } catch (RuntimeException | Error e) {
            try {
                close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private void open() {
        boolean created = !Files.isDirectory(queueDir);
        reserver = new SpaceReserver(id, queueDir);
        if (created) {
            // Chronicle writes the new metadata file through a mapping: make sure it can be backed.
            reserver.checkFreeSpace(0);
        }
        queue = build(queueDir, config, clock);
        int last = queue.lastCycle();
        if (last >= 0 && last != Integer.MAX_VALUE) {
            // never before the newest cycle file, which size rolls may have put ahead of the wall clock
            clock.advanceToCycle(last, queue.epoch(), queue.rollCycle().lengthInMillis());
        }
        // Creating the appender also writes end-of-file markers into older cycles that lack them (after a crash).
        appender = queue.createAppender();
        appender.singleThreadedCheckDisabled(true);
        cycleNames = new RollingResourcesCache(queue.rollCycle(), queue.epoch(), name -> new File(queueDir.toFile(),
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

    /**
     * Builds a Chronicle queue at {@code path} with the provider's block size, roll cycle and clock (no Chronicle
     * syncing: the provider forces files itself).
     *
     * @param path the queue directory
     * @param config the provider settings
     * @return the open queue (the caller closes it)
     */
    static SingleChronicleQueue build(Path path, ChronicleConfig config) {
        return build(path, config, config.clock());
    }

    private static SingleChronicleQueue build(Path path, ChronicleConfig config, TimeProvider clock) {
        return SingleChronicleQueueBuilder.binary(path)
                .blockSize(config.blockSize())
                .rollCycle(config.rollCycle())
                .timeProvider(clock)
                .syncMode(SyncMode.NONE)
                .build();
    }

    /**
     * Records where the frame just written ends (for {@link #rollIfFull}).
     *
     * @param end the file position after the frame's last byte
     */
    void written(long end) {
        endCycle = appender.cycle();
        endPosition = end;
    }

    /**
     * Before a frame: when the last frame written went into the appender's current cycle file and that file holds
     * at least {@link ChronicleConfig#rollBytes()} bytes, moves the queue's clock to the start of the next cycle,
     * so that Chronicle writes an end-of-file marker into the full file and starts a new one with the next document.
     * Offsets and frames are unchanged; only the Chronicle index (cycle, sequence) of later frames differs.
     *
     * @return true when the next document starts a new cycle file because of this call
     * @throws WalStorageException if the clock could not be moved to a later cycle (never expected)
     */
    boolean rollIfFull() {
        if (endCycle == Integer.MIN_VALUE || endPosition < config.rollBytes() || endCycle != appender.cycle()) {
            return false;
        }
        int next = Math.max(endCycle, queue.lastCycle()) + 1;
        clock.advanceToCycle(next, queue.epoch(), queue.rollCycle().lengthInMillis());
        if (queue.cycle() < next) {
            throw new WalStorageException(id, "cannot roll " + queueDir + " to cycle " + next + " (the queue's "
                    + "clock is at cycle " + queue.cycle() + ")");
        }
        endCycle = Integer.MIN_VALUE;
        sizeRolls++;
        return true;
    }

    /**
     * Moves the queue's clock to the cycle after the newest one, because the newest cycle file is already closed
     * with an end-of-file marker (a process died after Chronicle wrote it during a size roll and before the next
     * cycle file existed; the clock, advanced at open only to the start of that cycle, would keep writing into it).
     */
    void rollPastEndOfFile() {
        int next = Math.max(appender.cycle(), queue.lastCycle()) + 1;
        clock.advanceToCycle(next, queue.epoch(), queue.rollCycle().lengthInMillis());
        endCycle = Integer.MIN_VALUE;
        sizeRolls++;
    }

    /** @return how many times this queue rolled a full cycle file (since it was opened), for tests */
    long sizeRolls() {
        return sizeRolls;
    }

    /** @return how far the queue's clock is ahead of the configured clock, in ms (size rolls), for tests */
    long clockShiftMillis() {
        return clock.shiftMillis();
    }

    /** @return the queue's tailer, created on first use */
    ExcerptTailer tailer() {
        if (tailer == null) {
            tailer = queue.createTailer();
            tailer.singleThreadedCheckDisabled(true);
        }
        return tailer;
    }

    /** Drops the tailer (after it hit an unreadable record, or before cycle files are deleted). */
    void resetTailer() {
        if (tailer != null) {
            tailer.close();
            tailer = null;
        }
    }

    /** @return the queue's roll cycle */
    RollCycle rollCycle() {
        return queue.rollCycle();
    }

    /**
     * @param cycle a cycle number
     * @return the path of that cycle's file
     */
    Path cycleFile(int cycle) {
        return cycleNames.resourceFor(cycle).path.toPath();
    }

    /**
     * Reads and checks the frame at a Chronicle index against what the frame index expects.
     *
     * @param index the Chronicle index
     * @param first the frame's expected first offset
     * @param last the frame's expected last offset
     * @param offset the offset the caller wants (for the error)
     * @return the frame bytes, intact and matching the expectation
     * @throws dev.lattice.spi.CorruptLogException if the frame is missing, damaged or not the expected one
     */
    byte[] readFrame(long index, long first, long last, long offset) {
        return FrameReads.readFrame(id, tailer(), index, first, last, offset);
    }

    /**
     * As {@link #readFrame(long, long, long, long)}, into a buffer the caller reuses for the frames of one read.
     *
     * @param into the buffer
     * @return {@code into}, holding the frame and its header
     * @throws dev.lattice.spi.CorruptLogException if the frame is missing, damaged or not the expected one
     */
    FrameReads.FrameBuffer readFrame(long index, long first, long last, long offset, FrameReads.FrameBuffer into) {
        return FrameReads.readFrame(id, tailer(), index, first, last, offset, into);
    }

    /**
     * Forces the cycle files a commit wrote (fdatasync), and the queue directory when a cycle file is new.
     *
     * @param touched the cycle files written
     * @throws WalStorageException if forcing fails
     */
    void force(List<File> touched) {
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
            if (newFile) {
                SmallFiles.forceDirectory(queueDir);
            }
        } catch (IOException e) {
            throw StorageErrors.io(id, queueDir, "cannot force the queue files to disk", e);
        }
    }

    /**
     * Deletes the cycle files older than the cycle of the oldest retained frame. The newest cycle file is always
     * kept (the appender writes there).
     *
     * @param oldestRetainedIndex Chronicle index of the oldest retained frame, or {@link Long#MAX_VALUE} when no
     *                            frame is retained
     * @return the number of files deleted
     * @throws WalStorageException if listing or deleting fails
     */
    int deleteCyclesBefore(long oldestRetainedIndex) {
        int last = queue.lastCycle();
        if (last == Integer.MIN_VALUE || last == Integer.MAX_VALUE) {
            return 0;
        }
        int cutoff = last;
        if (oldestRetainedIndex != Long.MAX_VALUE) {
            cutoff = Math.min(cutoff, queue.rollCycle().toCycle(oldestRetainedIndex));
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
        resetTailer();
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

    /**
     * Closes the tailer, appender, queue, sync channel and reserver, all of them even when one fails.
     *
     * @throws WalStorageException if any close failed (the first failure is the cause)
     */
    @Override
    public void close() {
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
        syncChannel = null;
        syncFile = null;
        if (first != null) {
            throw new WalStorageException(id, "closing the Chronicle queue failed", first);
        }
    }
}
