package dev.lattice.provider.azure.blob;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import dev.lattice.provider.azure.blob.Frames.Frame;
import dev.lattice.provider.azure.blob.Manifest.LogData;
import dev.lattice.provider.azure.blob.Manifest.SegmentRef;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Finds the first damage of a log for {@code repair}: reads every committed byte above the trim watermark (segments
 * from their start position to their committed length, bypassing the cache, then the inline tail) and describes the
 * longest intact prefix of the log as a new layout, cut at a block boundary so that it stays a valid committed
 * length: the segments before the damage unchanged, the damaged segment shortened to the start of its damaged block,
 * and the intact frames of that block that precede the damage ("stranded") to be copied into a fresh segment.
 *
 * <p>Stateless between calls; not thread-safe per instance (the caller holds the log's lock).
 */
final class DamageScan {

    /** Downloads {@code count} bytes of a blob from {@code offset}; shorter when the blob ends first. */
    interface Loader {
        /**
         * @param name the blob
         * @param offset first byte
         * @param count bytes wanted
         * @return the bytes, fewer when the blob is shorter
         * @throws BlobGateway.Gone if the blob does not exist
         */
        byte[] download(String name, long offset, long count);
    }

    /**
     * What the scan found.
     *
     * @param firstBad the first offset that cannot be read, or -1 when the log is whole
     * @param segments the intact segments (the damaged one cut; none after it)
     * @param stranded intact frames of the damaged block before the damage, in order (all above the watermark)
     * @param inline the intact inline frames (none when the damage is in a segment)
     * @param dropped blobs the new layout no longer names (segments after the damage, a damaged segment left empty)
     * @param damagedSegment the segment that was cut (never to be appended to again), or null
     * @param detail what was found, for the operator
     */
    record Result(long firstBad, List<SegmentRef> segments, List<Frame> stranded, List<Frame> inline,
                  List<String> dropped, String damagedSegment, String detail) {
        boolean clean() {
            return firstBad < 0;
        }
    }

    private final LogId log;
    private final int chunkBytes;
    private final Loader loader;

    /**
     * @param log the log
     * @param chunkBytes bytes per range download
     * @param loader downloads ranges
     */
    DamageScan(LogId log, int chunkBytes, Loader loader) {
        this.log = log;
        this.chunkBytes = chunkBytes;
        this.loader = loader;
    }

    /**
     * Scans a log.
     *
     * @param d the committed log as the manifest describes it
     * @return the intact prefix and where the damage starts
     */
    Result scan(LogData d) {
        long next = d.watermark() + 1;
        List<SegmentRef> kept = new ArrayList<>();
        for (int i = 0; i < d.segments().size(); i++) {
            SegmentRef seg = d.segments().get(i);
            SegmentScan s = scanSegment(seg, next, d.watermark());
            if (s.damage == null) {
                kept.add(seg);
                next = s.next;
                continue;
            }
            List<String> dropped = new ArrayList<>();
            if (s.cut == null) {
                dropped.add(seg.name());
            } else {
                kept.add(s.cut);
            }
            for (int j = i + 1; j < d.segments().size(); j++) {
                dropped.add(d.segments().get(j).name());
            }
            return new Result(s.next, kept, s.stranded, List.of(), dropped, seg.name(),
                    "segment " + seg.name() + ": " + s.damage);
        }
        List<Frame> inline = new ArrayList<>();
        byte[] bytes = d.inline();
        int pos = 0;
        while (pos < bytes.length) {
            Frame f;
            try {
                f = Frames.parseFrame(log, bytes, pos, bytes.length, -1);
            } catch (CorruptLogException e) {
                return new Result(next, kept, List.of(), inline, List.of(), null, "inline tail of the manifest, byte "
                        + pos + ": " + BlockParser.detail(e));
            }
            if (f.firstOffset() > next || f.lastOffset() < next) {
                return new Result(next, kept, List.of(), inline, List.of(), null, "inline frame of batch " + f.id()
                        + " holds offsets " + f.firstOffset() + ".." + f.lastOffset() + " where " + next + " was due");
            }
            inline.add(f);
            next = f.lastOffset() + 1;
            pos += f.bytes().length;
        }
        if (next <= d.tail()) {
            return new Result(next, kept, List.of(), inline, List.of(), null, "the manifest's committed tail is "
                    + d.tail() + " but the stored frames end at " + (next - 1));
        }
        return new Result(-1, kept, List.of(), inline, List.of(), null, "no damage found");
    }

    /** One segment's outcome: {@code damage == null} when whole; else its cut and stranded frames. */
    private record SegmentScan(long next, String damage, SegmentRef cut, List<Frame> stranded) {
    }

    private SegmentScan scanSegment(SegmentRef seg, long next, long watermark) {
        BlockParser p = new BlockParser(log, seg.startPos(), seg.startPos() == 0 ? seg.firstOffset() : -1);
        List<Frame> frames = new ArrayList<>();
        String damage = null;
        int badFrame = -1; // index of a parsed frame that breaks the offset order, or -1
        try {
            long pos = seg.startPos();
            while (pos < seg.length() && damage == null) {
                long n = Math.min(chunkBytes, seg.length() - pos);
                byte[] data = loader.download(seg.name(), pos, n);
                List<Frame> got;
                try {
                    got = p.feed(data);
                } catch (CorruptLogException e) {
                    damage = BlockParser.detail(e);
                    break;
                }
                frames.addAll(got);
                if (p.failure() != null) {
                    damage = BlockParser.detail(p.failure());
                } else if (data.length < n) {
                    damage = "the blob ends at byte " + (pos + data.length) + ", before its committed length "
                            + seg.length();
                }
                pos += data.length;
            }
            if (damage == null && !p.atBoundary()) {
                damage = "the committed length " + seg.length() + " ends inside a frame";
            }
        } catch (BlobGateway.Gone e) {
            return new SegmentScan(next, "the blob does not exist", null, List.of());
        }
        long covered = next;
        for (int k = 0; k < frames.size(); k++) {
            Frame f = frames.get(k);
            if (f.lastOffset() < covered) {
                continue; // at or below the watermark (before the start position's first retained entry)
            }
            if (f.firstOffset() > covered) {
                badFrame = k;
                damage = "offsets " + covered + ".." + (f.firstOffset() - 1) + " are missing before batch " + f.id();
                break;
            }
            covered = f.lastOffset() + 1;
        }
        if (damage == null && covered <= seg.lastOffset()) {
            damage = "it ends at its committed length with committed offsets " + covered + ".." + seg.lastOffset()
                    + " missing";
            return new SegmentScan(covered, damage, shortened(seg, frames, frames.size(), seg.length(), watermark),
                    List.of());
        }
        if (damage == null) {
            return new SegmentScan(covered, null, null, List.of());
        }
        int end = badFrame >= 0 ? badFrame : frames.size();
        long cutPos = badFrame >= 0 ? frames.get(badFrame).blockPos() : p.cutPosition();
        List<Frame> stranded = new ArrayList<>();
        for (int k = 0; k < end; k++) {
            Frame f = frames.get(k);
            if (f.blockPos() == cutPos && f.lastOffset() > watermark) {
                stranded.add(f.firstOffset() <= watermark ? f.after(watermark) : f);
            }
        }
        return new SegmentScan(covered, damage, shortened(seg, frames, end, cutPos, watermark), stranded);
    }

    /** The segment cut at {@code cutPos} (a block boundary), keeping frames before it; null when none is kept. */
    private static SegmentRef shortened(SegmentRef seg, List<Frame> frames, int end, long cutPos, long watermark) {
        long last = -1;
        long payload = 0;
        Set<Long> blocks = new HashSet<>();
        for (int k = 0; k < end; k++) {
            Frame f = frames.get(k);
            if (f.blockPos() >= cutPos) {
                break;
            }
            blocks.add(f.blockPos());
            if (f.lastOffset() > watermark) {
                last = f.lastOffset();
                payload += f.payloadBytes() - (f.firstOffset() <= watermark ? f.payloadBytesThrough(watermark) : 0);
            }
        }
        if (last < 0) {
            return null;
        }
        return new SegmentRef(seg.name(), seg.creatorEpoch(), seg.firstOffset(), last, seg.startPos(), cutPos,
                seg.blocks(), payload);
    }
}
