package dev.lattice.provider.azure.blob;

import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.BlobServiceClient;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.CorruptLogException;
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
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.RepairReport;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.provider.azure.blob.Frames.Frame;
import dev.lattice.provider.azure.blob.Manifest.CheckpointRef;
import dev.lattice.provider.azure.blob.Manifest.LogData;
import dev.lattice.provider.azure.blob.Manifest.SegmentRef;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import java.util.zip.CRC32C;

/**
 * A Lattice WAL provider on Azure Blob Storage (scheme {@code azure-blob}).
 *
 * <h2>Layout (per log, under {@code <prefix><tree>/<partition:4>/})</h2>
 * <ul>
 *   <li>{@code manifest}: a small block blob, the commit point and the fence. It holds the epoch, the committed
 *       tail, the trim watermark, the segment list with each segment's committed length, the <em>inline tail</em>
 *       (the newest committed frames, up to {@link AzureBlobConfig#inlineTailBytes()}) and the checkpoint list. Every
 *       change is one upload conditional on the previous ETag.</li>
 *   <li>{@code seg-<firstOffset>-e<epoch>-<random>}: append blobs holding blocks of frames ({@link Frames}). Readers
 *       read a segment only up to the committed length the manifest records.</li>
 *   <li>{@code ckpt-<through+1>-e<epoch>-<random>}: block blobs, one immutable blob per published checkpoint.</li>
 * </ul>
 *
 * <h2>Protocol</h2>
 * {@code stage} validates and keeps the batch in memory, encoded as a frame ({@link ProviderFeature#DEFERRED_STAGE}).
 * {@code commit} adds the covered frames to the manifest's inline tail when they fit (one request); otherwise it
 * appends the inline tail plus the new frames as one block (or several, each at most
 * {@link AzureBlobConfig#maxBlockBytes()}) to the active segment, each append conditional on the expected append
 * position, and then uploads the manifest with the new committed length (two requests). A refused append position
 * whose bytes are this writer's own frames (a lost response) counts as landed; any other bytes there belong to a
 * writer that crashed or was fenced, so the provider re-checks its epoch and rolls to a new segment, never reading
 * them. Segments roll at {@link AzureBlobConfig#maxBlocksPerSegment()} blocks or
 * {@link AzureBlobConfig#maxSegmentBytes()} bytes.
 *
 * <p>Thread-safe: changes of one log (claim, commit, trim, reconcile, the manifest step of a publish) are serialised
 * by a per-log lock; a stage only touches memory (the log's staged batches, under their own monitor), so it never
 * waits for a commit's round trip; reads take no lock and always check the manifest (a conditional read, answered
 * "not modified" without a body when nothing changed).
 */
public final class AzureBlobWalStorageProvider implements WalStorageProvider, CheckpointStore {

    /** The provider's name in {@link #describe()}. */
    public static final String NAME = "azure-blob";
    /** Implementation version (also the layout version). */
    public static final String VERSION = "1";

    private static final System.Logger LOG = System.getLogger(AzureBlobWalStorageProvider.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int MAX_CAS_ATTEMPTS = 16;
    private static final int MAX_APPEND_ATTEMPTS = 8;

    private final BlobGateway blobs;
    private final AzureBlobConfig config;
    private final ProviderDescriptor descriptor;
    private final AzureBlobStats stats = new AzureBlobStats();
    private final SegmentCache cache;
    private final ConcurrentHashMap<LogId, LogHandle> handles = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile StepHook hook = StepHook.NONE;

    /**
     * Opens a provider over a container of a service client. The container is created on the first write when
     * missing (unless {@link AzureBlobConfig#createContainer()} is off). No request is made here.
     *
     * @param client the service client (its credential, retry policy and timeouts apply); not closed by the provider
     * @param config the settings
     * @return the provider
     * @throws NullPointerException if an argument is null
     */
    public static AzureBlobWalStorageProvider open(BlobServiceClient client, AzureBlobConfig config) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(config, "config");
        return new AzureBlobWalStorageProvider(client.getBlobContainerClient(config.container()), config);
    }

    AzureBlobWalStorageProvider(BlobContainerClient container, AzureBlobConfig config) {
        this.config = config;
        this.blobs = new BlobGateway(container, stats, config.createContainer());
        this.cache = new SegmentCache(config.cacheBytes(), config.readChunkBytes(), stats);
        this.descriptor = new ProviderDescriptor(NAME, VERSION, config.limits(), DurabilityLevel.REPLICATED,
                Set.of(ProviderFeature.DEFERRED_STAGE, ProviderFeature.CONCURRENT_STAGE,
                        ProviderFeature.PHYSICAL_BYTES, ProviderFeature.PERSISTENT, ProviderFeature.REPAIR),
                config.replayCostModel());
    }

    /** @return the settings */
    public AzureBlobConfig config() {
        return config;
    }

    /** @return the request, byte and block counters of this instance */
    public AzureBlobStats stats() {
        return stats;
    }

    // ------------------------------------------------------------------ test hooks

    /** Points in the protocol where tests inject crashes (package-private). */
    enum Step {
        /** A new segment blob was created, before anything was appended to it. */
        SEGMENT_CREATED,
        /** A block was appended, before the manifest records it. */
        BLOCK_APPENDED,
        /** Right before a manifest upload. */
        BEFORE_MANIFEST_WRITE,
        /** A manifest upload succeeded, before this instance remembers it (an exception here is a lost response). */
        MANIFEST_WRITTEN,
        /** A checkpoint blob was uploaded, before the manifest names it. */
        CHECKPOINT_UPLOADED
    }

    /** Called at each {@link Step}; an exception thrown here propagates out of the SPI call (a simulated crash). */
    @FunctionalInterface
    interface StepHook {
        /** Does nothing. */
        StepHook NONE = (step, log) -> { };

        /**
         * @param step where the protocol is
         * @param log the log
         */
        void at(Step step, LogId log);
    }

    /** Sets the step hook (tests only). */
    void stepHook(StepHook h) {
        this.hook = Objects.requireNonNull(h, "hook");
    }

    // ------------------------------------------------------------------ per-log state

    /** A manifest as last seen, with its ETag; {@code m == null} means the log has no manifest (never claimed). */
    private record Snap(Manifest m, String etag, int size) {
        long epoch() {
            return m == null ? 0 : m.epoch();
        }
    }

    /** A batch staged in memory, already encoded (so the caller's arrays are not kept). */
    private record Staged(long first, long last, long epoch, BatchId id, Frame frame) {
    }

