package dev.lattice.engine.lsm;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

/**
 * Merges sorted entry streams (runs, a frozen memtable) into one stream in run order (key ascending, versions of a
 * key newest first). Versions are engine sequence numbers, unique across a partition, so no stream needs priority
 * over another. Used by compaction and flush; not on the read path.
 *
 * <p>Not thread-safe.
 */
public final class EntryMerger implements Iterator<RunEntry> {

    /** One stream and its current entry; re-queued after each advance (no allocation per entry). */
    private static final class Head {
        RunEntry entry;
        final Iterator<RunEntry> source;

        Head(RunEntry entry, Iterator<RunEntry> source) {
            this.entry = entry;
            this.source = source;
        }
    }

    private final PriorityQueue<Head> heap = new PriorityQueue<>((a, b) -> {
        int c = a.entry.key().compareTo(b.entry.key());
        return c != 0 ? c : Long.compare(b.entry.version(), a.entry.version());
    });

    /**
     * Creates a merger.
     *
     * @param sources the streams, each in run order
     */
    public EntryMerger(List<? extends Iterator<RunEntry>> sources) {
        for (Iterator<RunEntry> s : sources) {
            if (s.hasNext()) {
                heap.add(new Head(s.next(), s));
            }
        }
    }

    @Override
    public boolean hasNext() {
        return !heap.isEmpty();
    }

    @Override
    public RunEntry next() {
        Head h = heap.poll();
        if (h == null) {
            throw new NoSuchElementException();
        }
        RunEntry out = h.entry;
        if (h.source.hasNext()) {
            h.entry = h.source.next();
            heap.add(h);
        }
        return out;
    }

    /**
     * Compaction's garbage collection over a merged stream: of each key's versions it keeps, for every read point
     * (each open snapshot's version and "latest"), the newest version at or below it, and drops the rest; when the
     * output is the bottommost level for its key range (nothing older exists below it), tombstones that would hide
     * nothing are dropped too. This is the rule that keeps a deleted value from reappearing: a tombstone is dropped only
     * together with every older version it hides.
     *
     * @param merged entries in run order
     * @param snapshots versions of the open snapshots, ascending
     * @param bottommost whether no older data for these keys exists below the output
     * @return the entries to write, in run order
     */
    public static Iterator<RunEntry> collect(Iterator<RunEntry> merged, long[] snapshots, boolean bottommost) {
        return new Iterator<>() {
            private final List<RunEntry> versions = new ArrayList<>(); // one key's versions, newest first
            private final List<RunEntry> out = new ArrayList<>(); // the ones kept, reused for every key
            private int outPos;
            private RunEntry pending = merged.hasNext() ? merged.next() : null;

            @Override
            public boolean hasNext() {
                while (outPos >= out.size() && pending != null) {
                    out.clear();
                    outPos = 0;
                    versions.clear();
                    String key = pending.key();
                    while (pending != null && pending.key().equals(key)) {
                        versions.add(pending);
                        pending = merged.hasNext() ? merged.next() : null;
                    }
                    keep();
                }
                return outPos < out.size();
            }

            private void keep() {
                // versions newest first; the newest is always visible at "latest"
                out.add(versions.get(0));
                int s = snapshots.length - 1;
                for (int i = 0; i < versions.size() && s >= 0; ) {
                    RunEntry v = versions.get(i);
                    if (v.version() <= snapshots[s]) {
                        if (out.get(out.size() - 1) != v) {
                            out.add(v);
                        }
                        s--;
                    } else {
                        i++;
                    }
                }
                if (bottommost) {
                    int end = out.size();
                    while (end > 0 && out.get(end - 1).tombstone()) {
                        end--;
                    }
                    out.subList(end, out.size()).clear();
                }
            }

            @Override
            public RunEntry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return out.get(outPos++);
            }
        };
    }
}
