package dev.lattice.engine.lsm;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * What flush and compaction drop besides overwritten versions: entries a range tombstone of the same merge hides
 * (their version below its own), and values whose expiry has passed, which become tombstones of the same version
 * (they must still hide older versions below the output; {@link EntryMerger#collect} drops them in the bottommost
 * level). Also decides which range tombstones a compaction keeps. Stateless, thread-safe.
 */
public final class CompactionFilter {

    private CompactionFilter() {
    }

    /**
     * Filters a stream of entries in run order.
     *
     * @param in the entries, in run order
     * @param ranges the range tombstones that apply (those of the runs or memtable being merged)
     * @param nowMillis the wall clock expiries are compared with (epoch ms)
     * @return the entries to keep, in run order
     */
    public static Iterator<RunEntry> apply(Iterator<RunEntry> in, List<RangeTombstone> ranges, long nowMillis) {
        List<RangeTombstone> rs = List.copyOf(ranges);
        return new Iterator<>() {
            private RunEntry next;

            @Override
            public boolean hasNext() {
                while (next == null && in.hasNext()) {
                    RunEntry e = in.next();
                    if (hidden(e, rs)) {
                        continue;
                    }
                    next = e.expiredAt(nowMillis) ? RunEntry.delete(e.key(), e.version()) : e;
                }
                return next != null;
            }

            @Override
            public RunEntry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                RunEntry e = next;
                next = null;
                return e;
            }
        };
    }

    private static boolean hidden(RunEntry e, List<RangeTombstone> ranges) {
        for (RangeTombstone r : ranges) {
            if (r.hides(e.key(), e.version())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The range tombstones a compaction's output keeps: all of them, except in the bottommost level, where one is
     * dropped once nothing it could hide remains (no older data below, and nothing above the runs older than it).
     *
     * @param ranges the inputs' range tombstones
     * @param bottommost whether no older data for the inputs' key range exists below the output
     * @param floorAbove the lowest version an entry above the runs may have (0 when unknown)
     * @return the range tombstones to write
     */
    public static List<RangeTombstone> keptRanges(List<RangeTombstone> ranges, boolean bottommost, long floorAbove) {
        List<RangeTombstone> out = new ArrayList<>(ranges.size());
        for (RangeTombstone r : ranges) {
            if (!bottommost || r.version() > floorAbove) {
                out.add(r);
            }
        }
        return out;
    }
}
