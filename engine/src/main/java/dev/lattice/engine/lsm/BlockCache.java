package dev.lattice.engine.lsm;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongFunction;

/**
 * The process-wide cache of decoded run blocks, bounded in bytes (Caffeine, weighted by each block's size). Runs are
 * immutable, so a block is identified by the reader of its run (a number unique in the process) and its position, and
 * never invalidated; a deleted run's blocks age out.
 *
 * <p>The bound is split over up to {@value #MAX_SHARDS} shards (at least {@value #MIN_SHARD_BYTES} bytes each), each a
 * Caffeine cache with its own eviction lock, whose upkeep runs on the thread that triggers it: with one cache and its
 * upkeep on the common pool, a read-heavy load that misses on most gets (every miss is an insert and an eviction)
 * filled its write buffer faster than the single upkeep task drained it, and readers parked on its lock (YCSB C,
 * 16 threads, 2 cores: 815 parks over 10 ms in a 6 s phase). A miss reads the block outside any lock and then inserts
 * it, so readers of other blocks never wait for its read; two readers missing on one block may both read it.
 *
 * <p>Until a shard first evicts, every miss is inserted; from then on a miss is inserted only on its second miss
 * within a window ({@link Doorkeeper}), so blocks read once (most misses of a read load much larger than the cache,
 * and scans) cost no insert and no eviction: YCSB C at 1M records, 64 MiB, 16 threads went from 0.51x to 0.67x
 * RocksDB with the hit ratio unchanged (0.396, 0.386; docs/benchmarks.md).
 *
 * <p>At most one thread inserts into a shard at a time; a miss that finds another insert under way in its shard is
 * not inserted (it is read as a block the cache does not admit). Caffeine blocks an inserting thread on the shard's
 * eviction lock once its write buffer is full, and on 2 cores with 64 reading threads the thread holding that lock
 * was preempted for up to a second while every other inserter of the shard parked behind it (YCSB C, 100,000
 * records, 64 threads: 45 reader parks totalling 7.8 s in a 1.8 s phase, read maximum 0.66-0.94 s); now at most
 * one thread per shard can wait there, and reads never do.
 *
 * <p>Thread-safe.
 */
public final class BlockCache {

    /** The most shards a cache is split into. */
    static final int MAX_SHARDS = 16;
    /** The least bytes a shard holds (a smaller bound gets fewer shards). */
    static final long MIN_SHARD_BYTES = 1L << 20;
    /** The block size the doorkeeper's window is sized for (the smallest default block size). */
    private static final long ASSUMED_BLOCK_BYTES = 4096;

    /** A block's name: its reader and position (a plain class: a record's generated equals was a hot spot). */
    private static final class Key {
        final long reader;
        final long position;
        final int hash;

