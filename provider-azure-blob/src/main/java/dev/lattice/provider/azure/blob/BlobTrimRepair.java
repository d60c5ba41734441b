package dev.lattice.provider.azure.blob;

import dev.lattice.provider.azure.blob.Frames.Frame;
import dev.lattice.provider.azure.blob.LogSlot.Restart;
import dev.lattice.provider.azure.blob.LogSlot.Snap;
import dev.lattice.provider.azure.blob.Manifest.CheckpointRef;
import dev.lattice.provider.azure.blob.Manifest.LogData;
import dev.lattice.provider.azure.blob.Manifest.SegmentRef;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.RepairReport;
import dev.lattice.spi.WalStorageException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Trim (with compaction of the segment that straddles the new watermark), the sweep of leftover blobs, reconcile,
 * and the operator repair of the Azure Blob provider. See {@code docs/providers/azure-blob.md}, "Trim and
 * compaction" and "Damage and repair". Thread-safe: every change holds the log's lock.
 */
final class BlobTrimRepair {

    private static final System.Logger LOG = System.getLogger(AzureBlobWalStorageProvider.class.getName());

    private final BlobContext ctx;
    private final BlobReadPath reads;

    BlobTrimRepair(BlobContext ctx, BlobReadPath reads) {
        this.ctx = ctx;
        this.reads = reads;
    }

