package dev.lattice.engine;

import dev.lattice.engine.lsm.RangeTombstone;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The range deletes of a partition's memtable and what compaction must know about them. Written by the partition's
 * applier only (copy on write); read by any thread: readers take {@link #list} before the partition's layers, as
 * they take the memtable map, since a freeze moves range deletes down into the frozen memtable.
 */
final class MemtableRanges {

    /** The memtable's range deletes, in the order applied. */
    volatile List<MemRange> list = List.of();
    /**
     * Range deletes that a freeze wrote into a run while an open snapshot predated them: each hides nothing for
     * snapshots before its write's publication, and compaction does not apply it, until no such snapshot is open.
     */
    final Map<RangeTombstone, Txn> gates = new ConcurrentHashMap<>();
    /** The lowest version applied to the memtable since its freeze (range deletes older than it hide nothing there). */
    private volatile long minVersion = Long.MAX_VALUE;

    /**
     * What a freeze hands to the frozen memtable; {@code kept} and {@code nextMinVersion} become the memtable's once
     * the frozen memtable is readable ({@link #publish}).
     */
    record Frozen(List<RangeTombstone> ranges, long minVersion, long keptBytes, List<MemRange> kept,
                  long nextMinVersion) {
    }

    void noteVersion(long version) {
        if (version < minVersion) {
            minVersion = version;
        }
    }

    long minVersion() {
        return minVersion;
    }

    /** Adds a range delete; returns its memory estimate. */
    long add(MemRange r) {
        List<MemRange> next = new ArrayList<>(list.size() + 1);
        next.addAll(list);
        next.add(r);
        list = List.copyOf(next);
        return MemRange.estimate(r.from, r.to);
    }

    /** Removes the range deletes of an aborted atomic write; returns the estimate given back (negative). */
    long remove(Txn t) {
        List<MemRange> next = new ArrayList<>(list);
        long delta = 0;
        for (MemRange r : list) {
            if (r.txn == t) {
                delta -= MemRange.estimate(r.from, r.to);
            }
        }
        if (next.removeIf(r -> r.txn == t)) {
            list = List.copyOf(next);
        }
        return delta;
    }

    /** Folds published range deletes no open snapshot predates; ends the gates of those snapshots that closed. */
    void fold(long horizon) {
        if (!gates.isEmpty()) {
            gates.values().removeIf(t -> t.seq > 0 && t.seq <= horizon);
        }
        List<MemRange> rs = list;
        boolean any = false;
        for (MemRange r : rs) {
            any |= r.txn != null && r.foldable(horizon);
        }
        if (!any) {
            return;
        }
        List<MemRange> next = new ArrayList<>(rs.size());
        for (MemRange r : rs) {
            if (r.txn != null && r.foldable(horizon)) {
                noteVersion(r.txn.version);
                next.add(r.folded());
            } else {
                next.add(r);
            }
        }
        list = List.copyOf(next);
    }

    /** @return true while a range delete waits for an open snapshot or its write's outcome */
    boolean chained() {
        if (list.isEmpty()) {
            return false; // no iterator per applied batch
        }
        for (MemRange r : list) {
            if (r.txn != null) {
                return true;
            }
        }
        return false;
    }

    /** @return true when nothing waits for a snapshot to close */
    boolean settled() {
        return !chained() && gates.isEmpty();
    }

    /**
     * At a freeze: committed range deletes go down with the frozen memtable (into its run; gated when an open
     * snapshot predates them); pending ones stay (the manifest's engine state holds their prepares). Changes only
     * the gates: the memtable keeps its list until {@link #publish}, called once the frozen memtable is a layer, so
     * that a reader (list, then memtable, then layers) finds each range delete in one or the other.
     *
     * @param horizon the oldest open snapshot
     * @param nextMinVersion the lowest version the next memtable starts with (its moved chains)
     */
    Frozen freeze(long horizon, long nextMinVersion) {
        List<RangeTombstone> down = new ArrayList<>();
        List<MemRange> kept = new ArrayList<>();
        long keptBytes = 0;
        for (MemRange r : list) {
            if (r.foldable(horizon)) {
                down.add(r.persisted());
            } else if (r.txn.seq > 0) {
                RangeTombstone p = r.persisted();
                gates.put(p, r.txn); // before the frozen memtable becomes readable
                down.add(p);
            } else {
                kept.add(r);
                keptBytes += MemRange.estimate(r.from, r.to);
            }
        }
        return new Frozen(List.copyOf(down), minVersion, keptBytes, List.copyOf(kept), nextMinVersion);
    }

    /** After a freeze, once the frozen memtable is a layer: the memtable keeps only what {@code f} did not take. */
    void publish(Frozen f) {
        list = f.kept();
        minVersion = f.nextMinVersion();
    }

    /**
     * The lowest version an entry above the runs may have, for compaction: a range delete at or below it hides
     * nothing there. 0 while atomic writes are unresolved in the partition or range deletes wait (their versions
     * are not settled).
     */
    long floorAboveRuns(boolean unresolved, List<FrozenMemtable> frozen) {
        if (unresolved || chained()) {
            return 0;
        }
        long floor = minVersion;
        for (FrozenMemtable f : frozen) {
            floor = Math.min(floor, f.minVersion());
        }
        return floor;
    }

    void clear() {
        list = List.of();
        gates.clear();
        minVersion = Long.MAX_VALUE;
    }
}
