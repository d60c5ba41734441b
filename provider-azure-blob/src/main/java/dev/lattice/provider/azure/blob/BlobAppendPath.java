package dev.lattice.provider.azure.blob;

import dev.lattice.provider.azure.blob.AzureBlobWalStorageProvider.Step;
import dev.lattice.provider.azure.blob.Frames.Frame;
import dev.lattice.provider.azure.blob.LogSlot.Restart;
import dev.lattice.provider.azure.blob.LogSlot.Snap;
import dev.lattice.provider.azure.blob.Manifest.LogData;
import dev.lattice.provider.azure.blob.Manifest.SegmentRef;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.support.StagedBatchTable.Staged;
import dev.lattice.spi.support.StagingRules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The append path of the Azure Blob provider: stage (in memory, by {@link StagingRules}), commit (into the
 * manifest's inline tail, or as conditional append blocks to the active segment and then the manifest), the
 * recognition of a lost append response, segment rolls, and abort. See {@code docs/providers/azure-blob.md},
 * "Protocol". Thread-safe (per-log lock and staged-table monitor, see {@link LogSlot}).
 */
final class BlobAppendPath {

    private static final int MAX_APPEND_ATTEMPTS = 8;

    private final BlobContext ctx;
    private final BlobReadPath reads;

    BlobAppendPath(BlobContext ctx, BlobReadPath reads) {
        this.ctx = ctx;
        this.reads = reads;
    }

    /** {@link dev.lattice.spi.WalStorageProvider#stage}, arguments already checked. */
    StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        LogSlot h = ctx.slot(log);
        long first = batch.firstOffset();
        long last = batch.lastOffset();
        StagedBatch receipt = StagedBatch.of(fence, batch);
        // No log lock: a stage only reads the cached manifest and touches memory, so it never waits for a commit's
        // round trip (the staged table has its own monitor).
        Snap s = h.fenced(fence);
        LogData d = s.m().data();
        if (first <= d.tail()) {
            if (first <= d.watermark()) {
                throw new OffsetConflictException(log, "batch " + first + ".." + last + " overlaps trimmed offsets"
                        + " (trim watermark " + d.watermark() + ")");
            }
            Frame committed;
            try {
                committed = reads.findFrame(log, d, first);
            } catch (BlobGateway.Gone e) {
                throw reads.vanished(h, fence, e);
            }
            boolean same = committed != null && committed.lastOffset() == last
                    && committed.id().equals(batch.batchId());
            StagingRules.decideStage(log, fence, batch, d.tail(), () -> same, List.of());
            return receipt;
        }
        Frame frame = Frames.encode(fence.epoch(), batch.batchId(), first, batch.entries());
        synchronized (h.staged) {
            for (Staged<Frame> st : h.staged.overlapping(first, last)) {
                if (st.epoch() > fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), st.epoch());
                }
            }
            h.staged.stage(log, fence, batch, d.tail(), () -> false, b -> frame);
            return receipt;
        }
    }

    /** {@link dev.lattice.spi.WalStorageProvider#commit}, arguments already checked. */
    void commit(LogId log, Fence fence, long throughOffset) {
        LogSlot h = ctx.slot(log);
        h.lock.lock();
        try {
            Snap s = h.fenced(fence);
            for (int attempt = 1; ; attempt++) {
                LogData d = s.m().data();
                if (throughOffset <= d.tail()) {
                    s = h.fresh();
                    LogSlot.checkFence(log, fence, s.epoch());
                    if (throughOffset <= s.m().data().tail()) {
                        synchronized (h.staged) {
                            h.staged.dropStartingThrough(s.m().data().tail());
                        }
                        return;
                    }
                    continue;
                }
                List<Staged<Frame>> chain;
                try {
                    synchronized (h.staged) {
                        chain = h.staged.commitChain(log, fence, d.tail(), throughOffset);
                    }
                } catch (OffsetConflictException e) {
                    // a stale writer (whose cached manifest is old) must hear that it is fenced, not about offsets
                    LogSlot.checkFence(log, fence, h.fresh().epoch());
                    throw e;
                }
                try {
                    writeCommit(h, fence, s, chain, throughOffset);
                    synchronized (h.staged) {
                        h.staged.remove(chain);
                    }
                    return;
                } catch (Restart r) {
                    if (attempt >= LogSlot.MAX_CAS_ATTEMPTS) {
                        throw new ProviderUnavailableException(log, "the manifest kept changing during commit", null);
                    }
                    s = h.fresh();
                    LogSlot.checkFence(log, fence, s.epoch());
                }
            }
        } finally {
            h.lock.unlock();
        }
    }

    private void writeCommit(LogSlot h, Fence fence, Snap s, List<Staged<Frame>> chain, long through) {
        LogData d = s.m().data();
        AzureBlobConfig config = ctx.config;
        List<Frame> frames = new ArrayList<>(chain.size());
        long newBytes = 0;
        long newPayload = 0;
        for (Staged<Frame> st : chain) {
            frames.add(st.payload());
            newBytes += st.payload().bytes().length;
            newPayload += st.payload().payloadBytes();
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
        h.casWrite(s, m -> {
            LogSlot.checkFenceOf(h.id, fence, m);
            if (m.data().tail() >= through) {
                return m; // our earlier attempt landed (its response was lost)
            }
            if (!m.data().equals(d)) {
                throw Restart.INSTANCE;
            }
            return m.withData(newData);
        });
    }

    /**
     * Appends frames to the log's segments as blocks, each conditional on the expected append position; returns the
     * segment list that describes them. Caller holds the lock.
     */
    private List<SegmentRef> appendFrames(LogSlot h, Fence fence, LogData base, List<Frame> frames) {
        LogId log = h.id;
        AzureBlobConfig config = ctx.config;
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
                active = ctx.roll(h, fence, frames.get(idx).firstOffset());
                segs.add(active);
            }
            try {
                ctx.blobs.appendBlock(log, active.name(), block, active.length());
                ctx.at(Step.BLOCK_APPENDED, log);
                segs.set(segs.size() - 1, BlobContext.extend(active, blockFrames, block.length, 1));
                idx += blockFrames.size();
                failures = 0;
            } catch (BlobGateway.AppendPositionNotMet e) {
                if (++failures > MAX_APPEND_ATTEMPTS) {
                    throw new ProviderUnavailableException(log, "appends kept finding unexpected bytes", e);
                }
                byte[] after;
                try {
                    after = ctx.blobs.download(log, active.name(), active.length(), -1);
                } catch (BlobGateway.Gone gone) {
                    h.dirty.add(active.name());
                    continue;
                }
                int[] landed = landed(log, after, frames, idx, active.length());
                if (landed != null) {
                    ctx.stats.retriedAppendsFoundLanded.increment();
                    segs.set(segs.size() - 1, BlobContext.extend(active, frames.subList(idx, idx + landed[0]),
                            after.length, landed[1]));
                    idx += landed[0];
                    continue;
                }
                Snap now = h.fresh();
                if (now.epoch() != fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), now.epoch(), e);
                }
                ctx.stats.foreignBytesSkipped.increment();
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
        long room = ctx.config.maxBlockBytes() - Frames.BLOCK_HEADER_BYTES;
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

    /** {@link dev.lattice.spi.WalStorageProvider#abort}, arguments already checked. */
    void abort(LogId log, Fence fence, StagedBatch staged) {
        LogSlot h = ctx.slot(log);
        Snap s = h.known();
        if (fence.epoch() < s.epoch()) {
            throw new FencedException(log, fence.epoch(), s.epoch());
        }
        synchronized (h.staged) {
            h.staged.abort(staged);
        }
    }
}
