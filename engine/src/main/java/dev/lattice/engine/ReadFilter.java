package dev.lattice.engine;

import dev.lattice.engine.lsm.RangeTombstone;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * What reads hide beyond point deletes: values whose expiry has passed on the reader's clock, and values a visible
 * range delete covers (its version above theirs) in the memtable, a frozen memtable or a run. Stateless.
 */
final class ReadFilter {

    private ReadFilter() {
    }

    /** @return true when a read at {@code snapshot} and {@code nowMillis} must not see {@code v} for {@code key} */
    static boolean hidden(String key, Versioned v, long snapshot, long nowMillis, List<MemRange> memtable,
                          PartitionLayers.Layers layers, Map<RangeTombstone, Txn> gates) {
        if (v.expiredAt(nowMillis)) {
            return true;
        }
        long version = v.version();
        for (int i = 0, n = memtable.size(); i < n; i++) {
            if (memtable.get(i).hides(key, version, snapshot)) {
                return true;
            }
        }
        List<RangeTombstone> below = layers.ranges();
        if (below.isEmpty()) {
            return false;
        }
        for (RangeTombstone r : below) {
            if (r.hides(key, version)) {
                Txn gate = gates.isEmpty() ? null : gates.get(r);
                if (gate == null || (gate.seq > 0 && gate.seq <= snapshot)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Filters a partition scan: entries become {@link Versioned} values as of {@code snapshot}, without those
     * {@link #hidden} hides. The layers' range deletes are read once the first entry is asked for. One entry object
     * is refilled for each key (read it before the next call).
     */
    static Iterator<Map.Entry<String, Object>> filter(Iterator<Map.Entry<String, Object>> in, long snapshot,
                                                      long nowMillis, List<MemRange> memtable,
                                                      PartitionLayers.Layers layers, Map<RangeTombstone, Txn> gates) {
        return new Iterator<>() {
            private final PartitionLayers.Slot slot = new PartitionLayers.Slot();
            private Map.Entry<String, Object> next;

            @Override
            public boolean hasNext() {
                while (next == null && in.hasNext()) {
                    Map.Entry<String, Object> e = in.next();
                    Versioned v = PartitionState.at(e.getValue(), snapshot);
                    if (v != null && !hidden(e.getKey(), v, snapshot, nowMillis, memtable, layers, gates)) {
                        next = slot.set(e.getKey(), v);
                    }
                }
                return next != null;
            }

            @Override
            public Map.Entry<String, Object> next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Map.Entry<String, Object> e = next;
                next = null;
                return e;
            }
        };
    }
}
