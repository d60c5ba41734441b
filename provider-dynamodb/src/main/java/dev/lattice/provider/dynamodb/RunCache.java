package dev.lattice.provider.dynamodb;

import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The run store's read cache (docs/providers/dynamodb.md, "Run read cache"): run headers and verified chunk payloads
 * of one provider instance, least recently used first out, bounded by a byte budget ({@code runCacheBytes}) that
 * counts each chunk's payload plus {@value #ENTRY_OVERHEAD_BYTES} bytes and each header as
 * {@value #HEADER_BYTES} bytes. A chunk is keyed by (log, run, header generation, index), so chunks of two writes
 * of the same id never mix.
 *
 * <p><b>Why not Caffeine:</b> its W-TinyLFU admission turns away a new entry whose frequency is below the eviction
 * victim's, and its admission window is 1 % of the budget, smaller than one 400 KB chunk; in a probe with 400 KB
 * entries in 4 MiB, three sequential passes over 60 chunks (6 reads each) loaded 633 chunks instead of 180. A
 * sequential read needs the chunk just fetched to stay, which plain LRU guarantees.
 *
 * <p><b>Deletes:</b> {@link #invalidate} removes a run's entries and raises its stripe's stamp. Every insert carries
 * the stamp its caller read <em>before</em> the backend request that produced the value, and is dropped when the
 * stamp has changed since: a header or chunk fetched before a delete can never be inserted after the delete's
 * invalidation. Stamp checks, inserts and invalidations happen under one lock, so no interleaving escapes this.
 *
 * <p>A budget of 0 turns the cache off: nothing is stored, every lookup misses. Thread-safe (one monitor; every
 * operation is a few map operations, far shorter than the backend requests it saves).
 */
final class RunCache {

    /** Bytes charged for each cached chunk on top of its payload (key, map node, array header): an estimate. */
    static final int ENTRY_OVERHEAD_BYTES = 128;
    /** Bytes charged for each cached header (its record, key, map node and read-ahead state): an estimate. */
    static final int HEADER_BYTES = 256;
    private static final int STRIPES = 256;

    /** A run of a log. */
    record RunKey(LogId log, RunId id) {
    }

    private record ChunkKey(RunKey run, long generation, int index) {
    }

    private record Entry(RunKey run, Object value, int weight) {
    }

    /** A cached header and the read-ahead state of its run. Thread-safe. */
    static final class CachedRun {
        final RunHeader header;
        private volatile int nextChunk = -1;

        CachedRun(RunHeader header) {
            this.header = header;
        }

        /** @return the index after the last chunk a read of this run fetched from the backend, or -1 */
        int nextChunk() {
            return nextChunk;
        }

        /** @param next the index after the last chunk just fetched */
        void fetchedUpTo(int next) {
            nextChunk = next;
        }
    }

    private final long maxBytes;
    private final LinkedHashMap<Object, Entry> lru = new LinkedHashMap<>(64, 0.75f, true);
    private final Map<RunKey, Set<Object>> byRun = new HashMap<>();
    private final long[] stamps = new long[STRIPES];
    private long bytes;

    /**
     * @param maxBytes the budget in bytes, 0 for no cache
     * @throws IllegalArgumentException if negative
     */
    RunCache(long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("option 'runCacheBytes' must not be negative, got " + maxBytes);
        }
        this.maxBytes = maxBytes;
    }

    /** @return whether anything is ever cached */
    boolean enabled() {
        return maxBytes > 0;
    }

    /** @return the budget in bytes */
    long maxBytes() {
        return maxBytes;
    }

    /** @return the bytes charged for what is cached now, at most {@link #maxBytes()} */
    synchronized long sizeBytes() {
        return bytes;
    }

    private static int stripe(RunKey run) {
        return Math.floorMod(run.hashCode(), STRIPES);
    }

    /**
     * The run's invalidation stamp; read it before the backend request whose result is to be inserted.
     *
     * @param run the run
     * @return the stamp
     */
    synchronized long stamp(RunKey run) {
        return stamps[stripe(run)];
    }

    /**
     * @param run the run
     * @return its cached header, or null
     */
    synchronized CachedRun header(RunKey run) {
        Entry e = lru.get(run);
        return e == null ? null : (CachedRun) e.value;
    }

    /**
     * Caches a header read from the backend (or just written), unless the run was invalidated since {@code stamp}.
     * A cached entry with an equal header is kept (with its read-ahead state).
     *
     * @param run the run
     * @param header its header
     * @param stamp {@link #stamp} read before the header was read
     * @return the cached entry, or an uncached one holding {@code header}
     */
    synchronized CachedRun putHeader(RunKey run, RunHeader header, long stamp) {
        Entry e = lru.get(run);
        if (e != null && ((CachedRun) e.value).header.equals(header)) {
            return (CachedRun) e.value;
        }
        if (e != null) {
            removeRun(run); // another write of the id (deleted and written again elsewhere): drop the old chunks
        }
        CachedRun c = new CachedRun(header);
        insert(run, run, c, HEADER_BYTES, stamp);
        return c;
    }

    /**
     * @param run the run
     * @param generation the generation of its header
     * @param index the chunk index
     * @return the chunk's verified payload (never to be modified), or null
     */
    synchronized byte[] chunk(RunKey run, long generation, int index) {
        Entry e = lru.get(new ChunkKey(run, generation, index));
        return e == null ? null : (byte[]) e.value;
    }

    /**
     * Caches a chunk's payload after its checks passed, unless the run was invalidated since {@code stamp}.
     *
     * @param run the run
     * @param generation the generation of the header the chunk belongs to
     * @param index the chunk index
     * @param payload the verified payload (never modified afterwards)
     * @param stamp {@link #stamp} read before the chunk was fetched
     */
    synchronized void putChunk(RunKey run, long generation, int index, byte[] payload, long stamp) {
        insert(run, new ChunkKey(run, generation, index), payload, payload.length + ENTRY_OVERHEAD_BYTES, stamp);
    }

    private void insert(RunKey run, Object key, Object value, int weight, long stamp) {
        if (weight > maxBytes || stamps[stripe(run)] != stamp) {
            return;
        }
        Entry old = lru.put(key, new Entry(run, value, weight));
        if (old != null) {
            bytes -= old.weight;
        }
        bytes += weight;
        byRun.computeIfAbsent(run, k -> new HashSet<>()).add(key);
        for (Iterator<Map.Entry<Object, Entry>> it = lru.entrySet().iterator(); bytes > maxBytes && it.hasNext(); ) {
            Map.Entry<Object, Entry> eldest = it.next();
            it.remove();
            forgetKey(eldest.getValue().run, eldest.getKey());
            bytes -= eldest.getValue().weight;
        }
    }

    private void forgetKey(RunKey run, Object key) {
        Set<Object> keys = byRun.get(run);
        if (keys != null) {
            keys.remove(key);
            if (keys.isEmpty()) {
                byRun.remove(run);
            }
        }
    }

    private void removeRun(RunKey run) {
        Set<Object> keys = byRun.remove(run);
        if (keys != null) {
            for (Object k : keys) {
                Entry e = lru.remove(k);
                if (e != null) {
                    bytes -= e.weight;
                }
            }
        }
    }

    /**
     * Forgets a run (its header and every chunk of every generation) and stops inserts of values fetched before
     * this call. Called after a delete removed (or tried to remove) the run's header, and when a read finds the
     * cached header stale.
     *
     * @param run the run
     */
    synchronized void invalidate(RunKey run) {
        stamps[stripe(run)]++;
        removeRun(run);
    }

    /**
     * Forgets every run of a log (a dropped log) and stops every insert of a value fetched before this call.
     *
     * @param log the log
     */
    synchronized void invalidateLog(LogId log) {
        for (int i = 0; i < STRIPES; i++) {
            stamps[i]++;
        }
        List<RunKey> gone = new ArrayList<>();
        for (RunKey r : byRun.keySet()) {
            if (r.log().equals(log)) {
                gone.add(r);
            }
        }
        for (RunKey r : gone) {
            removeRun(r);
        }
    }

    /** Forgets everything (the provider closed) and stops every insert of a value fetched before this call. */
    synchronized void clear() {
        for (int i = 0; i < STRIPES; i++) {
            stamps[i]++;
        }
        lru.clear();
        byRun.clear();
        bytes = 0;
    }
}
