package dev.lattice.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A memtable that stopped taking writes and waits to be flushed as a level-0 run (ARCHITECTURE.md 5.3). Its map is
 * no longer written; keys that held atomic-write chains at the freeze moved on to the new memtable, and what the run
 * must hold for them was decided at the freeze ({@code chainViews}), so the flush never reads a chain that the
 * applier still changes.
 *
 * @param map the frozen entries ({@link Versioned}, {@link Tombstone}, or chains shadowed by the new memtable)
 * @param chainViews for chained keys: the committed view for the run ({@link Versioned}, {@link Tombstone}, or
 *     {@link #NOTHING} when the run needs nothing for the key)
 * @param throughOffset the last log offset applied before the freeze; the manifest of this flush covers it
 * @param maxVersion the highest version given out before the freeze
 * @param engineState the pending atomic writes and decisions as of the freeze (manifest engine state)
 * @param estimateBytes the memory estimate of the entries it holds (given back once flushed)
 * @param ranges its range deletes (folded: visible to every snapshot), written into its run
 * @param minVersion the lowest version applied to it ({@code Long.MAX_VALUE} when none)
 */
record FrozenMemtable(ConcurrentSkipListMap<String, Object> map, Map<String, Object> chainViews, long throughOffset,
                      long maxVersion, byte[] engineState, long estimateBytes,
                      java.util.List<dev.lattice.engine.lsm.RangeTombstone> ranges, long minVersion) {

    /** The chain view of a key the run needs nothing for. */
    static final Object NOTHING = new Object();
}
