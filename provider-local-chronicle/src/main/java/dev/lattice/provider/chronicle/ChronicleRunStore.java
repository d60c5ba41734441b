package dev.lattice.provider.chronicle;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunConflictException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntConsumer;
import java.util.zip.CRC32C;

/**
 * The run store of the Chronicle provider (run part of the protocol, docs/providers/chronicle.md "Runs"): one file
 * per run in the log's {@code runs} directory, {@code <id>.run}, written to {@code <id>.run.<uuid>.tmp}, forced
 * under {@code fsync} durability, and renamed atomically, so a reader sees a run whole or not at all; reads are
 * copies from memory mappings of the files kept open ({@link RunMappings}), which take no lock. Temporary leftovers
 * of a failed or crashed write are listed as incomplete and removed by {@link #delete} of their id.
 *
 * <pre>
 * header (24 bytes): int magic "LRUN", int version 1, long length, int CRC32C of the data, int CRC32C of bytes 0..19
 * data:              length bytes, verbatim
 * </pre>
 *
 * <p>Thread-safe: writes stream outside the log's lock and take it only for the fence check and the rename; reads
 * and lists take no lock.
 */
final class ChronicleRunStore implements RunStore {

    /** Directory in a log's directory holding its runs. */
    static final String RUNS_DIR = "runs";
    static final String SUFFIX = ".run";
    static final int HEADER_BYTES = 24;
    /** Bytes copied from the caller's stream per file write. */
    static final int CHUNK_BYTES = 64 * 1024;
    /**
     * The read size declared to the engine: a block read from the page cache is one {@code pread} whatever its size
     * up to a page or so, and a larger block costs the copy, the CRC check and the garbage of bytes a point read does
     * not need (docs/benchmarks.md "YCSB C and B": 4 KiB against 64 KiB blocks, same run).
     */
    static final int PREFERRED_READ_BYTES = 4096;
    static final RunLimits LIMITS = new RunLimits(1L << 30, PREFERRED_READ_BYTES, 50);
    private static final int MAGIC = 0x4C52554E;
    private static final int VERSION = 1;

    /** Runs a call on a log under its lock (the provider's {@code withLog}). */
    interface LogCalls {
        /**
         * @param log the log
         * @param work what to do with the log's store
         * @param <T> the result type
         * @return the result
         */
        <T> T withLog(LogId log, Function<LogStore, T> work);
    }

    private final LogCalls calls;
    private final BooleanSupplier closed;
    private final Path logsDir;
    private final boolean fsync;
    private final RunMappings mappings = new RunMappings(f -> runFile(f.log(), f.id()));
    /** Test hook called with k after chunk k of a run was written to its temporary file; null in production. */
    volatile IntConsumer afterChunkWritten;

    /**
     * @param calls runs calls under a log's lock
     * @param closed true once the provider is closed
     * @param logsDir the provider's {@code logs} directory
     * @param durability the durability mode (fsync forces the file and directory)
     */
    ChronicleRunStore(LogCalls calls, BooleanSupplier closed, Path logsDir, ChronicleDurability durability) {
        this.calls = calls;
        this.closed = closed;
        this.logsDir = logsDir;
        this.fsync = durability == ChronicleDurability.FSYNC;
    }

    private Path dirOf(LogId log) {
        return logsDir.resolve(LogStore.dirName(log)).resolve(RUNS_DIR);
    }

    private Path runFile(LogId log, RunId id) {
        return dirOf(log).resolve(id.value() + SUFFIX);
    }

