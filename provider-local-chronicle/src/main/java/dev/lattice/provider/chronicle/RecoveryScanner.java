package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore;
import net.openhft.chronicle.wire.DocumentContext;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.NavigableSet;

/**
 * The recovery scan of a log's queue at open (recovery part of the protocol, docs/providers/chronicle.md
 * "Recovery scan, torn frames, corruption"): reads every frame, cycle by cycle, into a {@link FrameScanner} (which decides what is committed), then
 * looks past the last record Chronicle returned in the newest cycle file for evidence that tells a torn tail (an
 * interrupted last write, discarded) from damage (intact data or a complete record after unreadable bytes, or a log
 * that ends before its durably recorded tail: corruption).
 *
 * <p>Stateless; {@link #scan} is not thread-safe with respect to the queue it reads (call it under the log's lock).
 */
final class RecoveryScanner {

    private RecoveryScanner() {
    }

    /**
     * Scans a queue.
     *
     * @param id the log (for errors)
     * @param q the open queue
     * @param watermark the trim watermark (-1 when never trimmed); frames wholly at or below it are skipped
     * @param knownTail the committed tail recorded durably (tail and trim records), -1 when none
     * @param maxDocumentBytes the largest frame the provider writes (bounds the raw search), bytes
     * @return the finished scanner: its {@code accepted} frames and corrupt ranges, {@code next} (committed tail +
     *         1), {@code leftovers} and {@code hiddenPayloadBytes}
     * @throws WalStorageException if the newest cycle file cannot be read
     */
    static FrameScanner scan(LogId id, LogQueue q, long watermark, long knownTail, int maxDocumentBytes) {
        FrameScanner s = new FrameScanner(watermark);
        SingleChronicleQueue queue = q.queue;
        RollCycle rc = queue.rollCycle();
        int firstCycle = queue.firstCycle();
        int lastCycle = queue.lastCycle();
        List<Frames.Header> raw = List.of();
        if (firstCycle != Integer.MAX_VALUE && lastCycle != Integer.MIN_VALUE) {
            NavigableSet<Long> cycles = queue.listCyclesBetween(firstCycle, lastCycle);
            ExcerptTailer t = q.tailer();
            long nextCycle = Long.MIN_VALUE;
            long newestEnd = 0;
            long newestHeader = -1;
            long newestIntactHeader = -1;
            // one buffer for every document of the scan (the scanner keeps no reference to it)
            FrameReads.FrameBuffer buf = new FrameReads.FrameBuffer();
            for (long cycle : cycles) {
                if (cycle < nextCycle || !t.moveToIndex(rc.toIndex((int) cycle, 0))) {
                    continue;
                }
                try {
                    while (true) {
                        try (DocumentContext dc = t.readingDocument()) {
                            if (!dc.isPresent()) {
                                break;
                            }
                            long index = dc.index();
                            Bytes<?> b = dc.wire().bytes();
                            long end = b.readLimit();
                            boolean newest = rc.toCycle(index) == lastCycle;
                            if (newest) {
                                newestHeader = b.readPosition() - 4;
                            }
                            int length = (int) b.readRemaining();
                            b.read(buf.ensure(length), 0, length);
                            if (s.document(index, buf.bytes, length) && newest) {
                                newestEnd = end; // the raw search starts after the last intact frame
                                newestIntactHeader = newestHeader;
                            }
                            nextCycle = rc.toCycle(index) + 1L;
                        }
                    }
                } catch (RuntimeException unreadable) {
                    // a record header Chronicle cannot parse: what follows is judged below and by the next cycle
                    s.unreadable();
                    q.resetTailer();
                    t = q.tailer();
                }
            }
            raw = checkNewestEnd(id, q, s, lastCycle, newestHeader, newestIntactHeader, newestEnd, maxDocumentBytes);
        }
        s.finish(knownTail, raw);
        return s;
    }

    /**
     * Looks past the last record Chronicle returned in the newest cycle file. Chronicle records the header position
     * of its last complete record in the file's header on every append. When that is the last intact frame we read,
     * the end is clean and nothing more is read. Otherwise: a complete record after the one that follows the last
     * intact frame, or a last complete record that no longer reads as a data record (its 4-byte header is stored in
     * one write when the record completes, so this is not a torn write) is evidence of unreadable committed records;
     * and the raw bytes are searched for intact frames of later groups ({@link RawFrameFinder}).
     *
     * @return the intact frame headers found in the raw bytes
     */
    private static List<Frames.Header> checkNewestEnd(LogId id, LogQueue q, FrameScanner s, int cycle,
            long newestHeader, long newestIntactHeader, long newestEnd, int maxDocumentBytes) {
        SingleChronicleQueue queue = q.queue;
        Path file = q.cycleFile(cycle);
        long last = -1;
        SingleChronicleQueueStore store = queue.storeForCycle(cycle, queue.epoch(), false, null);
        if (store != null) {
            try {
                last = store.writePosition();
            } finally {
                queue.closeStore(store);
            }
        }
        if (last >= 0 && last == newestIntactHeader) {
            return List.of(); // Chronicle's last complete record is the last intact frame
        }
        try {
            if (newestEnd > 0 && last >= 0) {
                long next = RawFrameFinder.firstDataRecordAt(file, (newestEnd + 3) & ~3L);
                if (last > next || (last > newestHeader && !RawFrameFinder.isDataRecordHeader(file, last))) {
                    s.unreadableAfterEnd();
                }
            }
            return RawFrameFinder.find(file, newestEnd, maxDocumentBytes);
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot read the newest cycle file " + file, e);
        }
    }
}
