package dev.lattice.provider.chronicle;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadOnlyProviderException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The logs of a read-only instance (read-only part of the protocol, docs/providers/chronicle.md "Read-only
 * instances"): one {@link ReadOnlyLog} per log, each call under that log's lock, and the run store view that reads
 * the writer's run files and refuses writes. Thread-safe: calls on different logs run in parallel.
 */
final class ReadOnlyLogs implements AutoCloseable {

    private final Path root;
    private final Path logsDir;
    private final ChronicleConfig config;
    private final ConcurrentHashMap<LogId, ReadOnlyLog> logs = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param root the provider's root directory
     * @param logsDir its {@code logs} directory
     * @param config the effective configuration
     */
    ReadOnlyLogs(Path root, Path logsDir, ChronicleConfig config) {
        this.root = root;
        this.logsDir = logsDir;
        this.config = config;
    }

    /**
     * Runs a call on a log's view under its lock; any runtime failure but a {@link WalStorageException} (e.g.
     * Chronicle's) becomes one.
     *
     * @param log the log
     * @param work the call
     * @param <T> the result type
     * @return the result
     * @throws IllegalStateException after {@link #close()}
     */
    <T> T withLog(LogId log, Function<ReadOnlyLog, T> work) {
        SpiChecks.open(closed, ChronicleWalStorageProvider.NAME);
        Objects.requireNonNull(log, "log");
        ReadOnlyLog l = logs.computeIfAbsent(log, id -> new ReadOnlyLog(id, root, logsDir, config));
        l.lock.lock();
        try {
            SpiChecks.open(closed, ChronicleWalStorageProvider.NAME);
            try {
                return work.apply(l);
            } catch (WalStorageException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new WalStorageException(log, "Chronicle Queue failure (read-only): " + e, e);
            }
        } finally {
            l.lock.unlock();
        }
    }

    /**
     * The run store of a read-only instance: reads and lists the writer's run files, refuses writes.
     *
     * @param files the provider's run store (only its read, list and limits are called)
     * @return the view
     */
    static RunStore runs(RunStore files) {
        return new RunStore() {
            @Override
            public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
                throw new ReadOnlyProviderException(log, "runs().write", ChronicleWalStorageProvider.NAME);
            }

            @Override
            public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
                return files.read(log, id, position, dst, off, len);
            }

            @Override
            public void delete(LogId log, Fence fence, RunId id) {
                throw new ReadOnlyProviderException(log, "runs().delete", ChronicleWalStorageProvider.NAME);
            }

            @Override
            public List<RunInfo> list(LogId log) {
                return files.list(log);
            }

            @Override
            public RunLimits limits() {
                return files.limits();
            }
        };
    }

    /** Closes every log's queue; afterwards calls throw {@link IllegalStateException}. Idempotent. */
    @Override
    public void close() {
        closed = true;
        for (ReadOnlyLog l : logs.values()) {
            l.lock.lock();
            try {
                l.close();
            } finally {
                l.lock.unlock();
            }
        }
    }
}
