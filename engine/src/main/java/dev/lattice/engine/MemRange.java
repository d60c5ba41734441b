package dev.lattice.engine;

import dev.lattice.engine.lsm.RangeTombstone;

/**
 * A range delete in a memtable: hides the partition's entries with a key in {@code [from, to)} and a smaller version.
 * Written by an atomic write ({@code txn} set: visible to snapshots at or after its publication, nothing while
 * pending) or folded ({@code txn} null: visible to everyone) once no open snapshot predates it. Immutable.
 */
final class MemRange {
    final String from;
    final String to;
    private final long version;
    final Txn txn;

    MemRange(String from, String to, long version, Txn txn) {
        this.from = from;
        this.to = to;
        this.version = version;
        this.txn = txn;
    }

    /** @return the range delete's version (its atomic write's, once published) */
    long version() {
        return txn == null ? version : txn.version;
    }

    boolean visibleAt(long snapshot) {
        if (txn == null) {
            return true;
        }
        long seq = txn.seq;
        return seq > 0 && seq <= snapshot;
    }

    boolean contains(String key) {
        return key.compareTo(from) >= 0 && key.compareTo(to) < 0;
    }

    /** @return true when visible at {@code snapshot} and hiding an entry of {@code key} at {@code entryVersion} */
    boolean hides(String key, long entryVersion, long snapshot) {
        return visibleAt(snapshot) && entryVersion < version() && contains(key);
    }

    /** @return true once it can be folded: published at or before {@code horizon} */
    boolean foldable(long horizon) {
        return txn == null || (txn.seq > 0 && txn.seq <= horizon);
    }

    MemRange folded() {
        return txn == null ? this : new MemRange(from, to, txn.version, null);
    }

    RangeTombstone persisted() {
        return new RangeTombstone(from, to, version());
    }

    static long estimate(String from, String to) {
        return PartitionState.ENTRY_OVERHEAD_BYTES + from.length() + to.length();
    }
}