    private final class LogHandle {
        final LogId id;
        final String dir;
        final String manifestName;
        final ReentrantLock lock = new ReentrantLock();
        final AtomicReference<Snap> current = new AtomicReference<>();
        /** Staged batches by first offset; guarded by its own monitor (stages do not take {@link #lock}). */
        final TreeMap<Long, Staged> staged = new TreeMap<>();
        /** Segments found to hold bytes past their committed length: never appended to again; guarded by lock. */
        final Set<String> dirty = new HashSet<>();
        /** Blobs being uploaded outside the lock (checkpoints): the sweep leaves them alone. */
        final Set<String> inflight = ConcurrentHashMap.newKeySet();

        LogHandle(LogId id) {
            this.id = id;
            this.dir = config.prefix() + id.tree() + "/" + String.format("%04d", id.partition());
            this.manifestName = dir + "/manifest";
        }
    }

    private LogHandle handle(LogId log) {
        checkOpen();
        Objects.requireNonNull(log, "log");
        return handles.computeIfAbsent(log, LogHandle::new);
    }

    private void checkOpen() {
        SpiChecks.open(closed, NAME);
    }

    /** Replaces the cached manifest unless a newer generation is cached already. */
    private static void remember(LogHandle h, Snap s) {
        while (true) {
            Snap cur = h.current.get();
            if (cur != null && cur.m != null && s.m != null && cur.m.generation() > s.m.generation()) {
                return;
            }
            if (h.current.compareAndSet(cur, s)) {
                return;
            }
        }
    }

    /** Reads the manifest (conditionally on the cached ETag) and caches it. */
    private Snap fresh(LogHandle h) {
        Snap cur = h.current.get();
        String etag = cur != null && cur.m != null ? cur.etag : null;
        BlobGateway.ManifestRead r = blobs.getManifest(h.id, h.manifestName, etag);
        if (r.notModified()) {
            return cur;
        }
        Snap s = r.absent() ? new Snap(null, null, 0)
                : new Snap(Manifest.decode(h.id, r.bytes()), r.etag(), r.bytes().length);
        checkNotBehind(h.id, cur, s);
        remember(h, s);
        return s;
    }

    /**
     * The committed tail never goes back: a manifest that vanished after this instance saw one, or a newer
     * generation with a lower tail, was replaced outside the protocol (a restore, a manual edit).
     */
    private static void checkNotBehind(LogId log, Snap before, Snap now) {
        if (before == null || before.m == null) {
            return;
        }
        long tail = before.m.data().tail();
        if (now.m == null) {
            throw new CorruptLogException(log, before.m.data().watermark() + 1, "the manifest (committed tail " + tail
                    + ") no longer exists: the log was deleted or replaced outside this provider");
        }
        if (now.m.generation() > before.m.generation() && now.m.data().tail() < tail) {
            throw new CorruptLogException(log, now.m.data().tail() + 1, "the committed tail went back from " + tail
                    + " to " + now.m.data().tail() + " (manifest generation " + before.m.generation() + " -> "
                    + now.m.generation() + "): the manifest was replaced outside this provider");
        }
    }

    private Snap known(LogHandle h) {
        Snap cur = h.current.get();
        return cur != null ? cur : fresh(h);
    }

