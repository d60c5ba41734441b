package dev.lattice.provider.chronicle;

import java.util.ArrayList;
import java.util.List;

/**
 * The recovery scan's decisions: which frames of a log's queue are committed. The writer starts every commit group
 * at its committed tail + 1 and moves its tail only after the whole group is written, so: a group is committed once
 * its last frame is present; an incomplete group followed by a group starting at the same offset is an abandoned
 * write; a frame that starts above the committed point proves everything below it was committed, so offsets in
 * between that no intact frame holds are marked corrupt rather than skipped. A group with a damaged frame is kept
 * tentative until such proof arrives. At the end ({@link #finish(long, List)}) what is still tentative is a torn
 * tail and discarded only when no evidence (intact frames of a later group in the raw file, Chronicle's own record
 * of a later complete record, the durable tail record) shows it was committed; otherwise it is corruption.
 *
 * <p>Feed documents in queue order with {@link #document}, then call {@link #finish(long, List)} once and read
 * {@link #accepted}, {@link #next}, {@link #leftovers} and {@link #hiddenPayloadBytes}. Not thread-safe.
 */
final class FrameScanner {
    /** One indexed range: a frame, or a corrupt range with index {@link FrameIndex#CORRUPT}. */
    record Item(long first, long last, long index, int payload, int frameBytes) {
    }

    private static final class Group {
        final long groupFirst;
        final long groupThrough;
        final long epoch;
        final long start;
        long nextOff;
        boolean damaged;
        int docs;
        final List<Item> items = new ArrayList<>();
        long hidden;

        Group(Frames.Header h, long start) {
            this.groupFirst = h.groupFirst();
            this.groupThrough = h.groupThrough();
            this.epoch = h.epoch();
            this.start = start;
            this.nextOff = start;
        }

        boolean complete() {
            return nextOff > groupThrough;
        }
    }

    private final long w;
    long next;
    private boolean anyAccepted;
    private Group p;
    private int badDocs;
    private boolean recordsAfterEnd;
    long leftovers;
    long hiddenPayloadBytes;
    final List<Item> accepted = new ArrayList<>();

    FrameScanner(long watermark) {
        this.w = watermark;
        this.next = watermark + 1;
    }

    /**
     * Judges one document.
     *
     * @return true when it holds an intact frame (header and body)
     */
    boolean document(long index, byte[] doc) {
        return document(index, doc, doc.length);
    }

    /**
     * Judges one document held in the first {@code length} bytes of {@code doc} (a buffer the caller reuses: this
     * scanner keeps no reference to it).
     *
     * @param index the document's Chronicle index
     * @param doc a buffer holding the document from position 0
     * @param length the document's length in bytes, at most {@code doc.length}
     * @return true when it holds an intact frame (header and body)
     */
    boolean document(long index, byte[] doc, int length) {
        Frames.Header h = Frames.readHeader(doc, length);
        if (h == null) {
            badDocs++;
            return false;
        }
        boolean bodyOk = Frames.checkBody(doc, length, h) == null;
        if (h.last() <= w) {
            return bodyOk;
        }
        boolean sameGroup = p != null && !p.complete() && h.groupFirst() == p.groupFirst
                && h.groupThrough() == p.groupThrough && h.epoch() == p.epoch && h.first() > p.start;
        boolean trimStart = !anyAccepted && h.first() <= w + 1;
        if (sameGroup && h.first() >= p.nextOff) {
            if (h.first() > p.nextOff) {
                addCorrupt(p, p.nextOff, h.first() - 1);
            }
        } else if (h.first() == h.groupFirst() || trimStart) {
            long start = h.first();
            if (start > next) {
                proveThrough(start - 1);
            } else if (start == next || trimStart) {
                discard();
            } else {
                leftovers++;
                return bodyOk;
            }
            p = new Group(h, start);
        } else if (h.groupFirst() >= next) {
            if (h.groupFirst() > next) {
                proveThrough(h.groupFirst() - 1);
            } else {
                discard();
            }
            p = new Group(h, h.groupFirst());
            addCorrupt(p, h.groupFirst(), h.first() - 1);
        } else {
            leftovers++;
            return bodyOk;
        }
        badDocs = 0;
        p.docs++;
        if (bodyOk) {
            p.items.add(new Item(h.first(), h.last(), index, h.payloadBytes(), length));
            if (h.first() <= w) {
                p.hidden = Frames.payloadBytesThrough(doc, h, w);
            }
        } else {
            p.damaged = true;
            p.items.add(new Item(h.first(), h.last(), FrameIndex.CORRUPT, h.payloadBytes(), length));
        }
        p.nextOff = h.last() + 1;
        if (p.complete() && !p.damaged) {
            acceptGroup(p.groupThrough);
        }
        return bodyOk;
    }

