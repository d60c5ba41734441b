package dev.lattice.provider.azure.blob;

import dev.lattice.provider.azure.blob.AzureBlobWalStorageProvider.Step;
import dev.lattice.provider.azure.blob.AzureBlobWalStorageProvider.StepHook;
import dev.lattice.provider.azure.blob.Frames.Frame;
import dev.lattice.provider.azure.blob.Manifest.SegmentRef;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;

import java.security.SecureRandom;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What every protocol part of the Azure Blob provider shares: the gateway, settings, counters, segment cache, the
 * test step hook, the per-log slots and blob naming (segment creation, quiet deletes). See
 * {@code docs/providers/azure-blob.md}. Thread-safe.
 */
final class BlobContext {

    private static final System.Logger LOG = System.getLogger(AzureBlobWalStorageProvider.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    final BlobGateway blobs;
    final AzureBlobConfig config;
    final AzureBlobStats stats;
    final SegmentCache cache;
    private final ConcurrentHashMap<LogId, LogSlot> slots = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile StepHook hook = StepHook.NONE;

    BlobContext(BlobGateway blobs, AzureBlobConfig config, AzureBlobStats stats) {
        this.blobs = blobs;
        this.config = config;
        this.stats = stats;
        this.cache = new SegmentCache(config.cacheBytes(), config.readChunkBytes(), stats);
    }

    /** The slot of a log (created on first use); throws when the provider is closed. */
    LogSlot slot(LogId log) {
        checkOpen();
        Objects.requireNonNull(log, "log");
        return slots.computeIfAbsent(log, id -> new LogSlot(this, id));
    }

    /** Forgets a dropped log's slot (its cached manifest), so the next call reads the container afresh. */
    void forget(LogId log) {
        slots.remove(log);
    }

    void checkOpen() {
        SpiChecks.open(closed, AzureBlobWalStorageProvider.NAME);
    }

    void close() {
        closed = true;
        slots.clear();
    }

    void hook(StepHook h) {
        this.hook = Objects.requireNonNull(h, "hook");
    }

    /** Calls the step hook (tests inject crashes here). */
    void at(Step step, LogId log) {
        hook.at(step, log);
    }

    /** The segment cache's loader for a log (one ranged download per call). */
    SegmentCache.Loader loader(LogId log) {
        return (name, offset, count) -> blobs.download(log, name, offset, count);
    }

    /** Creates a new empty segment (append blob) for frames from {@code firstOffset}, named with the fence's epoch. */
    SegmentRef roll(LogSlot h, Fence fence, long firstOffset) {
        String name = h.dir + "/seg-" + pad(firstOffset) + "-e" + pad(fence.epoch()) + "-" + randomHex();
        blobs.createAppendBlob(h.id, name);
        stats.segmentRolls.increment();
        at(Step.SEGMENT_CREATED, h.id);
        return new SegmentRef(name, fence.epoch(), firstOffset, firstOffset - 1, 0, 0, 0, 0);
    }

    /** A segment record extended by frames appended as {@code blocks} blocks of {@code bytes} bytes in total. */
    static SegmentRef extend(SegmentRef s, List<Frame> frames, long bytes, int blocks) {
        long payload = 0;
        for (Frame f : frames) {
            payload += f.payloadBytes();
        }
        return new SegmentRef(s.name(), s.creatorEpoch(), s.firstOffset(), frames.get(frames.size() - 1).lastOffset(),
                s.startPos(), s.length() + bytes, s.blocks() + blocks, s.retainedPayloadBytes() + payload);
    }

    /** Deletes a blob, logging (not throwing) a failure: the next sweep retries it. */
    void deleteQuietly(LogId log, String name) {
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

    /** A number as 19 zero-padded digits (names sort by it). */
    static String pad(long v) {
        return String.format("%019d", v);
    }

    /** Eight random hex digits, so that two writers never pick the same blob name. */
    static String randomHex() {
        return String.format("%08x", RANDOM.nextInt());
    }
}
