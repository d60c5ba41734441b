package dev.lattice.spi.memory;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.support.StagedBatchTable;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;

/**
 * The reference provider: the simplest correct implementation of the SPI contract, holding everything in an
 * {@link InMemoryStorage}. Used by the engine's tests and as the model the conformance suite is checked against.
 * Staged batches are kept in the storage, so closing and reopening over the same storage leaves them for
 * {@link #reconcile}, like a durable provider would.
 *
 * <p>Durability: {@link DurabilityLevel#MEMORY}. Thread-safe: each log is guarded by its own monitor.
 */
public final class InMemoryWalStorageProvider implements WalStorageProvider, CheckpointStore {

    /** Default {@link ProviderLimits}: 1 MiB per entry, 16 MiB and 100,000 entries per batch, 1 GiB per checkpoint. */
    public static final ProviderLimits DEFAULT_LIMITS =
            new ProviderLimits(1 << 20, 16L << 20, 100_000, 1L << 30);

    private static final String NAME = "memory";
    private static final long ENTRY_OVERHEAD_BYTES = 16;

    private final InMemoryStorage storage;
    private final ProviderDescriptor descriptor;
    private volatile boolean closed;
    private final InMemoryRunStore runs;

    /**
     * Opens a provider over a storage with the default limits.
     *
     * @param storage the storage; reopen by passing the same object again
     */
    public InMemoryWalStorageProvider(InMemoryStorage storage) {
        this(storage, DEFAULT_LIMITS);
    }

    /**
     * Opens a provider over a storage with chosen limits (e.g. small ones, to test how an engine splits batches).
     *
     * @param storage the storage
     * @param limits the limits to declare and enforce
     * @throws NullPointerException if an argument is null
     */
    public InMemoryWalStorageProvider(InMemoryStorage storage, ProviderLimits limits) {
        this.storage = Objects.requireNonNull(storage, "storage");
        this.descriptor = new ProviderDescriptor(NAME, "1", Objects.requireNonNull(limits, "limits"),
                DurabilityLevel.MEMORY, Set.of(ProviderFeature.CONCURRENT_STAGE, ProviderFeature.PHYSICAL_BYTES,
                        ProviderFeature.LOCAL_CALLS, ProviderFeature.RUNS,
                        ProviderFeature.DROP));
        this.runs = new InMemoryRunStore(this::log);
    }

    /** {@return a provider over a fresh, anonymous storage} */
    public static InMemoryWalStorageProvider fresh() {
        return new InMemoryWalStorageProvider(new InMemoryStorage());
    }

    /** {@return the storage this provider works on} */
    public InMemoryStorage storage() {
        return storage;
    }

    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    private InMemoryLog log(LogId log) {
        SpiChecks.open(closed, NAME);
        Objects.requireNonNull(log, "log");
        return storage.log(log);
    }

