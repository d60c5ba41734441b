package dev.lattice.engine.lsm;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.util.function.Function;

/**
 * The process-wide cache of decoded run blocks, bounded in bytes (Caffeine, weighted by each block's size). Runs are
 * immutable, so a block is identified by the reader of its run (a number unique in the process) and its position, and
 * never invalidated; a deleted run's blocks age out.
 *
 * <p>Thread-safe.
 */
public final class BlockCache {

    private record Key(long reader, long position) {
    }

    private final Cache<Key, DataBlock> cache;
    private final long maxBytes;

    /**
     * Creates a cache.
     *
     * @param maxBytes the most bytes of blocks to keep; 0 keeps none
     * @throws IllegalArgumentException if {@code maxBytes} is negative
     */
    public BlockCache(long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("negative block cache size " + maxBytes);
        }
        this.maxBytes = maxBytes;
        this.cache = Caffeine.newBuilder().maximumWeight(maxBytes)
                .weigher((Key k, DataBlock b) -> b.sizeBytes()).recordStats().build();
    }

    DataBlock get(long reader, long position, Function<Long, DataBlock> loader) {
        if (maxBytes == 0) {
            return loader.apply(position);
        }
        return cache.get(new Key(reader, position), k -> loader.apply(k.position()));
    }

    /** @return the cached block (not counted in the hit ratio, recency unchanged), or the loaded one, not added */
    DataBlock getOrLoad(long reader, long position, Function<Long, DataBlock> loader) {
        DataBlock b = maxBytes == 0 ? null : cache.policy().getIfPresentQuietly(new Key(reader, position));
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
     * Bytes of blocks held now (the cache's weighted size, after its pending maintenance has run).
     *
     * @return bytes
     */
    public long sizeBytes() {
        cache.cleanUp(); // apply pending inserts and evictions (Caffeine applies them asynchronously)
        return cache.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    }

    /**
     * The share of lookups answered from the cache since it was created.
     *
     * @return a ratio from 0 to 1 (1 when nothing was looked up)
     */
    public double hitRatio() {
        return cache.stats().hitRate();
    }
}
