package dev.lattice.provider.azure.blob;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Parsed frames of segments, downloaded in ranges up to the committed length the caller's manifest names and never
 * past it. A segment's bytes below its committed length never change, so what was parsed stays valid; a longer
 * committed length only adds a download of the new bytes. Memory is bounded by a byte budget: least recently used
 * segments are dropped, and a segment larger than the budget keeps only the frames at and after the last one served
 * (a sequential replay of a huge segment downloads it once).
 *
 * <p>Thread-safe: the map is guarded by this object's monitor, each entry by its own.
 */
final class SegmentCache {

    /** Downloads {@code count} bytes of a blob from {@code offset}. */
    interface Loader {
        /**
         * @param name the blob
         * @param offset first byte
         * @param count bytes
         * @return exactly the bytes asked for
         */
        byte[] download(String name, long offset, long count);
    }

    private final long budgetBytes;
    private final int chunkBytes;
    private final AzureBlobStats stats;
    private final LinkedHashMap<String, Entry> map = new LinkedHashMap<>(16, 0.75f, true);
    private long heldBytes;

    /**
     * @param budgetBytes memory budget, in bytes
     * @param chunkBytes bytes per range download
     * @param stats counters
     */
    SegmentCache(long budgetBytes, int chunkBytes, AzureBlobStats stats) {
        this.budgetBytes = budgetBytes;
        this.chunkBytes = chunkBytes;
        this.stats = stats;
    }

    private final class Entry {
        final String name;
        final long startPos;
        final BlockParser parser;
        final ArrayList<Frames.Frame> frames = new ArrayList<>();
        /** Lowest offset this entry can still serve (frames before it were dropped), or -1 for all. */
        long servesFrom = -1;
        /** Bytes of frames held; guarded by the cache's monitor. */
        long held;
        /** Set when the blob ended before the committed length: thrown once the frames before the cut are served. */
        CorruptLogException cut;

        Entry(LogId log, Manifest.SegmentRef seg) {
            this.name = seg.name();
            this.startPos = seg.startPos();
            // from the segment's start the first frame must hold its first offset; after a trim moved the start
            // position, the first frame there may begin at any offset up to the first retained one
            this.parser = new BlockParser(log, startPos, startPos == 0 ? seg.firstOffset() : -1);
        }
    }

    /**
     * Visits, in order, the frames of a segment that hold offsets above {@code afterOffset}, up to the segment's
     * last committed offset, downloading what is missing.
     *
     * @param log the log, for errors
     * @param seg the segment as the caller's manifest describes it
     * @param afterOffset visit frames whose last offset is above this
     * @param loader downloads ranges
     * @param visitor returns false to stop
     * @throws CorruptLogException if the committed bytes are damaged or missing: they do not parse, fail a checksum,
     *     break the offset order, end before the committed length (a truncated or shortened blob) or before the
     *     segment's last committed offset, or the committed length cuts a frame; the offset named is the first one
     *     the segment could not deliver. Never a torn tail: every byte below the committed length was acknowledged.
     * @throws BlobGateway.Gone if the segment blob was deleted meanwhile (the caller re-reads the manifest)
     */
    void scan(LogId log, Manifest.SegmentRef seg, long afterOffset, Loader loader, Predicate<Frames.Frame> visitor) {
        boolean fresh = false;
        while (true) {
            Entry e = acquire(log, seg, fresh);
            synchronized (e) {
                if (e.servesFrom >= 0 && afterOffset + 1 < e.servesFrom) {
                    fresh = true; // another reader dropped the frames we need: start over with a fresh entry
                    continue;
                }
                long lastVisited = scanLocked(log, e, seg, afterOffset, loader, visitor);
                if (e.held > budgetBytes) {
                    dropHead(e, lastVisited);
                }
            }
            evict(e);
            return;
        }
    }

