package dev.lattice.provider.azure.blob;

import dev.lattice.provider.azure.blob.AzureBlobWalStorageProvider.Step;
import dev.lattice.provider.azure.blob.LogSlot.Snap;
import dev.lattice.provider.azure.blob.Manifest.CheckpointRef;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.VerifyingChunkStream;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * Checkpoints of the Azure Blob provider: one immutable block blob per checkpoint, uploaded outside the log's lock
 * (one request, or staged blocks and one block-list commit), then named in the manifest by a conditional write;
 * read back in block-sized range downloads through {@link VerifyingChunkStream} (length and whole CRC32C checked at
 * the end). See {@code docs/providers/azure-blob.md}, "Checkpoints". Thread-safe.
 */
final class BlobCheckpointStore {

    private final BlobContext ctx;

    BlobCheckpointStore(BlobContext ctx) {
        this.ctx = ctx;
    }

    /** {@link dev.lattice.spi.CheckpointStore#publish}, arguments already checked. */
    CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion, InputStream data) {
        LogSlot h = ctx.slot(log);
        h.lock.lock();
        try {
            Snap s = h.fenced(fence);
            checkCheckpointOffset(log, s.m(), throughOffset);
        } finally {
            h.lock.unlock();
        }
        String name = h.dir + "/ckpt-" + BlobContext.pad(throughOffset + 1) + "-e" + BlobContext.pad(fence.epoch())
                + "-" + BlobContext.randomHex();
        h.inflight.add(name);
        boolean uploaded = false;
        boolean published = false;
        try {
            long[] sizeCrcBlocks = upload(log, name, data);
            uploaded = true;
            ctx.at(Step.CHECKPOINT_UPLOADED, log);
            CheckpointRef ref = new CheckpointRef(name, throughOffset, formatVersion, sizeCrcBlocks[0], fence.epoch(),
                    (int) sizeCrcBlocks[1], (int) sizeCrcBlocks[2]);
            List<String> replaced = new ArrayList<>();
            h.lock.lock();
            try {
                Snap s = h.fenced(fence);
                h.casWrite(s, m -> {
                    LogSlot.checkFenceOf(log, fence, m);
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
                ctx.deleteQuietly(log, r);
            }
            return ref.info();
        } finally {
            h.inflight.remove(name);
            if (uploaded && !published) {
                ctx.deleteQuietly(log, name);
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
        long limit = ctx.config.maxCheckpointBytes();
        int chunk = ctx.config.maxBlockBytes();
        byte[] buf = new byte[(int) Math.min(chunk, limit + 1)];
        CRC32C crc = new CRC32C();
        int n = fill(log, data, buf);
        long total = n;
        if (total > limit) {
            throw new CheckpointTooLargeException(log, limit);
        }
        crc.update(buf, 0, n);
        if (n < buf.length) {
            ctx.blobs.uploadBlockBlob(log, name, buf, n);
            return new long[] {total, crc.getValue(), 1};
        }
        List<String> ids = new ArrayList<>();
        while (n > 0) {
            String id = blockId(ids.size());
            ctx.blobs.stageBlock(log, name, id, buf, n);
            ids.add(id);
            n = fill(log, data, buf);
            total += n;
            if (total > limit) {
                throw new CheckpointTooLargeException(log, limit);
            }
            crc.update(buf, 0, n);
        }
        ctx.blobs.commitBlockList(log, name, ids);
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

    /** The id of the i-th staged block (Base64 of a fixed-length ASCII name, as the service requires). */
    static String blockId(int i) {
        return Base64.getEncoder().encodeToString(String.format("blk-%08d", i).getBytes(StandardCharsets.US_ASCII));
    }

    /** {@link dev.lattice.spi.CheckpointStore#latest}. */
    Optional<CheckpointInfo> latest(LogId log) {
        LogSlot h = ctx.slot(log);
        Snap s = h.fresh();
        if (s.m() == null || s.m().latestCheckpoint() == null) {
            return Optional.empty();
        }
        return Optional.of(s.m().latestCheckpoint().info());
    }

    /** {@link dev.lattice.spi.CheckpointStore#open}. */
    InputStream open(LogId log, CheckpointInfo info) {
        Objects.requireNonNull(info, "info");
        LogSlot h = ctx.slot(log);
        // The blob name is in the cached manifest when this instance saw the checkpoint (it just asked for latest()
        // or published it): no request. A checkpoint deleted meanwhile then fails on its first read (blob gone).
        Snap cached = h.current.get();
        CheckpointRef ref = cached == null ? null : findCheckpoint(cached.m(), info);
        if (ref == null) {
            ref = findCheckpoint(h.fresh().m(), info);
        }
        if (ref == null) {
            throw new WalStorageException(log, "checkpoint through " + info.throughOffset() + " (epoch "
                    + info.epoch() + ") no longer exists");
        }
        return stream(log, ref);
    }

    /** Block-sized range downloads of a checkpoint blob, length and whole CRC32C checked at the end. */
    private InputStream stream(LogId log, CheckpointRef ref) {
        long chunk = ctx.config.maxBlockBytes();
        int chunks = (int) ((ref.size() + chunk - 1) / chunk);
        return VerifyingChunkStream.withCrc32c(log, ref.through(), "checkpoint " + ref.name(), ref.size(), chunks,
                ref.crc32c(), i -> {
                    long pos = i * chunk;
                    long n = Math.min(chunk, ref.size() - pos);
                    byte[] data;
                    try {
                        data = ctx.blobs.download(log, ref.name(), pos, n);
                    } catch (BlobGateway.Gone e) {
                        throw new WalStorageException(log, "checkpoint through " + ref.through()
                                + " no longer exists", e);
                    }
                    ctx.stats.checkpointBlocksRead.increment();
                    if (data.length != n) {
                        throw new CorruptLogException(log, ref.through(), "checkpoint " + ref.name()
                                + " is shorter than its " + ref.size() + " bytes");
                    }
                    return data;
                });
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

    /** {@link dev.lattice.spi.CheckpointStore#deleteBefore}. */
    void deleteBefore(LogId log, long throughOffsetExclusive) {
        LogSlot h = ctx.slot(log);
        h.lock.lock();
        try {
            Snap s = h.fresh();
            if (s.m() == null) {
                return;
            }
            List<String> removed = new ArrayList<>();
            h.casWrite(s, m -> {
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
                ctx.deleteQuietly(log, r);
            }
        } finally {
            h.lock.unlock();
        }
    }
}
