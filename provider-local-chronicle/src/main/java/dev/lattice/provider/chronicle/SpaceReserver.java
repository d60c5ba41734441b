package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Makes sure the file space a commit writes into through Chronicle's memory mapping is really allocated before the
 * bytes go there. A store into a mapped page the file system cannot back (full disk, quota, a sparse file on tmpfs)
 * raises SIGBUS, which the JVM turns into an asynchronous {@code InternalError} that can surface after the write
 * "succeeded": the frame would be acknowledged without being in the file. So before each frame the current cycle
 * file is allocated ahead of Chronicle's write position by writing zeros through a {@link FileChannel} at that
 * position (the region beyond the write position holds nothing yet), {@link #CHUNK_BYTES} at a time; a full disk
 * then fails that {@code write} with ENOSPC, a plain {@link IOException}, before anything of the frame is written.
 *
 * <p>Where the write position is not known yet (the first write after open, a roll to a new cycle file, which
 * Chronicle creates and writes its header and index pages into itself), the free space of the file system is checked
 * first ({@link #NEW_FILE_BYTES} plus the frame), and the region is reserved inside the document, before the frame's
 * bytes are written.
 *
 * <p>Reserving inline cost a lone writer about 6 % of its put throughput and put a pause of tens of microseconds
 * (128 KiB of zeros) into every 128th 1 KiB put (docs/benchmarks.md, "one-thread page-cache puts"). So once a
 * reservation exists in the current file and less than half a chunk of it is left beyond the next frame's need, a
 * background thread extends it to that need plus a chunk (the end the writer's own next reservation would have
 * chosen, so the space reserved ahead of the write position stays at most {@code SLACK_BYTES + chunk}, as before);
 * the writer reserves inline only when the background is behind (or failed: a full disk is then reported by the
 * writer's own reservation, as before). The background writes only at and above {@code reservedEnd}, which the
 * writer never writes past, and publishes the new end after its write returned; the two never touch the same
 * bytes.
 *
 * <p>Not thread-safe: used under its log's lock (the background reservation synchronises with it internally).
 */
final class SpaceReserver implements AutoCloseable {

    /** How the space is reserved; {@link #ZERO_WRITE} in production, the others exist to measure against. */
    enum Mode {
        /** Writes zeros through a FileChannel at the region beyond the write position. */
        ZERO_WRITE,
        /** {@code fallocate(2)} through Chronicle's bundled JNR binding. */
        FALLOCATE,
        /** Nothing reserved (the behaviour before; SIGBUS on a full tmpfs): for measurements only. */
        NONE
    }

    /** The mode for new reservers; a test hook to measure the alternatives. */
    static volatile Mode mode = Mode.ZERO_WRITE;
    /** Bytes reserved beyond what the next frame needs, at a time: 128 KiB (1 MiB measured no faster). */
    static final long CHUNK_BYTES = 128L << 10;
    /** The chunk for new reservers; a test hook to measure other sizes. */
    static volatile long chunkBytes = CHUNK_BYTES;
    /**
     * Room for what Chronicle itself writes around a document: headers and an index array (at most 4,096 slots of
     * 8 bytes, 32 KiB, for every roll cycle of 2026.4), 128 KiB.
     */
    static final long SLACK_BYTES = 128L << 10;
    /** Free space required before Chronicle may create or open a cycle file and write its first frame (1 MiB). */
    static final long NEW_FILE_BYTES = 1L << 20;

    /** Whether new reservers reserve ahead in the background; a test hook to measure and test the inline path. */
    static volatile boolean background = true;

    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 << 10).asReadOnlyBuffer();
    /** One daemon thread for every reserver of the JVM, gone after 10 s without work. */
    private static final java.util.concurrent.ThreadPoolExecutor AHEAD = aheadExecutor();

    private final LogId log;
    private final Path dir;
    private final Mode myMode = mode;
    private final long chunk = chunkBytes;
    private final boolean ahead = background;
    /** Guards the channel, the descriptor and the reservation against the background reservation. */
    private final Object io = new Object();
    private FileStore store;
    private File file;
    private FileChannel channel;
    private int fd = -1;
    /** Written under {@link #io}; read by the writer without it. */
    private volatile long reservedEnd;
    private long lastEnd = -1;
    private volatile long reservedBytes;
    /** A background reservation is queued or running (set by the writer, cleared by the background). */
    private final java.util.concurrent.atomic.AtomicBoolean aheadPending = new java.util.concurrent.atomic.AtomicBoolean();
    /** The last background reservation failed (full disk?): none is queued until an inline one succeeds. */
    private volatile boolean aheadFailed;
    /** Counts switches and closes: a background reservation queued before one of them does nothing. */
    private volatile long generation;

    /**
     * @param log the log, for errors
     * @param dir the queue directory, for errors and the free-space check
     */
    SpaceReserver(LogId log, Path dir) {
        this.log = log;
        this.dir = dir;
    }

    /**
     * Checks that the file system has room for a new cycle file (or the queue's metadata file) and a frame.
     *
     * @param frameBytes the frame about to be written, in bytes
     * @throws dev.lattice.spi.ProviderUnavailableException if fewer than {@code NEW_FILE_BYTES + frameBytes} bytes
     *     are usable (disk full)
     */
    void checkFreeSpace(long frameBytes) {
        if (myMode == Mode.NONE) {
            return;
        }
        long need = NEW_FILE_BYTES + frameBytes;
        long usable;
        try {
            if (store == null) {
                store = java.nio.file.Files.getFileStore(existing(dir));
            }
            usable = store.getUsableSpace();
        } catch (IOException e) {
            return; // cannot tell: the reservation inside the document still fails cleanly on ENOSPC
        }
        if (usable < need) {
            throw StorageErrors.diskFull(log, dir, "a new Chronicle file and a " + frameBytes + "-byte frame need "
                    + need + " free bytes", null);
        }
    }

    private static Path existing(Path p) {
        Path q = p;
        while (q != null && !java.nio.file.Files.exists(q)) {
            q = q.getParent();
        }
        return q == null ? p : q;
    }

    /**
     * Before Chronicle begins a document: reserves ahead of the end of the last document written through this
     * reserver when the document goes into the same file, else (first write, or a roll to a new file whose header
     * Chronicle writes itself) checks the free space of the file system.
     *
     * @param current the appender's current cycle file, or null when it has none open
     * @param rolling true when the next document starts a new cycle file
     * @param bytes the document's size, in bytes
     * @throws dev.lattice.spi.ProviderUnavailableException if the disk is full
     */
    void beforeDocument(File current, boolean rolling, long bytes) {
        if (!rolling && current != null && current.equals(file) && lastEnd >= 0) {
            ensure(current, lastEnd, bytes);
        } else {
            checkFreeSpace(bytes);
        }
    }

    /**
     * Records where the document just written ends, the base of the next reservation in this file. Only positions
     * this reserver saw inside a document are used: Chronicle's own idea of its write position (e.g. a reopened
     * appender's) can point at the last document's header, and zeros written there would destroy it.
     *
     * @param end the file position after the document's last byte
     */
    void written(long end) {
        lastEnd = end;
    }

    /**
     * Makes sure bytes {@code from .. from + bytes + SLACK_BYTES} of a cycle file are allocated. Zeros are written
     * only from {@code max(from, end of the previous reservation)}: callers pass a position nothing was written at
     * (the start of the document being written, or the end of the last one written through this reserver), and
     * Chronicle never writes past a reservation (each leaves {@link #SLACK_BYTES} for its headers and index arrays).
     *
     * @param f the cycle file the appender writes
     * @param from the file position where writing starts (Chronicle's write position), in bytes
     * @param bytes how many bytes the caller writes there
     * @throws dev.lattice.spi.ProviderUnavailableException if the file system is full
     * @throws WalStorageException if the file cannot be opened or written for another reason
     */
    void ensure(File f, long from, long bytes) {
        if (myMode == Mode.NONE) {
            return;
        }
        if (!f.equals(file)) {
            switchTo(f);
        }
        long need = from + bytes + SLACK_BYTES;
        if (need > reservedEnd) {
            synchronized (io) {
                long start = Math.max(from, reservedEnd);
                long end = need + chunk;
                if (start < end && need > reservedEnd) {
                    try {
                        allocate(start, end);
                    } catch (IOException e) {
                        // What was allocated stays allocated; only [start, reservedEnd) counts as reserved.
                        throw StorageErrors.io(log, dir, "cannot reserve " + (end - start) + " bytes in " + f, e);
                    }
                    reservedBytes += end - start;
                    reservedEnd = end;
                    aheadFailed = false;
                }
            }
        }
        if (ahead && !aheadFailed && reservedEnd - need < chunk / 2 && aheadPending.compareAndSet(false, true)) {
            long gen = generation;
            long target = need + chunk;
            try {
                AHEAD.execute(() -> reserveAhead(gen, target));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                aheadPending.set(false);
            }
        }
    }

    /** Background: extends the reservation to {@code end}, unless the file changed meanwhile or it is there. */
    private void reserveAhead(long gen, long end) {
        try {
            synchronized (io) {
                long start = reservedEnd;
                if (gen != generation || file == null || end <= start) {
                    return;
                }
                try {
                    allocate(start, end);
                } catch (IOException | RuntimeException e) {
                    aheadFailed = true; // the writer's inline reservation reports it, typed, before any frame byte
                    return;
                }
                reservedBytes += end - start;
                reservedEnd = end;
            }
        } finally {
            aheadPending.set(false);
        }
    }

    /** Under {@link #io}: allocates {@code [start, end)} of the current file (zeros or {@code fallocate}). */
    private void allocate(long start, long end) throws IOException {
        if (myMode == Mode.FALLOCATE) {
            int rc = net.openhft.posix.PosixAPI.posix().fallocate(fd, 0, start, end - start);
            if (rc != 0) {
                throw new IOException("fallocate returned " + rc + " (No space left on device assumed)");
            }
        } else {
            long pos = start;
            while (pos < end) {
                ByteBuffer z = ZEROS.duplicate();
                z.limit((int) Math.min(z.capacity(), end - pos));
                pos += channel.write(z, pos);
            }
        }
    }

    private static java.util.concurrent.ThreadPoolExecutor aheadExecutor() {
        java.util.concurrent.ThreadPoolExecutor e = new java.util.concurrent.ThreadPoolExecutor(1, 1, 10,
                java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "lattice-chronicle-reserve");
                    t.setDaemon(true);
                    return t;
                });
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    private void switchTo(File f) {
        close();
        synchronized (io) {
            switchLocked(f);
        }
    }

    private void switchLocked(File f) {
        try {
            if (myMode == Mode.FALLOCATE) {
                fd = net.openhft.posix.PosixAPI.posix().open(f.getPath(), 2 /* O_RDWR */, 0);
                if (fd < 0) {
                    throw new IOException("open returned " + fd);
                }
            } else {
                channel = FileChannel.open(f.toPath(), StandardOpenOption.READ, StandardOpenOption.WRITE);
            }
        } catch (IOException e) {
            throw new WalStorageException(log, "cannot open " + f + " to reserve space", e);
        }
        file = f;
        reservedEnd = 0;
        lastEnd = -1;
    }

    /**
     * The channel this reserver holds on a cycle file, so a commit in fsync mode forces through it instead of
     * opening another descriptor.
     *
     * @param f a cycle file
     * @return the open channel on {@code f}, or null when it holds none on that file
     */
    FileChannel channelFor(File f) {
        return f.equals(file) ? channel : null;
    }

    /** @return the end of the reservation in the current file (exclusive), 0 when none; for tests */
    long reservedEnd() {
        return reservedEnd;
    }

    /** @return bytes reserved so far, for tests and measurements */
    long reservedBytes() {
        return reservedBytes;
    }

    /** Closes the channel on the current cycle file. Idempotent. */
    @Override
    public void close() {
        synchronized (io) {
            generation++;
            closeLocked();
        }
    }

    private void closeLocked() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing was written through it that needs flushing
            }
            channel = null;
        }
        if (fd >= 0) {
            net.openhft.posix.PosixAPI.posix().close(fd);
            fd = -1;
        }
        file = null;
        reservedEnd = 0;
        lastEnd = -1;
    }
}