    private static void addCorrupt(Group g, long from, long to) {
        if (from <= to) {
            g.damaged = true;
            g.items.add(new Item(from, to, FrameIndex.CORRUPT, 0, 0));
            g.nextOff = to + 1;
        }
    }

    /** Everything through {@code end} is proven committed; use the pending group where it covers it. */
    private void proveThrough(long end) {
        if (p != null && p.start <= next) {
            long covered = Math.min(end, p.nextOff - 1);
            p.items.removeIf(it -> it.first > end);
            acceptGroup(covered);
        } else {
            discard();
        }
        if (next <= end) {
            accepted.add(new Item(Math.max(next, w + 1), end, FrameIndex.CORRUPT, 0, 0));
            next = end + 1;
        }
        anyAccepted = true;
        badDocs = 0;
    }

    private void acceptGroup(long through) {
        boolean wasEmpty = accepted.isEmpty();
        for (Item it : p.items) {
            if (it.last > w) {
                accepted.add(it.index == FrameIndex.CORRUPT && it.first <= w
                        ? new Item(w + 1, it.last, it.index, it.payload, it.frameBytes) : it);
            }
        }
        if (wasEmpty && !accepted.isEmpty() && accepted.get(0).first <= w) {
            hiddenPayloadBytes = p.hidden;
        }
        next = Math.max(next, through + 1);
        anyAccepted = true;
        p = null;
        badDocs = 0;
    }

    private void discard() {
        if (p != null) {
            leftovers += p.docs;
            p = null;
        }
        leftovers += badDocs;
        badDocs = 0;
    }

    /** A document Chronicle could not return at all (its record header is unreadable). */
    void unreadable() {
        badDocs++;
    }

    /** Chronicle's file header names a complete document after the last one it returned. */
    void unreadableAfterEnd() {
        recordsAfterEnd = true;
    }

    /**
     * Ends the scan. What is left tentative (an incomplete or damaged last group, unreadable documents) is a torn
     * tail, discarded, only when nothing proves it was committed; it is corruption (a corrupt range from the first
     * missing offset) when an intact frame of a later group lies past it in the raw file, or when the durably
     * recorded committed tail is above it. The tail never goes below {@code knownTail}.
     *
     * @param knownTail the committed tail recorded durably, -1 when none
     * @param raw intact frame headers found past the last record Chronicle returned
     */
    void finish(long knownTail, List<Frames.Header> raw) {
        long tornStart = p != null ? p.start : next;
        long proven = -1;
        for (Frames.Header h : raw) {
            if (h.groupFirst() > tornStart) {
                proven = Math.max(proven, h.last());
            }
        }
        proven = Math.max(proven, knownTail);
        if (recordsAfterEnd) {
            // at least the first offset after what was read was committed; how many more is unknown
            proven = Math.max(proven, p != null ? Math.max(p.nextOff - 1, next) : next);
        }
        if (proven >= Math.max(next, w + 1)) {
            proveThrough(proven);
        }
        discard();
    }

    /** Ends a scan with no durable tail and no raw frames (unit tests of the document rules). */
    void finish() {
        finish(-1, List.of());
    }
}