    private static void checkFence(LogId log, Fence fence, long epoch) {
        if (fence.epoch() < epoch) {
            throw new FencedException(log, fence.epoch(), epoch);
        }
        if (fence.epoch() > epoch) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this storage (the log's epoch"
                    + " is " + epoch + ")");
        }
    }

    /** The cached manifest, re-read when the fence is newer than it; fence-checked. Caller holds the lock. */
    private Snap fenced(LogHandle h, Fence fence) {
        Snap s = known(h);
        if (fence.epoch() > s.epoch()) {
            s = fresh(h);
        }
        checkFence(h.id, fence, s.epoch());
        return s;
    }

    /** Thrown by a mutation when the manifest changed under it in a way it cannot rebase onto: start over. */
    private static final class Restart extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final Restart INSTANCE = new Restart();

        private Restart() {
            super(null, null, false, false);
        }
    }

    /**
     * Writes a new manifest computed from the current one, under its ETag. On a lost race it re-reads the manifest:
     * when it carries this write's token the write had landed (a lost response); otherwise the mutation is applied
     * again to the new manifest (it re-checks the fence and whatever else it depends on).
     *
     * @param h the log (lock held)
     * @param base the manifest the caller read
     * @param mutate computes the new manifest (or returns its argument unchanged: nothing to write)
     * @return the manifest now stored
     */
    private Snap casWrite(LogHandle h, Snap base, UnaryOperator<Manifest> mutate) {
        Snap cur = base;
        for (int attempt = 1; ; attempt++) {
            Manifest computed = mutate.apply(cur.m);
            if (computed == cur.m) {
                return cur;
            }
            Manifest next = computed.nextWrite();
            byte[] bytes = next.encode();
            hook.at(Step.BEFORE_MANIFEST_WRITE, h.id);
            try {
                String etag = blobs.putManifest(h.id, h.manifestName, bytes, cur.m == null ? null : cur.etag);
                hook.at(Step.MANIFEST_WRITTEN, h.id);
                Snap s = new Snap(next, etag, bytes.length);
                remember(h, s);
                return s;
            } catch (BlobGateway.ConditionFailed e) {
                Snap f = fresh(h);
                if (next.sameWrite(f.m)) {
                    return f;
                }
                if (attempt >= MAX_CAS_ATTEMPTS) {
                    throw new ProviderUnavailableException(h.id, "the manifest kept changing under " + attempt
                            + " conditional writes", e);
                }
                cur = f;
            } catch (ProviderUnavailableException e) {
                h.current.set(null); // outcome unknown: read it again next time
                throw e;
            }
        }
    }

    // ------------------------------------------------------------------ SPI: describe, claim

    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    @Override
    public Fence claim(LogId log) {
        LogHandle h = handle(log);
        h.lock.lock();
        try {
            Snap s = casWrite(h, known(h), m -> m == null ? Manifest.first() : m.withEpoch(m.epoch() + 1));
            return new Fence(log, s.m.epoch());
        } finally {
            h.lock.unlock();
        }
    }

    // ------------------------------------------------------------------ stage, commit, abort

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        SpiChecks.stage(log, fence, batch, descriptor.limits());
        LogHandle h = handle(log);
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        StagedBatch receipt = StagedBatch.of(fence, batch);
        // No log lock: a stage only reads the cached manifest and touches memory, so it never waits for a commit's
        // round trip (the staged map has its own monitor).
        Snap s = fenced(h, fence);
        LogData d = s.m.data();
        if (first <= d.tail()) {
            if (first <= d.watermark()) {
                throw new OffsetConflictException(log, "batch " + first + ".." + last + " overlaps trimmed offsets"
                        + " (trim watermark " + d.watermark() + ")");
            }
            Frame committed;
            try {
                committed = findFrame(log, d, first);
            } catch (BlobGateway.Gone e) {
                throw vanished(h, fence, e);
            }
            if (committed != null && committed.lastOffset() == last && committed.id().equals(batch.batchId())) {
                return receipt;
            }
            throw new OffsetConflictException(log, "batch " + first + ".." + last + " (id " + batch.batchId()
                    + ") overlaps committed offsets (committed tail " + d.tail() + ")");
        }
        Frame frame = Frames.encode(fence.epoch(), batch.batchId(), first, batch.entries());
        synchronized (h.staged) {
            List<Long> older = new ArrayList<>();
            Map.Entry<Long, Staged> below = h.staged.floorEntry(first);
            List<Staged> overlapping = new ArrayList<>();
            if (below != null && below.getValue().last() >= first) {
                overlapping.add(below.getValue());
            }
            overlapping.addAll(h.staged.subMap(first, false, last, true).values());
            for (Staged st : overlapping) {
                if (st.epoch() < fence.epoch()) {
                    older.add(st.first());
                } else if (st.epoch() > fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), st.epoch());
                } else if (st.first() == first && st.last() == last && st.id().equals(batch.batchId())) {
                    return receipt;
                } else {
                    throw new OffsetConflictException(log, "batch " + first + ".." + last + " (id " + batch.batchId()
                            + ") overlaps staged batch " + st.first() + ".." + st.last() + " (id " + st.id() + ")");
                }
            }
            older.forEach(h.staged::remove);
            h.staged.put(first, new Staged(first, last, fence.epoch(), batch.batchId(), frame));
            return receipt;
        }
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        SpiChecks.commit(log, fence, throughOffset);
        LogHandle h = handle(log);
        h.lock.lock();
        try {
            Snap s = fenced(h, fence);
            for (int attempt = 1; ; attempt++) {
                LogData d = s.m.data();
                if (throughOffset <= d.tail()) {
                    s = fresh(h);
                    checkFence(log, fence, s.epoch());
                    if (throughOffset <= s.m.data().tail()) {
                        synchronized (h.staged) {
                            h.staged.headMap(s.m.data().tail(), true).clear();
                        }
                        return;
                    }
                    continue;
                }
                List<Staged> chain;
                try {
                    chain = chain(h, fence, d.tail(), throughOffset);
                } catch (OffsetConflictException e) {
                    // a stale writer (whose cached manifest is old) must hear that it is fenced, not about offsets
                    checkFence(log, fence, fresh(h).epoch());
                    throw e;
                }
                try {
                    writeCommit(h, fence, s, chain, throughOffset);
                    synchronized (h.staged) {
                        for (Staged st : chain) {
                            h.staged.remove(st.first(), st);
                        }
                    }
                    return;
                } catch (Restart r) {
                    if (attempt >= MAX_CAS_ATTEMPTS) {
                        throw new ProviderUnavailableException(log, "the manifest kept changing during commit", null);
                    }
                    s = fresh(h);
                    checkFence(log, fence, s.epoch());
                }
            }
        } finally {
            h.lock.unlock();
        }
    }

    /** The staged batches of this epoch covering {@code tail+1 .. through}, in order; conflict when one is missing. */
    private static List<Staged> chain(LogHandle h, Fence fence, long tail, long through) {
        synchronized (h.staged) {
            return chainLocked(h, fence, tail, through);
        }
    }

    private static List<Staged> chainLocked(LogHandle h, Fence fence, long tail, long through) {
        List<Staged> chain = new ArrayList<>();
        long pos = tail + 1;
        while (pos <= through) {
            Staged st = h.staged.get(pos);
            if (st == null || st.epoch() != fence.epoch()) {
                throw new OffsetConflictException(h.id, "cannot commit through " + through + ": offset " + pos
                        + " is not staged under epoch " + fence.epoch());
            }
            if (st.last() > through) {
                throw new OffsetConflictException(h.id, "cannot commit through " + through
                        + ": it falls inside staged batch " + st.first() + ".." + st.last());
            }
            chain.add(st);
            pos = st.last() + 1;
        }
        return chain;
    }

    private void writeCommit(LogHandle h, Fence fence, Snap s, List<Staged> chain, long through) {
        LogData d = s.m.data();
        List<Frame> frames = new ArrayList<>(chain.size());
        long newBytes = 0;
        long newPayload = 0;
        for (Staged st : chain) {
            frames.add(st.frame());
            newBytes += st.frame().bytes().length;
            newPayload += st.frame().payloadBytes();
        }
        LogData next;
        if (config.inlineTailBytes() > 0 && d.inline().length + newBytes <= config.inlineTailBytes()
                && d.inlineBatches() + frames.size() <= config.inlineTailBatches()) {
            byte[] inline = Arrays.copyOf(d.inline(), (int) (d.inline().length + newBytes));
            int pos = d.inline().length;
            for (Frame f : frames) {
                System.arraycopy(f.bytes(), 0, inline, pos, f.bytes().length);
                pos += f.bytes().length;
            }
            next = new LogData(through, d.watermark(), d.segments(), inline, d.inlineBatches() + frames.size(),
                    d.inlinePayloadBytes() + newPayload);
        } else {
            List<Frame> all = new ArrayList<>(d.inlineFrames(h.id));
            all.addAll(frames);
            List<SegmentRef> segs = appendFrames(h, fence, d, all);
            next = new LogData(through, d.watermark(), segs, new byte[0], 0, 0);
        }
        LogData newData = next;
        casWrite(h, s, m -> {
            checkFenceOf(h.id, fence, m);
            if (m.data().tail() >= through) {
                return m; // our earlier attempt landed (its response was lost)
            }
            if (!m.data().equals(d)) {
                throw Restart.INSTANCE;
            }
            return m.withData(newData);
        });
    }

    /** Fence check against a manifest read during a conditional-write retry. */
    private static void checkFenceOf(LogId log, Fence fence, Manifest m) {
        long epoch = m == null ? 0 : m.epoch();
        if (epoch != fence.epoch()) {
            if (epoch > fence.epoch()) {
                throw new FencedException(log, fence.epoch(), epoch);
            }
            throw new WalStorageException(log, "the log's epoch went back from " + fence.epoch() + " to " + epoch
                    + " (manifest replaced outside this provider?)");
        }
    }

    /**
     * Appends frames to the log's segments as blocks, each conditional on the expected append position; returns the
     * segment list that describes them. Caller holds the lock.
     */
    private List<SegmentRef> appendFrames(LogHandle h, Fence fence, LogData base, List<Frame> frames) {
        LogId log = h.id;
        List<SegmentRef> segs = new ArrayList<>(base.segments());
        int idx = 0;
        int failures = 0;
        while (idx < frames.size()) {
            SegmentRef active = segs.isEmpty() ? null : segs.get(segs.size() - 1);
            List<Frame> blockFrames = nextBlock(frames, idx);
            byte[] block = Frames.block(blockFrames);
            if (active == null || h.dirty.contains(active.name())
                    || active.blocks() + 1 > config.maxBlocksPerSegment()
                    || active.length() + block.length > config.maxSegmentBytes()) {
                active = roll(h, fence, frames.get(idx).firstOffset());
                segs.add(active);
            }
            try {
                blobs.appendBlock(log, active.name(), block, active.length());
                hook.at(Step.BLOCK_APPENDED, log);
                segs.set(segs.size() - 1, extend(active, blockFrames, block.length, 1));
                idx += blockFrames.size();
                failures = 0;
            } catch (BlobGateway.AppendPositionNotMet e) {
                if (++failures > MAX_APPEND_ATTEMPTS) {
                    throw new ProviderUnavailableException(log, "appends kept finding unexpected bytes", e);
                }
                byte[] after;
                try {
                    after = blobs.download(log, active.name(), active.length(), -1);
                } catch (BlobGateway.Gone gone) {
                    h.dirty.add(active.name());
                    continue;
                }
                int[] landed = landed(log, after, frames, idx, active.length());
                if (landed != null) {
                    stats.retriedAppendsFoundLanded.increment();
                    segs.set(segs.size() - 1, extend(active, frames.subList(idx, idx + landed[0]), after.length,
                            landed[1]));
                    idx += landed[0];
                    continue;
                }
                Snap now = fresh(h);
                if (now.epoch() != fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), now.epoch(), e);
                }
                stats.foreignBytesSkipped.increment();
                h.dirty.add(active.name());
            } catch (BlobGateway.Gone e) {
                if (++failures > MAX_APPEND_ATTEMPTS) {
                    throw new ProviderUnavailableException(log, "segments kept disappearing", e);
                }
                h.dirty.add(active.name());
            }
        }
        return segs;
    }

    /** As many frames from {@code idx} as fit one block of at most maxBlockBytes (at least one). */
    private List<Frame> nextBlock(List<Frame> frames, int idx) {
        long room = config.maxBlockBytes() - Frames.BLOCK_HEADER_BYTES;
        long used = 0;
        int end = idx;
        while (end < frames.size() && (end == idx || used + frames.get(end).bytes().length <= room)) {
            used += frames.get(end).bytes().length;
            end++;
        }
        if (used > room) {
            throw new IllegalStateException("frame of " + used + " bytes exceeds the block size " + room);
        }
        return frames.subList(idx, end);
    }

    /**
     * Whether the bytes found after the committed length are exactly this writer's next frames (an append whose
     * response was lost).
     *
     * @return {frames landed, blocks} or null when they are someone else's bytes (or torn)
     */
    private static int[] landed(LogId log, byte[] after, List<Frame> frames, int idx, long pos) {
        if (after.length == 0) {
            return null;
        }
        BlockParser p = new BlockParser(log, pos);
        List<Frame> found;
        try {
            found = p.feed(after);
        } catch (CorruptLogException e) {
            return null;
        }
        if (p.failure() != null || !p.atBoundary() || found.isEmpty() || idx + found.size() > frames.size()) {
            return null;
        }
        for (int j = 0; j < found.size(); j++) {
            if (!found.get(j).sameBytes(frames.get(idx + j))) {
                return null;
            }
        }
        return new int[] {found.size(), p.blocks()};
    }

    private SegmentRef roll(LogHandle h, Fence fence, long firstOffset) {
        String name = h.dir + "/seg-" + pad(firstOffset) + "-e" + pad(fence.epoch()) + "-" + randomHex();
        blobs.createAppendBlob(h.id, name);
        stats.segmentRolls.increment();
        hook.at(Step.SEGMENT_CREATED, h.id);
        return new SegmentRef(name, fence.epoch(), firstOffset, firstOffset - 1, 0, 0, 0, 0);
    }

    private static SegmentRef extend(SegmentRef s, List<Frame> frames, long bytes, int blocks) {
        long payload = 0;
        for (Frame f : frames) {
            payload += f.payloadBytes();
        }
        return new SegmentRef(s.name(), s.creatorEpoch(), s.firstOffset(), frames.get(frames.size() - 1).lastOffset(),
                s.startPos(), s.length() + bytes, s.blocks() + blocks, s.retainedPayloadBytes() + payload);
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        SpiChecks.abort(log, fence, staged);
        LogHandle h = handle(log);
        Snap s = known(h);
        if (fence.epoch() < s.epoch()) {
            throw new FencedException(log, fence.epoch(), s.epoch());
        }
        synchronized (h.staged) {
            Staged st = h.staged.get(staged.firstOffset());
            if (st != null && st.epoch() == staged.epoch() && st.id().equals(staged.batchId())
                    && st.last() == staged.lastOffset()) {
                h.staged.remove(staged.firstOffset());
            }
        }
    }

    // ------------------------------------------------------------------ read, state

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        LogHandle h = handle(log);
        for (int attempt = 1; ; attempt++) {
            Snap s = fresh(h);
            if (s.m == null) {
                return new ReadPage(List.of(), -1);
            }
            LogData d = s.m.data();
            long bound = Math.max(fromExclusive, d.watermark());
            if (bound >= d.tail()) {
                return new ReadPage(List.of(), d.tail());
            }
            try {
                return new ReadPage(collect(log, d, bound, maxEntries, maxBytes), d.tail());
            } catch (SegmentMissing e) {
                // A segment dropped by a trim or compaction after we read the manifest: read it again. One that the
                // manifest still names is committed data that is gone.
                Snap now = fresh(h);
                if (now.m != null && now.m.generation() == s.m.generation()) {
                    throw new CorruptLogException(log, e.firstOffset, "segment " + e.name + " holds committed"
                            + " offsets from " + e.firstOffset + " but does not exist", e.getCause());
                }
                if (attempt >= 4) {
                    throw new WalStorageException(log, "segments kept disappearing while reading", e.getCause());
                }
            }
        }
    }

    private List<LogEntry> collect(LogId log, LogData d, long bound, int maxEntries, long maxBytes) {
        List<LogEntry> out = new ArrayList<>();
        long[] next = {bound + 1};
        long[] bytes = {0};
        boolean[] full = {false};
        Frames.EntryVisitor take = (offset, buf, pos, len) -> {
            if (out.size() >= maxEntries || (!out.isEmpty() && bytes[0] + len > maxBytes)) {
                full[0] = true;
                return false;
            }
            if (offset != next[0]) {
                throw new CorruptLogException(log, next[0], "offset " + next[0] + " is missing (found " + offset + ")");
            }
            out.add(new LogEntry(offset, Arrays.copyOfRange(buf, pos, pos + len)));
            bytes[0] += len;
            next[0]++;
            if (out.size() >= maxEntries || bytes[0] >= maxBytes) {
                full[0] = true; // stop here: a page never reads (or trips over) bytes past what it returns
                return false;
            }
            return true;
        };
        for (SegmentRef seg : d.segments()) {
            if (full[0]) {
                break;
            }
            if (seg.lastOffset() < next[0]) {
                continue;
            }
            try {
                cache.scan(log, seg, next[0] - 1, loader(log), f -> f.forEach(next[0], take));
            } catch (BlobGateway.Gone e) {
                throw new SegmentMissing(seg.name(), next[0], e);
            }
        }
        if (!full[0]) {
            for (Frame f : d.inlineFrames(log)) {
                if (f.lastOffset() >= next[0] && !f.forEach(next[0], take)) {
                    break;
                }
            }
        }
        if (!full[0] && next[0] <= d.tail()) {
            throw new CorruptLogException(log, next[0], "committed offsets " + next[0] + ".." + d.tail()
                    + " are not in the segments nor the manifest");
        }
        return out;
    }

    /** A segment named by the manifest a read used was not found; {@code firstOffset} is the first one it lost. */
    private static final class SegmentMissing extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String name;
        final long firstOffset;

        SegmentMissing(String name, long firstOffset, Throwable cause) {
            super(null, cause, false, false);
            this.name = name;
            this.firstOffset = firstOffset;
        }
    }

    private SegmentCache.Loader loader(LogId log) {
        return (name, offset, count) -> blobs.download(log, name, offset, count);
    }

    /**
     * A segment the writer's own manifest names has disappeared: only a newer writer's sweep deletes referenced
     * segments of an older manifest, so this writer is fenced; otherwise the store was changed from outside.
     */
    private WalStorageException vanished(LogHandle h, Fence fence, BlobGateway.Gone e) {
        Snap now = fresh(h);
        if (now.epoch() != fence.epoch()) {
            return new FencedException(h.id, fence.epoch(), now.epoch(), e);
        }
        return new CorruptLogException(h.id, now.m == null ? -1 : now.m.data().watermark() + 1, "a segment named by"
                + " the committed manifest does not exist", e);
    }

    /** The committed frame that starts at {@code first}, or null. */
    private Frame findFrame(LogId log, LogData d, long first) {
        Frame[] found = {null};
        for (SegmentRef seg : d.segments()) {
            if (seg.firstOffset() <= first && first <= seg.lastOffset()) {
                cache.scan(log, seg, first - 1, loader(log), f -> {
                    if (f.firstOffset() == first) {
                        found[0] = f;
                    }
                    return false;
                });
                return found[0];
            }
        }
        for (Frame f : d.inlineFrames(log)) {
            if (f.firstOffset() == first) {
                return f;
            }
        }
        return null;
    }

    @Override
    public LogState state(LogId log) {
        LogHandle h = handle(log);
        Snap s = fresh(h);
        if (s.m == null) {
            return LogState.EMPTY;
        }
        LogData d = s.m.data();
        long retained = d.tail() - d.watermark();
        long physical = s.size() + d.segmentBytes() + s.m.checkpointBytes();
        return new LogState(d.watermark() + 1, d.tail(), d.watermark(), s.m.epoch(), retained,
                d.retainedPayloadBytes(), physical);
    }

    // ------------------------------------------------------------------ trim, reconcile

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        SpiChecks.trim(log, fence, throughInclusive);
        LogHandle h = handle(log);
        h.lock.lock();
        try {
            Snap s = fenced(h, fence);
            for (int attempt = 1; ; attempt++) {
                LogData d = s.m.data();
                if (throughInclusive <= d.watermark()) {
                    s = fresh(h);
                    checkFence(log, fence, s.epoch());
                    if (throughInclusive <= s.m.data().watermark()) {
                        return;
                    }
                    continue;
                }
                List<String> garbage = new ArrayList<>();
                LogData next;
                try {
                    next = planTrim(h, fence, d, throughInclusive, garbage);
                } catch (BlobGateway.Gone e) {
                    throw vanished(h, fence, e);
                }
                Snap written;
                try {
                    written = casWrite(h, s, m -> {
                        checkFenceOf(log, fence, m);
                        if (m.data().watermark() >= throughInclusive) {
                            return m;
                        }
                        if (!m.data().equals(d)) {
                            throw Restart.INSTANCE;
                        }
                        return m.withData(next);
                    });
                } catch (Restart r) {
                    if (attempt >= MAX_CAS_ATTEMPTS) {
                        throw new ProviderUnavailableException(log, "the manifest kept changing during trim", null);
                    }
                    s = fresh(h);
                    checkFence(log, fence, s.epoch());
                    continue;
                }
                synchronized (h.staged) {
                    h.staged.headMap(throughInclusive, true).clear();
                }
                for (String g : garbage) {
                    deleteQuietly(log, g);
                }
                sweep(h, written.m, fence.epoch());
                return;
            }
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * Computes the log after a trim: segments wholly at or below the watermark go; the segment that straddles it is
     * compacted (its retained frames moved into the inline tail when they fit, or copied into a fresh segment as
     * one block when they span several blocks and fit one) or kept with a later start position; inline frames at or
     * below the watermark go. May create a compacted segment (I/O). Caller holds the lock.
     */
    private LogData planTrim(LogHandle h, Fence fence, LogData d, long through, List<String> garbage) {
        LogId log = h.id;
        long newTail = Math.max(d.tail(), through);
        if (through >= d.tail()) {
            d.segments().forEach(seg -> garbage.add(seg.name()));
            return new LogData(newTail, through, List.of(), new byte[0], 0, 0);
        }
        List<Frame> keptInline = new ArrayList<>();
        for (Frame f : d.inlineFrames(log)) {
            if (f.lastOffset() <= through) {
                continue;
            }
            keptInline.add(f.firstOffset() <= through ? f.after(through) : f);
        }
        List<SegmentRef> segs = new ArrayList<>();
        for (int i = 0; i < d.segments().size(); i++) {
            SegmentRef seg = d.segments().get(i);
            if (seg.lastOffset() <= through) {
                garbage.add(seg.name());
                continue;
            }
            if (seg.firstOffset() > through) {
                segs.add(seg);
                continue;
            }
            // The segment straddles the new watermark.
            long oldW = d.watermark();
            long[] trimmed = {0};
            long[] startPos = {-1};
            List<Frame> retained = new ArrayList<>();
            Set<Long> retainedBlocks = new HashSet<>();
            long[] retainedBytes = {0};
            boolean[] small = {true};
            long room = config.maxBlockBytes() - Frames.BLOCK_HEADER_BYTES;
            cache.scan(log, seg, Math.max(oldW, seg.firstOffset() - 1), loader(log), f -> {
                if (f.firstOffset() <= through) {
                    long upper = Math.min(through, f.lastOffset());
                    trimmed[0] += f.payloadBytesThrough(upper) - f.payloadBytesThrough(oldW);
                }
                if (f.lastOffset() > through) {
                    if (startPos[0] < 0) {
                        startPos[0] = f.blockPos();
                    }
                    Frame keep = f.firstOffset() <= through ? f.after(through) : f;
                    retainedBytes[0] += keep.bytes().length;
                    retainedBlocks.add(f.blockPos());
                    if (retainedBytes[0] > room) {
                        small[0] = false;
                        return false;
                    }
                    retained.add(keep);
                }
                return true;
            });
            long newRetainedPayload = seg.retainedPayloadBytes() - trimmed[0];
            boolean lastSegment = i == d.segments().size() - 1;
            long inlineBytes = 0;
            for (Frame f : keptInline) {
                inlineBytes += f.bytes().length;
            }
            if (small[0] && lastSegment && config.inlineTailBytes() > 0
                    && retainedBytes[0] + inlineBytes <= config.inlineTailBytes()
                    && retained.size() + keptInline.size() <= config.inlineTailBatches()) {
                List<Frame> merged = new ArrayList<>(retained);
                merged.addAll(keptInline);
                keptInline = merged;
                garbage.add(seg.name());
                stats.compactions.increment();
            } else if (small[0] && retainedBlocks.size() >= 2) {
                SegmentRef c = roll(h, fence, through + 1);
                byte[] block = Frames.block(retained);
                try {
                    blobs.appendBlock(log, c.name(), block, 0);
                } catch (BlobGateway.AppendPositionNotMet | BlobGateway.Gone e) {
                    throw new ProviderUnavailableException(log, "a fresh compaction segment was changed by someone"
                            + " else", e);
                }
                segs.add(extend(c, retained, block.length, 1));
                garbage.add(seg.name());
                stats.compactions.increment();
            } else {
                segs.add(new SegmentRef(seg.name(), seg.creatorEpoch(), seg.firstOffset(), seg.lastOffset(),
                        startPos[0] < 0 ? seg.startPos() : startPos[0], seg.length(), seg.blocks(),
                        newRetainedPayload));
            }
        }
        long inlinePayload = 0;
        for (Frame f : keptInline) {
            inlinePayload += f.payloadBytes();
        }
        return new LogData(newTail, through, segs, Frames.concat(keptInline), keptInline.size(), inlinePayload);
    }

    /**
     * Deletes blobs of this log that the manifest does not name, that were made under this epoch or an older one, and
     * that no upload of this instance is writing: leftovers of crashed writers, fenced writers and interrupted
     * deletes. Best effort.
     */
    private void sweep(LogHandle h, Manifest m, long epoch) {
        Set<String> live = new HashSet<>();
        live.add(h.manifestName);
        m.data().segments().forEach(seg -> live.add(seg.name()));
        m.checkpoints().forEach(c -> live.add(c.name()));
        try {
            for (BlobGateway.Listed b : blobs.list(h.id, h.dir + "/")) {
                if (live.contains(b.name()) || h.inflight.contains(b.name())) {
                    continue;
                }
                long e = epochOfName(b.name());
                if (e >= 0 && e <= epoch) {
                    deleteQuietly(h.id, b.name());
                }
            }
        } catch (WalStorageException e) {
            LOG.log(System.Logger.Level.DEBUG, "log {0}: sweep of leftover blobs failed: {1}", h.id, e.toString());
        }
    }

    private void deleteQuietly(LogId log, String name) {
        cache.forget(name);
        try {
            blobs.delete(log, name);
        } catch (WalStorageException e) {
            LOG.log(System.Logger.Level.DEBUG, "log {0}: deleting {1} failed (left for the next sweep): {2}", log,
                    name, e.toString());
        }
    }

    /** The epoch in a segment or checkpoint blob name ({@code ...-e<epoch>-<random>}), or -1. */
    static long epochOfName(String name) {
        int slash = name.lastIndexOf('/');
        String base = name.substring(slash + 1);
        if (!base.startsWith("seg-") && !base.startsWith("ckpt-")) {
            return -1;
        }
        int e = base.indexOf("-e");
        int dash = e < 0 ? -1 : base.indexOf('-', e + 2);
        if (e < 0 || dash < 0) {
            return -1;
        }
        try {
            return Long.parseLong(base.substring(e + 2, dash));
        } catch (NumberFormatException ex) {
            return -1;
        }
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        LogHandle h = handle(log);
        h.lock.lock();
        try {
            Snap s = fresh(h);
            checkFence(log, fence, s.epoch());
            // The manifest (CRC-checked) is the commit point: the tail comes from it, never from a scan, so damage
            // cannot lower it. Its coverage of (watermark, tail] and its inline frames are checked here (no request);
            // segment bytes at read, which the engine's open does for everything above its checkpoint.
            if (s.m != null) {
                s.m.data().checkWhole(log);
            }
            int rolledBack;
            synchronized (h.staged) {
                rolledBack = h.staged.size();
                h.staged.clear();
            }
            return new ReconcileResult(s.m.data().tail(), rolledBack, 0, 0);
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * Explicit operator repair: reads every committed byte above the trim watermark (bypassing the cache), and when
     * it finds damage truncates the log at the first offset that cannot be read, in one conditional manifest write:
     * the segments before the damage stay, the damaged segment's committed length moves back to the start of its
     * damaged block, the intact frames of that block before the damage are copied into a fresh segment first, and
     * later segments and the inline tail are dropped (their blobs deleted after the write). When the latest
     * checkpoint covers the damage, the log is instead trimmed through the checkpoint (nothing it holds is lost).
     * Lost offsets are exactly {@code firstLostOffset .. lastLostOffset} of the report.
     *
     * @throws FencedException if the fence is stale
     * @throws ProviderUnavailableException on a transient failure, or when the manifest changed during the repair
     *     (run it again)
     * @throws WalStorageException on any other backend failure
     */
    @Override
    public RepairReport repair(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        LogHandle h = handle(log);
        h.lock.lock();
        try {
            Snap s = fresh(h);
            checkFence(log, fence, s.epoch());
            LogData d = s.m.data();
            DamageScan.Result r = new DamageScan(log, config.readChunkBytes(),
                    (name, offset, count) -> blobs.download(log, name, offset, count)).scan(d);
            if (r.clean()) {
                return RepairReport.clean(log, d.tail());
            }
            long intactTail = r.firstBad() - 1;
            CheckpointRef latest = s.m.latestCheckpoint();
            List<String> garbage = new ArrayList<>(r.dropped());
            LogData next;
            String how;
            if (latest != null && latest.through() >= intactTail + 1) {
                long through = Math.max(latest.through(), d.watermark());
                d.segments().forEach(seg -> garbage.add(seg.name()));
                next = new LogData(Math.max(through, d.watermark()), through, List.of(), new byte[0], 0, 0);
                how = "; the latest checkpoint (through " + latest.through() + ") covers it: trimmed through it";
            } else {
                List<SegmentRef> segs = new ArrayList<>(r.segments());
                if (!r.stranded().isEmpty()) {
                    SegmentRef fresh = roll(h, fence, r.stranded().get(0).firstOffset());
                    byte[] block = Frames.block(r.stranded());
                    try {
                        blobs.appendBlock(log, fresh.name(), block, 0);
                    } catch (BlobGateway.AppendPositionNotMet | BlobGateway.Gone e) {
                        throw new ProviderUnavailableException(log, "a fresh repair segment was changed by someone"
                                + " else", e);
                    }
                    segs.add(extend(fresh, r.stranded(), block.length, 1));
                }
                long inlinePayload = 0;
                for (Frame f : r.inline()) {
                    inlinePayload += f.payloadBytes();
                }
                next = new LogData(Math.max(intactTail, d.watermark()), d.watermark(), segs,
                        Frames.concat(r.inline()), r.inline().size(), inlinePayload);
                how = "";
            }
            long tailAfter = next.tail();
            try {
                casWrite(h, s, m -> {
                    checkFenceOf(log, fence, m);
                    if (!m.data().equals(d)) {
                        throw Restart.INSTANCE;
                    }
                    return m.withData(next);
                });
            } catch (Restart e) {
                throw new ProviderUnavailableException(log, "the log changed during repair; nothing was repaired, run"
                        + " it again", null);
            }
            if (r.damagedSegment() != null) {
                h.dirty.add(r.damagedSegment()); // bytes past its new committed length: never appended to again
            }
            for (SegmentRef seg : d.segments()) {
                cache.forget(seg.name());
            }
            synchronized (h.staged) {
                h.staged.clear();
            }
            for (String g : garbage) {
                deleteQuietly(log, g);
            }
            LOG.log(System.Logger.Level.WARNING, "log {0}: repaired: tail {1} -> {2} ({3}){4}", log, d.tail(),
                    tailAfter, r.detail(), how);
            long firstLost = tailAfter < d.tail() ? tailAfter + 1 : -1;
            return new RepairReport(log, d.tail(), tailAfter, firstLost, firstLost < 0 ? -1 : d.tail(),
                    "first damage at offset " + r.firstBad() + ": " + r.detail() + how);
        } finally {
            h.lock.unlock();
        }
    }

    // ------------------------------------------------------------------ listings, close

    @Override
    public CheckpointStore checkpoints() {
        checkOpen();
        return this;
    }

    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        checkOpen();
        String prefix = config.prefix() + tree + "/";
        TreeSet<LogId> out = new TreeSet<>();
        for (String p : blobs.listPrefixes(prefix)) {
            String rest = p.substring(prefix.length());
            if (rest.length() == 5 && rest.endsWith("/")) {
                try {
                    int partition = Integer.parseInt(rest.substring(0, 4));
                    if (partition >= 0 && partition <= LogId.MAX_PARTITION) {
                        out.add(new LogId(tree, partition));
                    }
                } catch (NumberFormatException ignored) {
                    // not a log directory of this provider
                }
            }
        }
        return new ArrayList<>(out);
    }

    @Override
    public List<String> trees() {
        checkOpen();
        TreeSet<String> out = new TreeSet<>();
        for (String p : blobs.listPrefixes(config.prefix())) {
            String name = p.substring(config.prefix().length(), p.length() - 1);
            try {
                out.add(LogId.validateTreeName(name));
            } catch (IllegalArgumentException ignored) {
                // not a tree directory of this provider
            }
        }
        return new ArrayList<>(out);
    }

    @Override
    public void close() {
        closed = true;
        handles.clear();
    }

    // ------------------------------------------------------------------ checkpoints

    @Override
    public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion, InputStream data) {
        SpiChecks.publish(log, fence, throughOffset, formatVersion, data);
        LogHandle h = handle(log);
        h.lock.lock();
        try {
            Snap s = fenced(h, fence);
            checkCheckpointOffset(log, s.m, throughOffset);
        } finally {
            h.lock.unlock();
        }
        String name = h.dir + "/ckpt-" + pad(throughOffset + 1) + "-e" + pad(fence.epoch()) + "-" + randomHex();
        h.inflight.add(name);
        boolean uploaded = false;
        boolean published = false;
        try {
            long[] sizeCrcBlocks = upload(log, name, data);
            uploaded = true;
            hook.at(Step.CHECKPOINT_UPLOADED, log);
            CheckpointRef ref = new CheckpointRef(name, throughOffset, formatVersion, sizeCrcBlocks[0], fence.epoch(),
                    (int) sizeCrcBlocks[1], (int) sizeCrcBlocks[2]);
            List<String> replaced = new ArrayList<>();
            h.lock.lock();
            try {
                Snap s = fenced(h, fence);
                casWrite(h, s, m -> {
                    checkFenceOf(log, fence, m);
                    checkCheckpointOffset(log, m, throughOffset);
                    replaced.clear();
                    List<CheckpointRef> list = new ArrayList<>();
                    for (CheckpointRef c : m.checkpoints()) {
                        if (c.through() == throughOffset) {
                            replaced.add(c.name());
                        } else {
                            list.add(c);
                        }
                    }
                    list.add(ref);
                    return m.withCheckpoints(list);
                });
                published = true;
            } finally {
                h.lock.unlock();
            }
            for (String r : replaced) {
                deleteQuietly(log, r);
            }
            return ref.info();
        } finally {
            h.inflight.remove(name);
            if (uploaded && !published) {
                deleteQuietly(log, name);
            }
        }
    }

    private static void checkCheckpointOffset(LogId log, Manifest m, long through) {
        if (through > m.data().tail()) {
            throw new OffsetConflictException(log, "checkpoint through " + through + " is above the committed tail "
                    + m.data().tail());
        }
        CheckpointRef latest = m.latestCheckpoint();
        if (latest != null && through < latest.through()) {
            throw new OffsetConflictException(log, "checkpoint through " + through
                    + " is below the latest checkpoint's " + latest.through());
        }
    }

    /**
     * Uploads a checkpoint stream: one request when it fits one block, else staged blocks and a block-list commit.
     *
     * @return {size, crc32c, blocks}
     */
    private long[] upload(LogId log, String name, InputStream data) {
        long limit = config.maxCheckpointBytes();
        int chunk = config.maxBlockBytes();
        byte[] buf = new byte[(int) Math.min(chunk, limit + 1)];
        CRC32C crc = new CRC32C();
        int n = fill(log, data, buf);
        long total = n;
        if (total > limit) {
            throw new CheckpointTooLargeException(log, limit);
        }
        crc.update(buf, 0, n);
        if (n < buf.length) {
            blobs.uploadBlockBlob(log, name, buf, n);
            return new long[] {total, crc.getValue(), 1};
        }
        List<String> ids = new ArrayList<>();
        while (n > 0) {
            String id = blockId(ids.size());
            blobs.stageBlock(log, name, id, buf, n);
            ids.add(id);
            n = fill(log, data, buf);
            total += n;
            if (total > limit) {
                throw new CheckpointTooLargeException(log, limit);
            }
            crc.update(buf, 0, n);
        }
        blobs.commitBlockList(log, name, ids);
        return new long[] {total, crc.getValue(), ids.size()};
    }

    private static int fill(LogId log, InputStream in, byte[] buf) {
        int n = 0;
        try {
            while (n < buf.length) {
                int r = in.read(buf, n, buf.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
        } catch (IOException e) {
            throw new WalStorageException(log, "reading the checkpoint stream failed; nothing was published", e);
        }
        return n;
    }

    private static String blockId(int i) {
        return Base64.getEncoder().encodeToString(String.format("blk-%08d", i).getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public Optional<CheckpointInfo> latest(LogId log) {
        LogHandle h = handle(log);
        Snap s = fresh(h);
        if (s.m == null || s.m.latestCheckpoint() == null) {
            return Optional.empty();
        }
        return Optional.of(s.m.latestCheckpoint().info());
    }

    @Override
    public InputStream open(LogId log, CheckpointInfo info) {
        Objects.requireNonNull(info, "info");
        LogHandle h = handle(log);
        // The blob name is in the cached manifest when this instance saw the checkpoint (it just asked for latest()
        // or published it): no request. A checkpoint deleted meanwhile then fails on its first read (blob gone).
        Snap cached = h.current.get();
        CheckpointRef ref = cached == null ? null : findCheckpoint(cached.m, info);
        if (ref == null) {
            ref = findCheckpoint(fresh(h).m, info);
        }
        if (ref != null) {
            return new CheckpointStream(log, ref);
        }
        throw new WalStorageException(log, "checkpoint through " + info.throughOffset() + " (epoch " + info.epoch()
                + ") no longer exists");
    }

    private static CheckpointRef findCheckpoint(Manifest m, CheckpointInfo info) {
        if (m != null) {
            for (CheckpointRef c : m.checkpoints()) {
                if (c.info().equals(info)) {
                    return c;
                }
            }
        }
        return null;
    }

    @Override
    public void deleteBefore(LogId log, long throughOffsetExclusive) {
        LogHandle h = handle(log);
        h.lock.lock();
        try {
            Snap s = fresh(h);
            if (s.m == null) {
                return;
            }
            List<String> removed = new ArrayList<>();
            casWrite(h, s, m -> {
                removed.clear();
                CheckpointRef latest = m.latestCheckpoint();
                List<CheckpointRef> keep = new ArrayList<>();
                for (CheckpointRef c : m.checkpoints()) {
                    if (c.through() < throughOffsetExclusive && c != latest) {
                        removed.add(c.name());
                    } else {
                        keep.add(c);
                    }
                }
                return removed.isEmpty() ? m : m.withCheckpoints(keep);
            });
            for (String r : removed) {
                deleteQuietly(log, r);
            }
        } finally {
            h.lock.unlock();
        }
    }

    /** Streams a checkpoint in block-sized ranges, checking its length and CRC32C at the end. Not thread-safe. */
    private final class CheckpointStream extends InputStream {
        private final LogId log;
        private final CheckpointRef ref;
        private final CRC32C crc = new CRC32C();
        private byte[] buf = new byte[0];
        private int bufPos;
        private long pos;
        private boolean verified;

        CheckpointStream(LogId log, CheckpointRef ref) {
            this.log = log;
            this.ref = ref;
        }

        private boolean fillBuffer() {
            if (bufPos < buf.length) {
                return true;
            }
            if (pos >= ref.size()) {
                if (!verified) {
                    verified = true;
                    if ((int) crc.getValue() != ref.crc32c()) {
                        throw new CorruptLogException(log, ref.through(), "checkpoint " + ref.name()
                                + " fails its CRC32C checksum");
                    }
                }
                return false;
            }
            long n = Math.min(config.maxBlockBytes(), ref.size() - pos);
            byte[] data;
            try {
                data = blobs.download(log, ref.name(), pos, n);
            } catch (BlobGateway.Gone e) {
                throw new WalStorageException(log, "checkpoint through " + ref.through() + " no longer exists", e);
            }
            stats.checkpointBlocksRead.increment();
            if (data.length != n) {
                throw new CorruptLogException(log, ref.through(), "checkpoint " + ref.name() + " is shorter than its "
                        + ref.size() + " bytes");
            }
            crc.update(data);
            pos += n;
            buf = data;
            bufPos = 0;
            return true;
        }

        @Override
        public int read() {
            if (!fillBuffer()) {
                return -1;
            }
            return buf[bufPos++] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (!fillBuffer()) {
                return -1;
            }
            int n = Math.min(len, buf.length - bufPos);
            System.arraycopy(buf, bufPos, b, off, n);
            bufPos += n;
            return n;
        }
    }

    // ------------------------------------------------------------------ names

    private static String pad(long v) {
        return String.format("%019d", v);
    }

    private static String randomHex() {
        return String.format("%08x", RANDOM.nextInt());
    }
}
