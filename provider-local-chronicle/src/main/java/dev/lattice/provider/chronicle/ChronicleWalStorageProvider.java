package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ReadOnlyProviderException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The embedded default WAL provider: every log is a Chronicle Queue (one directory per log) under a root directory
 * that this instance locks exclusively for its whole life.
 *
 * <p>Facade of the provider (docs/providers/chronicle.md describes the protocol: layout, frames, commit groups,
 * recovery, repair, durability, full disk, trim, checkpoints). It validates arguments, takes the log's lock and
 * hands the call to that log's {@code LogStore}; the root directory lock is {@code RootLock}'s.
 *
 * <p>A read-only instance ({@link ChronicleConfig.Builder#readOnly(boolean)}, docs/providers/chronicle.md "Read-only
 * instances") takes no lock and writes nothing: its reads go to {@code ReadOnlyLogs}, its write calls throw
 * {@link ReadOnlyProviderException}.
 *
 * <p>Thread-safe: calls on different logs run in parallel; calls on one log are serialised by that log's lock.
 * Every method but {@link #describe()} and {@link #close()} throws {@link IllegalStateException} after close.
 */
public final class ChronicleWalStorageProvider implements WalStorageProvider, CheckpointStore {

    /** The provider's name in {@link #describe()}. */
    public static final String NAME = "chronicle";

    static {
        ChronicleQuiet.properties();
    }

    /**
     * The provider implementation's version, also the on-disk format version it writes: 2 since cycle files roll
     * by size (a log's newest cycle can be ahead of the wall clock, which version 1 code must not write to).
     */
    public static final String VERSION = "2";
    /** Directory under the root holding one directory per log. */
    static final String LOGS_DIR = "logs";
    /** File under the root recording the on-disk format version and block size. */
    static final String FORMAT_FILE = "lattice-chronicle.format";
    private static final int FORMAT_MAGIC = 0x4C434647;
    private static final long FORMAT_VERSION = 2;
    /** Version 1: the same files; cycles were picked by the wall clock only. Opened, and raised to 2 by a writer. */
    private static final long FORMAT_VERSION_1 = 1;

    private final ChronicleConfig config;
    private final ProviderDescriptor descriptor;
    /** The directory lock; null for a read-only instance. */
    private final RootLock rootLock;
    private final Path root;
    private final Path logsDir;
    /** The logs of a read-only instance; null for a writer. */
    private final ReadOnlyLogs readOnly;
    private final ConcurrentHashMap<LogId, LogStore> logs = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private final RunStore runs;
    private final ChronicleRunStore runFiles;

    private ChronicleWalStorageProvider(ChronicleConfig config, RootLock rootLock, Path root) {
        this.config = config;
        this.rootLock = rootLock;
        this.root = root;
        this.logsDir = root.resolve(LOGS_DIR);
        this.readOnly = config.readOnly() ? new ReadOnlyLogs(root, logsDir, config) : null;
        this.descriptor = new ProviderDescriptor(NAME, VERSION, config.limits(), config.durability().level(),
                Set.of(ProviderFeature.DEFERRED_STAGE, ProviderFeature.PHYSICAL_BYTES, ProviderFeature.PERSISTENT,
                        ProviderFeature.REPAIR, ProviderFeature.LOCAL_CALLS, ProviderFeature.RUNS,
                        ProviderFeature.DROP));
        ChronicleRunStore files = new ChronicleRunStore(this::withLog, () -> closed, logsDir, config.durability());
        this.runFiles = files;
        this.runs = readOnly != null ? ReadOnlyLogs.runs(files) : files;
    }

    /**
     * Opens a provider on a directory, creating it if missing, and locks it for the provider's life. With a
     * read-only configuration it takes no lock and creates nothing (a missing directory reads as empty until a
     * writer creates it); the directory's recorded block size is used.
     *
     * @param config the configuration
     * @return the open provider; the caller closes it
     * @throws NullPointerException if {@code config} is null
     * @throws MissingJvmFlagsException if the JVM lacks the {@code --add-opens}/{@code --add-exports} flags Chronicle
     *     needs (the message lists them)
     * @throws DirectoryLockedException if another provider instance (another process or this JVM) holds the
     *     directory (never for a read-only configuration)
     * @throws IllegalArgumentException if the directory was created with another block size than the one
     *     explicitly configured, or has an unknown format version
     * @throws WalStorageException if the directory cannot be created, locked or read
     */
    public static ChronicleWalStorageProvider open(ChronicleConfig config) {
        Objects.requireNonNull(config, "config");
        JvmFlags.check();
        ChronicleQuiet.lowerPerfNotes();
        if (config.readOnly()) {
            // no lock, no file created: the directory may not exist yet (the writer creates it)
            Path root = config.root().toAbsolutePath().normalize();
            return new ChronicleWalStorageProvider(checkFormat(root, config), null, root);
        }
        try {
            Files.createDirectories(config.root());
        } catch (IOException e) {
            throw new WalStorageException(null, "cannot create the chronicle directory " + config.root(), e);
        }
        RootLock lock = RootLock.acquire(config.root());
        try {
            ChronicleConfig effective = checkFormat(lock.root(), config);
            try {
                LogDrop.deleteLeftovers(lock.root());
            } catch (IOException e) {
                throw new WalStorageException(null, "cannot delete the files of dropped logs under "
                        + lock.root().resolve(LogDrop.DROPPED_DIR), e);
            }
            return new ChronicleWalStorageProvider(effective, lock, lock.root());
        } catch (RuntimeException | Error e) {
            lock.close();
            throw e;
        }
    }

    private static ChronicleConfig checkFormat(Path root, ChronicleConfig config) {
        Path file = root.resolve(FORMAT_FILE);
        long[] f = SmallFiles.readRecord(null, file, FORMAT_MAGIC, 2);
        if (f == null) {
            if (!config.readOnly()) {
                SmallFiles.writeRecord(null, file, FORMAT_MAGIC, FORMAT_VERSION, config.blockSize());
            }
            return config;
        }
        if (f[0] != FORMAT_VERSION && f[0] != FORMAT_VERSION_1) {
            throw new IllegalArgumentException("chronicle directory " + root + " has format version " + f[0]
                    + "; this provider reads versions " + FORMAT_VERSION_1 + " and " + FORMAT_VERSION);
        }
        if (f[0] == FORMAT_VERSION_1 && !config.readOnly()) {
            // before the first size roll: from here on a provider that picks cycles by the wall clock must refuse
            SmallFiles.writeRecord(null, file, FORMAT_MAGIC, FORMAT_VERSION, f[1]);
        }
        if (f[1] != config.blockSize()) {
            if (config.blockSizeExplicit() && !config.readOnly()) {
                throw new IllegalArgumentException("option '" + ChronicleConfig.OPT_BLOCK_SIZE + "' is "
                        + config.blockSize() + " but chronicle directory " + root + " was created with block size "
                        + f[1] + "; the block size of a directory cannot change");
            }
            return config.withBlockSize(f[1]);
        }
        return config;
    }

    private void refuseWrite(LogId log, String operation) {
        if (readOnly != null) {
            SpiChecks.open(closed, NAME);
            throw new ReadOnlyProviderException(log, operation, NAME);
        }
    }

    /** @return the effective configuration (the block size is the directory's) */
    public ChronicleConfig config() {
        return config;
    }

    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    <T> T withLog(LogId log, Function<LogStore, T> work) {
        SpiChecks.open(closed, NAME);
        if (readOnly != null) {
            // a writer's log store may delete leftovers and create files: never in a read-only instance
            throw new ReadOnlyProviderException(log, "a write call", NAME);
        }
        Objects.requireNonNull(log, "log");
        LogStore s = logs.computeIfAbsent(log, id -> new LogStore(id, logsDir, config));
        s.lock.lock();
        while (s.isClosed() && !closed) {
            // the log was dropped while this call waited for its lock: work on its successor
            s.lock.unlock();
            s = logs.computeIfAbsent(log, id -> new LogStore(id, logsDir, config));
            s.lock.lock();
        }
        try {
            SpiChecks.open(closed || s.isClosed(), NAME);
            try {
                s.ensureLoaded();
                return work.apply(s);
            } catch (WalStorageException | UnclaimedFenceException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new WalStorageException(log, "Chronicle Queue failure: " + e, e);
            } catch (OutOfMemoryError e) {
                throw e;
            } catch (Error e) {
                // Never let an Error (e.g. the InternalError of a SIGBUS on a mapped page) escape or kill a thread.
                s.markForReload();
                if (e instanceof InternalError && String.valueOf(e.getMessage()).contains("unsafe memory access")) {
                    throw StorageErrors.diskFull(log, s.dir(), "a page of a memory-mapped file could not be "
                            + "accessed (out of space, or an I/O error); the log is reloaded from disk on the next "
                            + "call", e);
                }
                throw new WalStorageException(log, "Chronicle Queue failure: " + e, e);
            }
        } finally {
            s.lock.unlock();
        }
    }

    @Override
    public Fence claim(LogId log) {
        refuseWrite(log, "claim");
        return withLog(log, LogStore::claim);
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        refuseWrite(log, "stage");
        SpiChecks.stage(log, fence, batch, descriptor.limits());
        return withLog(log, s -> s.stage(fence, batch));
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        refuseWrite(log, "commit");
        SpiChecks.commit(log, fence, throughOffset);
        withLog(log, s -> {
            s.commit(fence, throughOffset);
            return null;
        });
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        refuseWrite(log, "abort");
        SpiChecks.abort(log, fence, staged);
        withLog(log, s -> {
            s.abort(fence, staged);
            return null;
        });
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        if (readOnly != null) {
            return readOnly.withLog(log, l -> l.read(fromExclusive, maxEntries, maxBytes));
        }
        return withLog(log, s -> s.read(fromExclusive, maxEntries, maxBytes));
    }

    @Override
    public LogState state(LogId log) {
        if (readOnly != null) {
            return readOnly.withLog(log, ReadOnlyLog::state);
        }
        return withLog(log, LogStore::state);
    }

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        refuseWrite(log, "trim");
        SpiChecks.trim(log, fence, throughInclusive);
        withLog(log, s -> {
            s.trim(fence, throughInclusive);
            return null;
        });
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        refuseWrite(log, "reconcile");
        SpiChecks.logAndFence(log, fence);
        return withLog(log, s -> s.reconcile(fence));
    }

    /**
     * Operator repair (declared as {@link ProviderFeature#REPAIR}): truncates the log at its first damaged or
     * missing committed offset and reports the lost offsets; afterwards the log opens and takes appends at
     * {@code tailAfter + 1}. The damaged queue is kept beside the new one as {@code queue.damaged-<ms>}; checkpoints
     * through offsets above the new tail are deleted. Serialised with the log's other calls.
     *
     * @throws dev.lattice.spi.FencedException if the fence is stale
     * @throws dev.lattice.spi.ProviderUnavailableException if the disk is full
     * @throws WalStorageException if the queue cannot be rebuilt or replaced
     */
    @Override
    public dev.lattice.spi.RepairReport repair(LogId log, Fence fence) {
        refuseWrite(log, "repair");
        SpiChecks.logAndFence(log, fence);
        return withLog(log, s -> s.repair(fence));
    }

    /**
     * Drops the log (docs/providers/chronicle.md "Drop"): closes its queue, renames its directory (queue, epoch,
     * trim and tail records, checkpoints, runs) out of {@code logs} in one atomic step, then deletes the files.
     *
     * @throws dev.lattice.spi.FencedException if the log exists and the fence is stale
     * @throws WalStorageException if the directory cannot be moved (nothing changed) or deleted (the log is gone)
     */
    @Override
    public void drop(LogId log, Fence fence) {
        refuseWrite(log, "drop");
        SpiChecks.logAndFence(log, fence);
        withLog(log, s -> {
            if (!Files.isDirectory(s.dir())) {
                return null;
            }
            s.checkFence(fence);
            s.close();
            logs.remove(log, s);
            runFiles.forgetLog(log);
            LogDrop.drop(log, root, s.dir());
            return null;
        });
    }

    /**
     * The run store: one file per run beside the log (docs/providers/chronicle.md "Runs").
     *
     * @return the run store; same instance on every call
     */
    @Override
    public RunStore runs() {
        return runs;
    }

    @Override
    public CheckpointStore checkpoints() {
        return this;
    }

    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        List<LogId> out = new ArrayList<>();
        for (LogId id : listLogs()) {
            if (id.tree().equals(tree)) {
                out.add(id);
            }
        }
        out.sort(null);
        return out;
    }

    @Override
    public List<String> trees() {
        Set<String> out = new TreeSet<>();
        for (LogId id : listLogs()) {
            out.add(id.tree());
        }
        return new ArrayList<>(out);
    }

    private List<LogId> listLogs() {
        SpiChecks.open(closed, NAME);
        List<LogId> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(logsDir)) {
            for (Path p : ds) {
                LogId id = LogStore.parseDirName(p.getFileName().toString());
                if (id != null && Files.isDirectory(p)) {
                    out.add(id);
                }
            }
        } catch (NoSuchFileException e) {
            return out;
        } catch (IOException e) {
            throw new WalStorageException(null, "cannot list logs in " + logsDir, e);
        }
        return out;
    }

    // ---------------------------------------------------------------- CheckpointStore

    @Override
    public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion, InputStream data) {
        refuseWrite(log, "checkpoints().publish");
        SpiChecks.publish(log, fence, throughOffset, formatVersion, data);
        Path dir = withLog(log, s -> {
            s.checkPublish(fence, throughOffset);
            s.prepareCheckpointDir();
            return s.checkpointDir();
        });
        CheckpointFiles.Written written = CheckpointFiles.writeTemp(log, dir, throughOffset, formatVersion,
                fence.epoch(), data, descriptor.limits().maxCheckpointBytes());
        try {
            return withLog(log, s -> s.publish(fence, written));
        } finally {
            try {
                Files.deleteIfExists(written.tmp());
            } catch (IOException ignored) {
                // removed when the log is next opened
            }
        }
    }

    @Override
    public Optional<CheckpointInfo> latest(LogId log) {
        if (readOnly != null) {
            return readOnly.withLog(log, ReadOnlyLog::latestCheckpoint);
        }
        return withLog(log, LogStore::latestCheckpoint);
    }

    @Override
    public InputStream open(LogId log, CheckpointInfo info) {
        Objects.requireNonNull(info, "info");
        if (readOnly != null) {
            return readOnly.withLog(log, l -> l.openCheckpoint(info));
        }
        return withLog(log, s -> s.openCheckpoint(info));
    }

    @Override
    public void deleteBefore(LogId log, long throughOffsetExclusive) {
        refuseWrite(log, "checkpoints().deleteBefore");
        withLog(log, s -> {
            s.deleteCheckpointsBefore(throughOffsetExclusive);
            return null;
        });
    }

    /**
     * Closes every log's queue, waits until Chronicle has unmapped and closed its files, drops staged batches and
     * releases the directory lock. Idempotent. Waits for calls in progress on each log to finish.
     *
     * @throws WalStorageException if closing a queue failed (everything else is still released)
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        RuntimeException failure = null;
        if (readOnly != null) {
            readOnly.close();
        }
        for (LogStore s : logs.values()) {
            s.lock.lock();
            try {
                s.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            } finally {
                s.lock.unlock();
            }
        }
        runFiles.closeMappings();
        // Chronicle unmaps and closes files on a background thread; wait for it so close() really releases them.
        BackgroundResourceReleaser.releasePendingResources();
        if (rootLock != null) {
            rootLock.close();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Inspection for tests: runs a function on a log's store under its lock.
     *
     * @param log the log
     * @param work what to run
     * @param <T> the result type
     * @return the result
     */
    <T> T inspect(LogId log, Function<LogStore, T> work) {
        return withLog(log, work);
    }

    @Override
    public String toString() {
        return "ChronicleWalStorageProvider[" + config + (closed ? ", closed" : "") + "]";
    }
}