        Key(long reader, long position) {
            this.reader = reader;
            this.position = position;
            long h = reader * 0x9E3779B97F4A7C15L + position;
            h ^= h >>> 29;
            h *= 0xBF58476D1CE4E5B9L;
            this.hash = (int) (h ^ (h >>> 32));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.position == position && k.reader == reader;
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private final Cache<Key, DataBlock>[] shards;
    /** Per shard: 1 while a thread inserts into it. */
    final AtomicIntegerArray inserting; // package-private for BlockCacheTest
    private final LongAdder insertsSkipped = new LongAdder();
    /** Set once a shard first evicts: from then on a miss is inserted only if the {@link #doorkeeper} admits it. */
    private volatile boolean full;
    private final Doorkeeper doorkeeper;
    private final long maxBytes;

    /**
     * Creates a cache.
     *
     * @param maxBytes the most bytes of blocks to keep; 0 keeps none
     * @throws IllegalArgumentException if {@code maxBytes} is negative
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public BlockCache(long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("negative block cache size " + maxBytes);
        }
        this.maxBytes = maxBytes;
        int n = (int) Math.max(1, Math.min(MAX_SHARDS, Long.highestOneBit(Math.max(1, maxBytes / MIN_SHARD_BYTES))));
        this.shards = new Cache[n];
        this.inserting = new AtomicIntegerArray(n);
        for (int i = 0; i < n; i++) {
            shards[i] = Caffeine.newBuilder().maximumWeight(maxBytes / n + (i < maxBytes % n ? 1 : 0))
                    .weigher((Key k, DataBlock b) -> b.sizeBytes()).executor(Runnable::run)
                    .evictionListener((Key k, DataBlock b, com.github.benmanes.caffeine.cache.RemovalCause c) -> {
                        if (!full) {
                            full = true;
                        }
                    }).recordStats().build();
        }
        this.doorkeeper = new Doorkeeper((int) Math.min(Integer.MAX_VALUE, maxBytes / ASSUMED_BLOCK_BYTES));
    }

    private int shardIndex(Key k) {
        return shards.length == 1 ? 0 : (k.hash >>> 24) & (shards.length - 1);
    }

    private Cache<Key, DataBlock> shard(Key k) {
        return shards[shardIndex(k)];
    }

    DataBlock get(long reader, long position, LongFunction<DataBlock> loader) {
        return get(reader, position, loader, loader);
    }

    /**
     * The cached block, or the block read on a miss and inserted if admitted; a miss the cache does not admit is read
     * by {@code transientLoader}, whose block the caller may use only until its next read (a point get reads it into
     * its thread's scratch array: no 4 KiB garbage per miss of a read load larger than the cache).
     */
    DataBlock get(long reader, long position, LongFunction<DataBlock> loader, LongFunction<DataBlock> transientLoader) {
        if (maxBytes == 0) {
            return transientLoader.apply(position);
        }
        Key k = new Key(reader, position);
        int i = shardIndex(k);
        Cache<Key, DataBlock> c = shards[i];
        DataBlock b = c.getIfPresent(k);
        if (b == null) {
            if (!full || doorkeeper.admit(k.hash)) {
                b = loader.apply(position); // outside the gate: a slow read never holds other inserts back
                if (inserting.compareAndSet(i, 0, 1)) {
                    try {
                        c.put(k, b);
                    } finally {
                        inserting.set(i, 0);
                    }
                } else {
                    insertsSkipped.increment();
                }
            } else {
                b = transientLoader.apply(position);
            }
        }
        return b;
    }

    /** @return the cached block (not counted in the hit ratio, recency unchanged), or the loaded one, not added */
    DataBlock getOrLoad(long reader, long position, LongFunction<DataBlock> loader) {
        if (maxBytes == 0) {
            return loader.apply(position);
        }
        Key k = new Key(reader, position);
        DataBlock b = shard(k).policy().getIfPresentQuietly(k);
        return b != null ? b : loader.apply(position);
    }

    /**
     * The configured bound.
     *
     * @return bytes
     */
    public long maxBytes() {
        return maxBytes;
    }

    /**
     * Bytes of blocks held now (the shards' weighted sizes, after their pending maintenance has run).
     *
     * @return bytes
     */
    public long sizeBytes() {
        long n = 0;
        for (Cache<Key, DataBlock> c : shards) {
            c.cleanUp(); // apply pending inserts and evictions
            n += c.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
        }
        return n;
    }

    /**
     * The share of lookups answered from the cache since it was created.
     *
     * @return a ratio from 0 to 1 (1 when nothing was looked up)
     */
    public double hitRatio() {
        long hits = 0;
        long requests = 0;
        for (Cache<Key, DataBlock> c : shards) {
            com.github.benmanes.caffeine.cache.stats.CacheStats st = c.stats();
            hits += st.hitCount();
            requests += st.requestCount();
        }
        return requests == 0 ? 1.0 : (double) hits / requests;
    }

    /**
     * Misses not inserted because another thread was inserting into the same shard (not counting misses the
     * doorkeeper did not admit).
     *
     * @return the count since the cache was created
     */
    public long insertsSkipped() {
        return insertsSkipped.sum();
    }

    /**
     * How many shards the bound is split into.
     *
     * @return 1 to {@value #MAX_SHARDS}
     */
    int shardCount() {
        return shards.length;
    }
}