    private long scanLocked(LogId log, Entry e, Manifest.SegmentRef seg, long afterOffset, Loader loader,
                            Predicate<Frames.Frame> visitor) {
        long lastVisited = afterOffset;
        int i = firstIndex(e.frames, afterOffset);
        while (true) {
            if (i < e.frames.size()) {
                Frames.Frame f = e.frames.get(i++);
                if (f.firstOffset() > seg.lastOffset()) {
                    return lastVisited;
                }
                lastVisited = f.lastOffset();
                if (!visitor.test(f)) {
                    return lastVisited;
                }
                continue;
            }
            if (e.cut != null) {
                throw e.cut;
            }
            CorruptLogException damage = e.parser.failure();
            if (damage != null) {
                throw new CorruptLogException(log, damage.offset() >= 0 ? damage.offset()
                        : firstUndelivered(e, seg, afterOffset), "segment " + seg.name() + ", "
                        + BlockParser.detail(damage), damage);
            }
            long pos = e.parser.position();
            if (pos >= seg.length()) {
                if (pos == seg.length() && !e.parser.atBoundary()) {
                    throw new CorruptLogException(log, firstUndelivered(e, seg, afterOffset), "segment " + seg.name()
                            + " ends inside a frame at its committed length " + seg.length());
                }
                long next = e.parser.nextOffset();
                if (pos == seg.length() && next >= 0 && next <= seg.lastOffset()) {
                    throw new CorruptLogException(log, next, "segment " + seg.name() + " ends at its committed length "
                            + seg.length() + " with committed offsets " + next + ".." + seg.lastOffset() + " missing");
                }
                return lastVisited;
            }
            long n = Math.min(chunkBytes, seg.length() - pos);
            byte[] data = loader.download(e.name, pos, n);
            stats.segmentRangeReads.increment();
            if (data.length > n) {
                throw new CorruptLogException(log, firstUndelivered(e, seg, afterOffset), "segment " + seg.name()
                        + " returned " + data.length + " bytes for a committed range of " + n);
            }
            int blocksBefore = e.parser.blocks();
            List<Frames.Frame> parsed;
            try {
                parsed = e.parser.feed(data);
            } catch (CorruptLogException c) {
                throw new CorruptLogException(log, c.offset() >= 0 ? c.offset() : firstUndelivered(e, seg,
                        afterOffset), "segment " + seg.name() + ", " + BlockParser.detail(c), c);
            }
            if (data.length < n) {
                // A blob shorter than its committed length (truncated or replaced): the frames before the cut are
                // intact and served; the first offset after them is the first one lost.
                e.cut = new CorruptLogException(log, firstUndelivered(e, seg, afterOffset), "segment " + seg.name()
                        + " ends at byte " + (pos + data.length) + ", before its committed length " + seg.length());
            }
            stats.segmentBlocksRead.add(e.parser.blocks() - blocksBefore);
            long added = 0;
            for (Frames.Frame f : parsed) {
                e.frames.add(f);
                added += f.bytes().length;
            }
            account(e, added);
        }
    }

    /** The first offset a scan could not deliver: the one after the last frame parsed, else the first wanted. */
    private static long firstUndelivered(Entry e, Manifest.SegmentRef seg, long afterOffset) {
        long next = e.parser.nextOffset();
        return next >= 0 ? next : Math.max(afterOffset + 1, seg.firstOffset());
    }

    private Entry acquire(LogId log, Manifest.SegmentRef seg, boolean fresh) {
        synchronized (this) {
            Entry e = map.get(seg.name());
            if (e != null && (fresh || e.startPos > seg.startPos())) {
                map.remove(seg.name());
                heldBytes -= e.held;
                e = null;
            }
            if (e == null) {
                e = new Entry(log, seg);
                map.put(seg.name(), e);
            }
            return e;
        }
    }

    private static int firstIndex(List<Frames.Frame> frames, long afterOffset) {
        int lo = 0;
        int hi = frames.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (frames.get(mid).lastOffset() <= afterOffset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Keeps only frames whose last offset is at or above the last one served. Caller holds the entry's monitor. */
    private void dropHead(Entry e, long lastVisited) {
        int k = firstIndex(e.frames, lastVisited - 1);
        if (k == 0) {
            return;
        }
        long freed = 0;
        for (int j = 0; j < k; j++) {
            freed += e.frames.get(j).bytes().length;
        }
        e.frames.subList(0, k).clear();
        e.servesFrom = e.frames.isEmpty() ? lastVisited + 1 : e.frames.get(0).firstOffset();
        account(e, -freed);
    }

    /** Adds to an entry's size; counts towards the budget only while the entry is in the map. */
    private synchronized void account(Entry e, long delta) {
        e.held += delta;
        if (map.get(e.name) == e) {
            heldBytes += delta;
        }
    }

    private synchronized void evict(Entry keep) {
        Iterator<Map.Entry<String, Entry>> it = map.entrySet().iterator();
        while (heldBytes > budgetBytes && it.hasNext()) {
            Entry e = it.next().getValue();
            if (e == keep) {
                continue;
            }
            it.remove();
            heldBytes -= e.held;
        }
    }

    /**
     * Forgets a segment (deleted or replaced).
     *
     * @param name the blob name
     */
    synchronized void forget(String name) {
        Entry e = map.remove(name);
        if (e != null) {
            heldBytes -= e.held;
        }
    }

    /** @return bytes of frames held (for tests) */
    synchronized long heldBytes() {
        return heldBytes;
    }
}
