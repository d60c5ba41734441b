package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.StagedBatchTable;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.WriteAfterEOFException;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Writes one commit group into a log's queue (commit part of the protocol, docs/providers/chronicle.md "Two-phase append, commit groups,
 * visibility", "Full disk"):
 * packs the staged fragments into as few frames (Chronicle documents) as fit, reserves disk space ahead of each, and
 * forces the touched cycle files under fsync durability. Maps a failed write to the typed error.
 *
 * <p>Not thread-safe: used under the owning {@link LogStore}'s lock.
 */
final class CommitWriter {

    /**
     * A staged batch's payload in the {@link StagedBatchTable}: the batch already encoded as its frame fragment.
     *
     * @param bytes the encoded batch ({@link Frames#encodeBatch})
     * @param entries the entry count
     * @param payloadBytes the payload bytes
     */
    record Fragment(byte[] bytes, int entries, long payloadBytes) {
    }

    private final LogId id;
    private final ChronicleConfig config;
    private final Path queueDir;
    /** Chronicle documents begun by the commit in progress (0: a failure left the queue untouched). */
    private int documentsBegun;
    private long forcedFiles;

    /**
     * @param id the log
     * @param config the provider settings (document size budget, durability)
     * @param queueDir the queue directory (for errors)
     */
    CommitWriter(LogId id, ChronicleConfig config, Path queueDir) {
        this.id = id;
        this.config = config;
        this.queueDir = queueDir;
    }

    /**
     * Writes one commit group.
     *
     * @param q the open queue
     * @param fenceEpoch the committer's epoch
     * @param chain the staged batches, in offset order, {@code groupFirst..groupThrough} without gaps
     * @param groupFirst the group's first offset
     * @param groupThrough the group's last offset (inclusive)
     * @param afterFrame run after each frame written (test hook), or null
     * @return per frame: first offset, Chronicle index, payload bytes, frame bytes
     * @throws WalStorageException if the write fails ({@link #mapFailure} is applied; {@link #wroteAnything} then says
     *                             whether the queue may have changed)
     */
    List<long[]> write(LogQueue q, long fenceEpoch, List<StagedBatchTable.Staged<Fragment>> chain, long groupFirst,
                       long groupThrough, Runnable afterFrame) {
        documentsBegun = 0;
        try {
            return writeGroup(q, fenceEpoch, chain, groupFirst, groupThrough, afterFrame);
        } catch (RuntimeException | Error e) {
            throw mapFailure(e, groupThrough);
        }
    }

    /** @return true when the last failed {@link #write} had begun a Chronicle document (its outcome is unknown) */
    boolean wroteAnything() {
        return documentsBegun > 0;
    }

    /** @return how many times a commit forced a queue file to disk (fsync durability) */
    long forcedFiles() {
        return forcedFiles;
    }

    private List<long[]> writeGroup(LogQueue q, long fenceEpoch, List<StagedBatchTable.Staged<Fragment>> chain,
                                    long groupFirst, long groupThrough, Runnable afterFrame) {
        int budget = config.maxDocumentBytes() - Frames.FRAME_OVERHEAD;
        List<long[]> out = new ArrayList<>();
        List<File> touched = new ArrayList<>();
        int i = 0;
        while (i < chain.size()) {
            int j = i;
            long bytes = 0;
            while (j < chain.size() && (j == i || bytes + chain.get(j).payload().bytes().length <= budget)) {
                bytes += chain.get(j).payload().bytes().length;
                j++;
            }
            out.add(writeFrame(q, fenceEpoch, chain.subList(i, j), groupFirst, groupThrough, (int) bytes));
            if (afterFrame != null) {
                afterFrame.run();
            }
            File f = q.appender.currentFile();
            if (f != null && !touched.contains(f)) {
                touched.add(f);
            }
            i = j;
        }
        if (config.durability() == ChronicleDurability.FSYNC) {
            q.force(touched);
            forcedFiles += touched.size();
        }
        return out;
    }

    private long[] writeFrame(LogQueue q, long fenceEpoch, List<StagedBatchTable.Staged<Fragment>> part,
                              long groupFirst, long groupThrough, int bodyBytes) {
        int entries = 0;
        long payload = 0;
        for (StagedBatchTable.Staged<Fragment> s : part) {
            entries += s.payload().entries();
            payload += s.payload().payloadBytes();
        }
        long first = part.get(0).firstOffset();
        long last = part.get(part.size() - 1).lastOffset();
        int frameLength = Frames.FRAME_OVERHEAD + bodyBytes;
        byte[] header = Frames.header(frameLength, part.size(), entries, fenceEpoch, first, last, groupFirst,
                groupThrough, (int) payload);
        CRC32C crc = new CRC32C();
        crc.update(header);
        for (StagedBatchTable.Staged<Fragment> s : part) {
            crc.update(s.payload().bytes());
        }
        int c = (int) crc.getValue();
        byte[] trailer = {(byte) (c >>> 24), (byte) (c >>> 16), (byte) (c >>> 8), (byte) c};
        long reserve = frameLength + 16L;
        q.rollIfFull();
        q.reserver.beforeDocument(q.appender.currentFile(), q.appender.cycle() != q.queue.cycle(), reserve);
        documentsBegun++;
        DocumentContext dc;
        try {
            dc = q.appender.writingDocument();
        } catch (WriteAfterEOFException e) {
            // the newest cycle file ends with an end-of-file marker and its successor was never created (a crash
            // between the two steps of a size roll): nothing was written (Chronicle released its lock); go on in
            // the next cycle
            q.rollPastEndOfFile();
            q.reserver.beforeDocument(q.appender.currentFile(), true, reserve);
            dc = q.appender.writingDocument();
        }
        long end;
        try {
            Bytes<?> b = dc.wire().bytes();
            q.reserver.ensure(q.appender.currentFile(), b.writePosition(), reserve);
            b.write(header);
            for (StagedBatchTable.Staged<Fragment> s : part) {
                b.write(s.payload().bytes());
            }
            b.write(trailer);
            end = b.writePosition();
            q.reserver.written(end);
        } catch (RuntimeException | Error e) {
            dc.rollbackOnClose();
            throw e;
        } finally {
            dc.close();
        }
        q.written(end);
        return new long[]{first, q.appender.lastIndexAppended(), payload, frameLength};
    }

    /**
     * Maps a failed commit write to the typed error: a full disk (ENOSPC from the reservation, or a mapped page that
     * could not be backed, which the JVM reports as an {@code InternalError}) to a disk-full
     * {@link dev.lattice.spi.ProviderUnavailableException}; never lets an {@link Error} escape.
     */
    private WalStorageException mapFailure(Throwable e, long through) {
        String what = "writing the commit through " + through + " failed"
                + (documentsBegun > 0 ? "; its outcome is known after the next call reloads the log"
                : "; nothing was written");
        if (e instanceof WalStorageException w) {
            return w;
        }
        if (e instanceof InternalError && e.getMessage() != null && e.getMessage().contains("unsafe memory access")) {
            return StorageErrors.diskFull(id, queueDir, what + " (a page of the memory-mapped file could not be "
                    + "backed: the file system is out of space, or the file could not be extended)", e);
        }
        if (StorageErrors.isDiskFull(e)) {
            return StorageErrors.diskFull(id, queueDir, what, e);
        }
        return new WalStorageException(id, what, e);
    }
}