    private static void checkEpoch(LogId id, InMemoryLog l, Fence fence) {
        if (fence.epoch() < l.epoch || fence.epoch() <= l.droppedAtEpoch) {
            throw new FencedException(id, fence.epoch(), l.epoch);
        }
        if (fence.epoch() > l.epoch) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this storage (epoch is "
                    + l.epoch + ")");
        }
    }

    @Override
    public Fence claim(LogId log) {
        InMemoryLog l = log(log);
        synchronized (l) {
            l.epoch++;
            return new Fence(log, l.epoch);
        }
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        SpiChecks.stage(log, fence, batch, descriptor.limits());
        InMemoryLog l = log(log);
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        StagedBatch receipt = StagedBatch.of(fence, batch);
        synchronized (l) {
            checkEpoch(log, l, fence);
            // asked only for a batch at or below the tail: no lambda per stage otherwise
            BooleanSupplier committedSame = first > l.tail ? NEVER : () -> {
                StagedBatchTable.Staged<List<byte[]>> cb = first <= l.trimWatermark ? null
                        : l.committedBatches.get(first);
                return cb != null && cb.lastOffset() == last && cb.batchId().equals(batch.batchId());
            };
            l.staged.stage(log, fence, batch, l.tail, committedSame, InMemoryWalStorageProvider::copies);
            return receipt;
        }
    }

    private static final BooleanSupplier NEVER = () -> false;

    private static List<byte[]> copies(EncodedBatch batch) {
        List<byte[]> entries = batch.entries();
        if (batch.payloadsImmutable()) {
            return entries; // the caller never changes them again: keep its arrays (an unmodifiable list)
        }
        int n = entries.size();
        if (n == 1) {
            return List.of(entries.get(0).clone());
        }
        List<byte[]> copies = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            copies.add(entries.get(i).clone());
        }
        return copies;
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        SpiChecks.commit(log, fence, throughOffset);
        InMemoryLog l = log(log);
        synchronized (l) {
            checkEpoch(log, l, fence);
            if (throughOffset <= l.tail) {
                return;
            }
            List<StagedBatchTable.Staged<List<byte[]>>> chain = l.staged.commitChain(log, fence, l.tail, throughOffset);
            l.staged.remove(chain);
            for (int c = 0, cn = chain.size(); c < cn; c++) {
                StagedBatchTable.Staged<List<byte[]>> s = chain.get(c);
                l.committedBatches.put(s.firstOffset(), s);
                l.retainedBytes += InMemoryLog.bytes(s, s.firstOffset(), s.lastOffset());
                l.retainedEntries += s.payload().size();
            }
            l.tail = throughOffset;
        }
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        SpiChecks.abort(log, fence, staged);
        InMemoryLog l = log(log);
        synchronized (l) {
            checkEpoch(log, l, fence);
            l.staged.abort(staged);
        }
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        InMemoryLog l = log(log);
        synchronized (l) {
            long bound = Math.max(fromExclusive, l.trimWatermark);
            List<LogEntry> out = new ArrayList<>();
            if (bound == Long.MAX_VALUE) {
                return new ReadPage(out, l.tail);
            }
            long start = bound + 1;
            long bytes = 0;
            Long from = l.committedBatches.floorKey(start); // the batch holding start, if one does
            for (StagedBatchTable.Staged<List<byte[]>> b
                    : l.committedBatches.tailMap(from != null ? from : start, true).values()) {
                for (long off = Math.max(start, b.firstOffset()); off <= b.lastOffset(); off++) {
                    byte[] p = b.payload().get((int) (off - b.firstOffset()));
                    if (out.size() >= maxEntries || (!out.isEmpty() && bytes + p.length > maxBytes)) {
                        return new ReadPage(out, l.tail);
                    }
                    out.add(new LogEntry(off, p.clone()));
                    bytes += p.length;
                }
            }
            return new ReadPage(out, l.tail);
        }
    }

    @Override
    public LogState state(LogId log) {
        InMemoryLog l = log(log);
        synchronized (l) {
            long lowest = l.lowestRetained();
            long physical = l.retainedBytes + ENTRY_OVERHEAD_BYTES * l.retainedEntries;
            for (InMemoryLog.Checkpoint c : l.checkpoints.values()) {
                physical += c.data().length;
            }
            return new LogState(lowest, l.tail, l.trimWatermark, l.epoch, l.retainedEntries, l.retainedBytes, physical);
        }
    }

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        SpiChecks.trim(log, fence, throughInclusive);
        InMemoryLog l = log(log);
        synchronized (l) {
            checkEpoch(log, l, fence);
            if (throughInclusive <= l.trimWatermark) {
                return;
            }
            l.trimWatermark = throughInclusive; // hides the head from readers: it is removed below, off the monitor
            l.accountStraddling(throughInclusive);
            l.staged.dropStartingThrough(throughInclusive);
            if (throughInclusive > l.tail) {
                l.tail = throughInclusive;
            }
        }
        l.removeTrimmed(throughInclusive);
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        InMemoryLog l = log(log);
        synchronized (l) {
            checkEpoch(log, l, fence);
            int rolledBack = l.staged.size();
            l.staged.clear();
            return new ReconcileResult(l.tail, rolledBack, 0, 0);
        }
    }

    /** Deletes the log wholly; its epoch counter survives, so fences of the dropped log stay stale. */
    @Override
    public void drop(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        InMemoryLog l = log(log);
        synchronized (l) {
            if (!l.exists()) {
                return;
            }
            checkEpoch(log, l, fence);
            l.drop();
        }
    }

    @Override
    public RunStore runs() {
        SpiChecks.open(closed, NAME);
        return runs;
    }

    @Override
    public CheckpointStore checkpoints() {
        SpiChecks.open(closed, NAME);
        return this;
    }

    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        SpiChecks.open(closed, NAME);
        List<LogId> out = new ArrayList<>();
        storage.logs.forEach((id, l) -> {
            synchronized (l) {
                if (id.tree().equals(tree) && l.exists()) {
                    out.add(id);
                }
            }
        });
        out.sort(null);
        return out;
    }

    @Override
    public List<String> trees() {
        SpiChecks.open(closed, NAME);
        Set<String> out = new TreeSet<>();
        storage.logs.forEach((id, l) -> {
            synchronized (l) {
                if (l.exists()) {
                    out.add(id.tree());
                }
            }
        });
        return new ArrayList<>(out);
    }

    @Override
    public void close() {
        closed = true;
    }

    // ---- CheckpointStore ----

    @Override
    public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion, InputStream data) {
        SpiChecks.publish(log, fence, throughOffset, formatVersion, data);
        InMemoryLog l = log(log);
        long limit = descriptor.limits().maxCheckpointBytes();
        byte[] bytes;
        try {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            byte[] chunk = new byte[64 * 1024];
            int n;
            while ((n = data.read(chunk)) > 0) {
                if (buf.size() + (long) n > limit) {
                    throw new CheckpointTooLargeException(log, limit);
                }
                buf.write(chunk, 0, n);
            }
            bytes = buf.toByteArray();
        } catch (IOException e) {
            throw new WalStorageException(log, "reading the checkpoint stream failed; nothing was published", e);
        }
        synchronized (l) {
            checkEpoch(log, l, fence);
            if (throughOffset > l.tail) {
                throw new OffsetConflictException(log, "checkpoint through " + throughOffset
                        + " is above the committed tail " + l.tail);
            }
            if (!l.checkpoints.isEmpty() && throughOffset < l.checkpoints.lastKey()) {
                throw new OffsetConflictException(log, "checkpoint through " + throughOffset
                        + " is below the latest checkpoint's " + l.checkpoints.lastKey());
            }
            CheckpointInfo info = new CheckpointInfo(throughOffset, formatVersion, bytes.length, fence.epoch());
            l.checkpoints.put(throughOffset, new InMemoryLog.Checkpoint(info, bytes));
            return info;
        }
    }

    @Override
    public Optional<CheckpointInfo> latest(LogId log) {
        InMemoryLog l = log(log);
        synchronized (l) {
            return l.checkpoints.isEmpty() ? Optional.empty()
                    : Optional.of(l.checkpoints.lastEntry().getValue().info());
        }
    }

    @Override
    public InputStream open(LogId log, CheckpointInfo info) {
        Objects.requireNonNull(info, "info");
        InMemoryLog l = log(log);
        synchronized (l) {
            InMemoryLog.Checkpoint c = l.checkpoints.get(info.throughOffset());
            if (c == null || !c.info().equals(info)) {
                throw new WalStorageException(log, "checkpoint through " + info.throughOffset() + " no longer exists");
            }
            return new ByteArrayInputStream(c.data());
        }
    }

    @Override
    public void deleteBefore(LogId log, long throughOffsetExclusive) {
        InMemoryLog l = log(log);
        synchronized (l) {
            if (l.checkpoints.isEmpty()) {
                return;
            }
            long keep = Math.min(throughOffsetExclusive, l.checkpoints.lastKey());
            l.checkpoints.headMap(keep, false).clear();
        }
    }
}
