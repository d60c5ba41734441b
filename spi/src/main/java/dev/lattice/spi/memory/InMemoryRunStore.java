package dev.lattice.spi.memory;

import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunConflictException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.support.SpiChecks;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.zip.CRC32C;

/**
 * The in-memory provider's runs: one byte array per run in the log's {@link InMemoryLog}, put in place only once it
 * was read whole, so a failed write leaves nothing. Thread-safe: each log's runs are guarded by the log's monitor.
 */
final class InMemoryRunStore implements RunStore {

    /** Runs up to 1 GiB, read in 64 KiB blocks, no latency. */
    static final RunLimits LIMITS = new RunLimits(1L << 30, 64 << 10, 0);

    private final Function<LogId, InMemoryLog> logs;

    InMemoryRunStore(Function<LogId, InMemoryLog> logs) {
        this.logs = logs;
    }

    @Override
    public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
        SpiChecks.runWrite(log, fence, id, data, length, LIMITS);
        InMemoryLog l = logs.apply(log);
        checkFence(log, l, fence);
        byte[] bytes = new byte[(int) length];
        SpiChecks.readRunBytes(log, id, data, bytes, 0, bytes.length);
        RunInfo info = info(id, bytes);
        synchronized (l) {
            checkFence(log, l, fence);
            StoredRun existing = l.runs.get(id.value());
            if (existing != null) {
                RunInfo found = existing.info();
                if (found.lengthBytes() != length || found.crc32c() != info.crc32c()) {
                    throw new RunConflictException(log, id, found, length);
                }
                return found;
            }
            l.runs.put(id.value(), new StoredRun(bytes, info));
        }
        return info;
    }

    @Override
    public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        SpiChecks.runRead(log, id, position, dst, off, len);
        InMemoryLog l = logs.apply(log);
        StoredRun stored;
        synchronized (l) {
            stored = l.runs.get(id.value());
        }
        if (stored == null) {
            throw new RunNotFoundException(log, id);
        }
        byte[] run = stored.bytes();
        if (len == 0) {
            return 0;
        }
        if (position >= run.length) {
            return -1;
        }
        int n = (int) Math.min(len, run.length - position);
        System.arraycopy(run, (int) position, dst, off, n);
        return n;
    }

    @Override
    public void delete(LogId log, Fence fence, RunId id) {
        SpiChecks.runDelete(log, fence, id);
        InMemoryLog l = logs.apply(log);
        synchronized (l) {
            checkFence(log, l, fence);
            l.runs.remove(id.value());
        }
    }

    @Override
    public List<RunInfo> list(LogId log) {
        InMemoryLog l = logs.apply(log);
        List<RunInfo> out = new ArrayList<>();
        synchronized (l) {
            for (StoredRun r : l.runs.values()) {
                out.add(r.info());
            }
        }
        return out;
    }

    @Override
    public RunLimits limits() {
        return LIMITS;
    }

    private static void checkFence(LogId log, InMemoryLog l, Fence fence) {
        synchronized (l) {
            if (fence.epoch() < l.epoch) {
                throw new FencedException(log, fence.epoch(), l.epoch);
            }
        }
    }

    /**
     * A written run: its bytes and its info, computed once at write so that {@code list} (called beside every flush)
     * never checksums runs under the log's monitor, which writers need for every stage and commit.
     */
    record StoredRun(byte[] bytes, RunInfo info) {
    }

    private static RunInfo info(RunId id, byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes, 0, bytes.length);
        return new RunInfo(id, bytes.length, (int) c.getValue(), true);
    }
}