    /** {@link dev.lattice.spi.WalStorageProvider#trim}, arguments already checked. */
    void trim(LogId log, Fence fence, long throughInclusive) {
        LogSlot h = ctx.slot(log);
        h.lock.lock();
        try {
            Snap s = h.fenced(fence);
            for (int attempt = 1; ; attempt++) {
                LogData d = s.m().data();
                if (throughInclusive <= d.watermark()) {
                    s = h.fresh();
                    LogSlot.checkFence(log, fence, s.epoch());
                    if (throughInclusive <= s.m().data().watermark()) {
                        return;
                    }
                    continue;
                }
                List<String> garbage = new ArrayList<>();
                LogData next;
                try {
                    next = planTrim(h, fence, d, throughInclusive, garbage);
                } catch (BlobGateway.Gone e) {
                    throw reads.vanished(h, fence, e);
                }
                Snap written;
                try {
                    written = h.casWrite(s, m -> {
                        LogSlot.checkFenceOf(log, fence, m);
                        if (m.data().watermark() >= throughInclusive) {
                            return m;
                        }
                        if (!m.data().equals(d)) {
                            throw Restart.INSTANCE;
                        }
                        return m.withData(next);
                    });
                } catch (Restart r) {
                    if (attempt >= LogSlot.MAX_CAS_ATTEMPTS) {
                        throw new ProviderUnavailableException(log, "the manifest kept changing during trim", null);
                    }
                    s = h.fresh();
                    LogSlot.checkFence(log, fence, s.epoch());
                    continue;
                }
                synchronized (h.staged) {
                    h.staged.dropStartingThrough(throughInclusive);
                }
                for (String g : garbage) {
                    ctx.deleteQuietly(log, g);
                }
                sweep(h, written.m(), fence.epoch());
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
    private LogData planTrim(LogSlot h, Fence fence, LogData d, long through, List<String> garbage) {
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
            long room = ctx.config.maxBlockBytes() - Frames.BLOCK_HEADER_BYTES;
            ctx.cache.scan(log, seg, Math.max(oldW, seg.firstOffset() - 1), ctx.loader(log), f -> {
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
            if (small[0] && lastSegment && ctx.config.inlineTailBytes() > 0
                    && retainedBytes[0] + inlineBytes <= ctx.config.inlineTailBytes()
                    && retained.size() + keptInline.size() <= ctx.config.inlineTailBatches()) {
                List<Frame> merged = new ArrayList<>(retained);
                merged.addAll(keptInline);
                keptInline = merged;
                garbage.add(seg.name());
                ctx.stats.compactions.increment();
            } else if (small[0] && retainedBlocks.size() >= 2) {
                SegmentRef c = ctx.roll(h, fence, through + 1);
                byte[] block = Frames.block(retained);
                try {
                    ctx.blobs.appendBlock(log, c.name(), block, 0);
                } catch (BlobGateway.AppendPositionNotMet | BlobGateway.Gone e) {
                    throw new ProviderUnavailableException(log, "a fresh compaction segment was changed by someone"
                            + " else", e);
                }
                segs.add(BlobContext.extend(c, retained, block.length, 1));
                garbage.add(seg.name());
                ctx.stats.compactions.increment();
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
    private void sweep(LogSlot h, Manifest m, long epoch) {
        Set<String> live = new HashSet<>();
        live.add(h.manifestName);
        m.data().segments().forEach(seg -> live.add(seg.name()));
        m.checkpoints().forEach(c -> live.add(c.name()));
        try {
            for (BlobGateway.Listed b : ctx.blobs.list(h.id, h.dir + "/")) {
                if (live.contains(b.name()) || h.inflight.contains(b.name())) {
                    continue;
                }
                long e = BlobContext.epochOfName(b.name());
                if (e >= 0 && e <= epoch) {
                    ctx.deleteQuietly(h.id, b.name());
                }
            }
        } catch (WalStorageException e) {
            LOG.log(System.Logger.Level.DEBUG, "log {0}: sweep of leftover blobs failed: {1}", h.id, e.toString());
        }
    }

    /** {@link dev.lattice.spi.WalStorageProvider#reconcile}, arguments already checked. */
    ReconcileResult reconcile(LogId log, Fence fence) {
        LogSlot h = ctx.slot(log);
        h.lock.lock();
        try {
            Snap s = h.fresh();
            LogSlot.checkFence(log, fence, s.epoch());
            // The manifest (CRC-checked) is the commit point: the tail comes from it, never from a scan, so damage
            // cannot lower it. Its coverage of (watermark, tail] and its inline frames are checked here (no request);
            // segment bytes at read, which the engine's open does for everything above its checkpoint.
            if (s.m() != null) {
                s.m().data().checkWhole(log);
            }
            int rolledBack;
            synchronized (h.staged) {
                rolledBack = h.staged.size();
                h.staged.clear();
            }
            return new ReconcileResult(s.m().data().tail(), rolledBack, 0, 0);
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
    RepairReport repair(LogId log, Fence fence) {
        LogSlot h = ctx.slot(log);
        h.lock.lock();
        try {
            Snap s = h.fresh();
            LogSlot.checkFence(log, fence, s.epoch());
            LogData d = s.m().data();
            DamageScan.Result r = new DamageScan(log, ctx.config.readChunkBytes(),
                    (name, offset, count) -> ctx.blobs.download(log, name, offset, count)).scan(d);
            if (r.clean()) {
                return RepairReport.clean(log, d.tail());
            }
            long intactTail = r.firstBad() - 1;
            CheckpointRef latest = s.m().latestCheckpoint();
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
                    SegmentRef fresh = ctx.roll(h, fence, r.stranded().get(0).firstOffset());
                    byte[] block = Frames.block(r.stranded());
                    try {
                        ctx.blobs.appendBlock(log, fresh.name(), block, 0);
                    } catch (BlobGateway.AppendPositionNotMet | BlobGateway.Gone e) {
                        throw new ProviderUnavailableException(log, "a fresh repair segment was changed by someone"
                                + " else", e);
                    }
                    segs.add(BlobContext.extend(fresh, r.stranded(), block.length, 1));
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
                h.casWrite(s, m -> {
                    LogSlot.checkFenceOf(log, fence, m);
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
                ctx.cache.forget(seg.name());
            }
            synchronized (h.staged) {
                h.staged.clear();
            }
            for (String g : garbage) {
                ctx.deleteQuietly(log, g);
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
}
