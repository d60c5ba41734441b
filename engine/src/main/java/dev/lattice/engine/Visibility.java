package dev.lattice.engine;

import java.util.TreeMap;

/**
 * Engine-wide publication of atomic writes and the snapshots that read them. Publishing gives a write the next
 * sequence number; a snapshot read (getAll, scan) takes the current sequence {@code S} and sees exactly the atomic
 * writes published at or before {@code S}. Open snapshots are counted so that older versions a snapshot may still
 * need are kept until it closes ({@link #horizon()}). Thread-safe (publication and snapshot registration share one
 * monitor; {@link #current()} is a volatile read).
 */
final class Visibility {
    private volatile long visible;
    private final TreeMap<Long, Integer> open = new TreeMap<>();

    /** Makes {@code t} visible everywhere at once, with {@code version}; no-op if it already is. */
    synchronized void publish(Txn t, long version) {
        if (t.seq > 0) {
            return;
        }
        t.version = version;
        long s = visible + 1;
        t.seq = s;
        visible = s;
    }

    long current() {
        return visible;
    }

    /** @return the snapshot sequence, registered until {@link #closeSnapshot} */
    synchronized long openSnapshot() {
        long s = visible;
        open.merge(s, 1, Integer::sum);
        return s;
    }

    synchronized void closeSnapshot(long s) {
        open.computeIfPresent(s, (k, n) -> n == 1 ? null : n - 1);
    }

    /** @return the oldest open snapshot, or {@link Long#MAX_VALUE} when none is open */
    synchronized long horizon() {
        return open.isEmpty() ? Long.MAX_VALUE : open.firstKey();
    }
}