    @Override
    public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
        SpiChecks.runWrite(log, fence, id, data, length, LIMITS);
        Path dir = calls.withLog(log, s -> {
            s.checkFence(fence);
            s.prepareCheckpointDir();
            Path d = dirOf(log);
            try {
                if (!Files.isDirectory(d)) {
                    Files.createDirectories(d);
                    SmallFiles.forceDirectory(d.getParent());
                }
            } catch (IOException e) {
                throw StorageErrors.io(log, d, "cannot create the runs directory " + d, e);
            }
            return d;
        });
        Path target = dir.resolve(id.value() + SUFFIX);
        Path tmp = dir.resolve(id.value() + SUFFIX + "." + UUID.randomUUID() + SmallFiles.TMP_SUFFIX);
        RunInfo info;
        try {
            info = writeTemp(log, id, tmp, data, length);
        } catch (RuntimeException | Error e) {
            deleteQuietly(tmp);
            throw e;
        }
        try {
            return calls.withLog(log, s -> {
                s.checkFence(fence);
                RunInfo existing = readInfo(log, id, target);
                if (existing != null) {
                    if (existing.lengthBytes() != length || existing.crc32c() != info.crc32c()) {
                        throw new RunConflictException(log, id, existing, length);
                    }
                    return existing;
                }
                try {
                    SmallFiles.moveAtomically(tmp, target);
                    if (fsync) {
                        SmallFiles.forceDirectory(dir);
                    }
                } catch (IOException e) {
                    throw StorageErrors.io(log, dir, "cannot publish run " + target, e);
                }
                return info;
            });
        } finally {
            deleteQuietly(tmp);
        }
    }

    private RunInfo writeTemp(LogId log, RunId id, Path tmp, InputStream data, long length) {
        CRC32C crc = new CRC32C();
        byte[] buf = new byte[(int) Math.min(CHUNK_BYTES, Math.max(length, 1))];
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long pos = HEADER_BYTES;
            long left = length;
            int k = 0;
            while (left > 0) {
                int n = (int) Math.min(buf.length, left);
                SpiChecks.readRunBytes(log, id, data, buf, 0, n);
                crc.update(buf, 0, n);
                writeFully(ch, ByteBuffer.wrap(buf, 0, n), pos);
                pos += n;
                left -= n;
                IntConsumer hook = afterChunkWritten;
                if (hook != null) {
                    hook.accept(k);
                }
                k++;
            }
            int c = (int) crc.getValue();
            writeFully(ch, header(length, c), 0);
            if (fsync) {
                ch.force(true);
            }
            return new RunInfo(id, length, c, true);
        } catch (UncheckedIOException e) {
            throw new WalStorageException(log, "writing run " + id + " failed: " + e.getMessage(), e.getCause());
        } catch (IOException e) {
            throw StorageErrors.io(log, tmp.getParent(), "cannot write run " + id + " to " + tmp, e);
        }
    }

    private static ByteBuffer header(long length, int crc) {
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
        h.putInt(MAGIC).putInt(VERSION).putLong(length).putInt(crc);
        CRC32C hc = new CRC32C();
        hc.update(h.array(), 0, 20);
        h.putInt((int) hc.getValue());
        return h.flip();
    }

    private static void writeFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            pos += ch.write(b, pos);
        }
    }

    /** @return the run's info from its header, null when the file does not exist */
    private static RunInfo readInfo(LogId log, RunId id, Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return parseHeader(log, id, file, ch);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new WalStorageException(log, "cannot read run file " + file, e);
        }
    }

    private static RunInfo parseHeader(LogId log, RunId id, Path file, FileChannel ch) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
        while (h.hasRemaining()) {
            if (ch.read(h, h.position()) < 0) {
                break;
            }
        }
        CRC32C hc = new CRC32C();
        hc.update(h.array(), 0, 20);
        long length = h.getLong(8);
        if (h.hasRemaining() || h.getInt(0) != MAGIC || h.getInt(4) != VERSION || h.getInt(20) != (int) hc.getValue()
                || length < 0 || ch.size() != HEADER_BYTES + length) {
            throw new dev.lattice.spi.CorruptLogException(log, -1, "run file " + file + " has a damaged header");
        }
        return new RunInfo(id, length, h.getInt(16), true);
    }

    @Override
    public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        SpiChecks.runRead(log, id, position, dst, off, len);
        SpiChecks.open(closed.getAsBoolean(), ChronicleWalStorageProvider.NAME);
        RunMappings.Mapped m;
        try {
            m = mappings.acquire(new RunMappings.RunFile(log, id));
        } catch (NoSuchFileException e) {
            throw new RunNotFoundException(log, id);
        } catch (IOException e) {
            throw new WalStorageException(log, "cannot open run file " + runFile(log, id), e);
        }
        try {
            return readAt(m, position, dst, off, len);
        } catch (InternalError e) {
            // the JDK's answer to a fault in a mapped read (SIGBUS: the file shrank under its mapping); in compiled
            // code it may surface after the read instead (docs/providers/chronicle.md "Runs")
            throw new WalStorageException(log, "cannot read run file " + runFile(log, id)
                    + ": its mapping faulted (was the file truncated?)", e);
        } finally {
            m.release();
        }
    }

    private static int readAt(RunMappings.Mapped m, long position, byte[] dst, int off, int len) {
        long length = m.fileBytes() - HEADER_BYTES;
        if (len == 0) {
            return 0;
        }
        if (position >= length) {
            return -1;
        }
        int n = (int) Math.min(len, length - position);
        m.copy(HEADER_BYTES + position, dst, off, n);
        return n;
    }

    @Override
    public void delete(LogId log, Fence fence, RunId id) {
        SpiChecks.runDelete(log, fence, id);
        calls.withLog(log, s -> {
            s.checkFence(fence);
            Path dir = dirOf(log);
            if (!Files.isDirectory(dir)) {
                return null;
            }
            try {
                boolean deleted = Files.deleteIfExists(dir.resolve(id.value() + SUFFIX));
                mappings.close(new RunMappings.RunFile(log, id));
                // leftovers of failed or crashed writes of this id (list reports them as incomplete)
                try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir,
                        p -> p.getFileName().toString().startsWith(id.value() + SUFFIX + ".")
                                && p.getFileName().toString().endsWith(SmallFiles.TMP_SUFFIX)
                                && p.getFileName().toString().lastIndexOf(SUFFIX + ".") == id.value().length())) {
                    for (Path p : ds) {
                        deleted |= Files.deleteIfExists(p);
                    }
                }
                if (deleted && fsync) {
                    SmallFiles.forceDirectory(dir);
                }
            } catch (IOException e) {
                throw StorageErrors.io(log, dir, "cannot delete run " + id, e);
            }
            return null;
        });
    }

    @Override
    public List<RunInfo> list(LogId log) {
        SpiChecks.open(closed.getAsBoolean(), ChronicleWalStorageProvider.NAME);
        Path dir = dirOf(log);
        TreeMap<RunId, RunInfo> out = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Path> temps = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.endsWith(SUFFIX)) {
                    RunInfo info = readInfo(log, new RunId(n.substring(0, n.length() - SUFFIX.length())), p);
                    if (info != null) {
                        out.put(info.id(), info);
                    }
                } else if (n.endsWith(SmallFiles.TMP_SUFFIX) && n.contains(SUFFIX + ".")) {
                    temps.add(p);
                }
            }
        } catch (IOException e) {
            throw new WalStorageException(log, "cannot list runs in " + dir, e);
        }
        for (Path p : temps) {
            String n = p.getFileName().toString();
            RunId id = new RunId(n.substring(0, n.lastIndexOf(SUFFIX + ".")));
            long size;
            try {
                size = Math.max(0, Files.size(p) - HEADER_BYTES);
            } catch (IOException e) {
                continue; // removed meanwhile
            }
            out.putIfAbsent(id, new RunInfo(id, size, 0, false));
        }
        return List.copyOf(out.values());
    }

    /**
     * Releases the mappings of a log's runs (the log was dropped).
     *
     * @param log the log
     */
    void forgetLog(LogId log) {
        mappings.closeLog(log);
    }

    /** Releases every mapping (the provider is closing). Reads after it map their files again. */
    void closeMappings() {
        mappings.close();
    }

    @Override
    public RunLimits limits() {
        return LIMITS;
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a leftover temporary file is listed as incomplete and never read
        }
    }
}
