package dev.lattice.provider.azure.blob;

import dev.lattice.provider.azure.blob.Frames.Frame;
import dev.lattice.provider.azure.blob.LogSlot.Snap;
import dev.lattice.provider.azure.blob.Manifest.LogData;
import dev.lattice.provider.azure.blob.Manifest.SegmentRef;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The read path of the Azure Blob provider: a page of committed entries from the segments (through the parsed
 * segment cache, only up to each segment's committed length) and the manifest's inline tail, the committed-frame
 * lookup a retried stage needs, and the log's state. See {@code docs/providers/azure-blob.md}, "Reads". Thread-safe;
 * takes no lock (every read checks the manifest, conditionally).
 */
final class BlobReadPath {

    private final BlobContext ctx;

    BlobReadPath(BlobContext ctx) {
        this.ctx = ctx;
    }

    /** {@link dev.lattice.spi.WalStorageProvider#read}, arguments already checked. */
    ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        LogSlot h = ctx.slot(log);
        for (int attempt = 1; ; attempt++) {
            Snap s = h.fresh();
            if (s.m() == null) {
                return new ReadPage(List.of(), -1);
            }
            LogData d = s.m().data();
            long bound = Math.max(fromExclusive, d.watermark());
            if (bound >= d.tail()) {
                return new ReadPage(List.of(), d.tail());
            }
            try {
                return new ReadPage(collect(log, d, bound, maxEntries, maxBytes), d.tail());
            } catch (SegmentMissing e) {
                // A segment dropped by a trim or compaction after we read the manifest: read it again. One that the
                // manifest still names is committed data that is gone.
                Snap now = h.fresh();
                if (now.m() != null && now.m().generation() == s.m().generation()) {
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
                ctx.cache.scan(log, seg, next[0] - 1, ctx.loader(log), f -> f.forEach(next[0], take));
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

    /**
     * A segment the writer's own manifest names has disappeared: only a newer writer's sweep deletes referenced
     * segments of an older manifest, so this writer is fenced; otherwise the store was changed from outside.
     */
    WalStorageException vanished(LogSlot h, Fence fence, BlobGateway.Gone e) {
        Snap now = h.fresh();
        if (now.epoch() != fence.epoch()) {
            return new FencedException(h.id, fence.epoch(), now.epoch(), e);
        }
        return new CorruptLogException(h.id, now.m() == null ? -1 : now.m().data().watermark() + 1, "a segment named by"
                + " the committed manifest does not exist", e);
    }

    /** The committed frame that starts at {@code first}, or null. */
    Frame findFrame(LogId log, LogData d, long first) {
        Frame[] found = {null};
        for (SegmentRef seg : d.segments()) {
            if (seg.firstOffset() <= first && first <= seg.lastOffset()) {
                ctx.cache.scan(log, seg, first - 1, ctx.loader(log), f -> {
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

    /** {@link dev.lattice.spi.WalStorageProvider#state}. */
    LogState state(LogId log) {
        LogSlot h = ctx.slot(log);
        Snap s = h.fresh();
        if (s.m() == null) {
            return LogState.EMPTY;
        }
        LogData d = s.m().data();
        long retained = d.tail() - d.watermark();
        long physical = s.size() + d.segmentBytes() + s.m().checkpointBytes();
        return new LogState(d.watermark() + 1, d.tail(), d.watermark(), s.m().epoch(), retained,
                d.retainedPayloadBytes(), physical);
    }
}
