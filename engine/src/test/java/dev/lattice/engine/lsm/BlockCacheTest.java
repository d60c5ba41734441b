package dev.lattice.engine.lsm;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The block cache: its byte bound over its shards, hits and misses, and quiet lookups that do not fill it. */
class BlockCacheTest {

    /** A decodable block of {@code bytes} bytes (one restart point at 0, no entries). */
    private static DataBlock block(int bytes) {
        byte[] b = new byte[bytes];
        ByteBuffer.wrap(b, bytes - 8, 8).putInt(0).putInt(1);
        return new DataBlock(b, bytes);
    }

    @Test
    void staysWithinItsBoundOverAllShardsAndCountsHitsAndMisses() {
        long max = 8L << 20;
        BlockCache c = new BlockCache(max);
        assertThat(c.shardCount()).isEqualTo(8);
        AtomicInteger loads = new AtomicInteger();
        for (long p = 0; p < 10_000; p++) { // 10,000 x 4 KiB = 40 MiB offered
            c.get(1, p * 4096, pos -> {
                loads.incrementAndGet();
                return block(4096);
            });
        }
        assertThat(loads).hasValue(10_000);
        assertThat(c.sizeBytes()).isLessThanOrEqualTo(max).isGreaterThan(max / 2);
        int before = loads.get();
        for (int i = 0; i < 3; i++) {
            c.get(2, 0, pos -> {
                loads.incrementAndGet();
                return block(4096);
            });
        }
        assertThat(loads.get() - before).as("a full cache admits a block on its second miss; the third get hits")
                .isEqualTo(2);
        assertThat(c.hitRatio()).isGreaterThan(0).isLessThan(0.01);
    }

    @Test
    void aFullCacheDoesNotTakeBlocksReadOnce() {
        BlockCache c = new BlockCache(1L << 20);
        for (long p = 0; p < 1_000; p++) { // 4 MiB offered to 1 MiB: full
            c.get(1, p, pos -> block(4096));
        }
        for (long p = 0; p < 200; p++) { // 200 blocks read once
            c.get(3, p, pos -> block(4096));
        }
        AtomicInteger loads = new AtomicInteger();
        for (long p = 0; p < 200; p++) { // quiet lookups: none of them entered
            c.getOrLoad(3, p, pos -> {
                loads.incrementAndGet();
                return block(4096);
            });
        }
        assertThat(loads).as("blocks read once that the full cache took").hasValue(200);
        BlockCache empty = new BlockCache(1L << 20);
        empty.get(3, 0, pos -> block(4096));
        assertThat(empty.getOrLoad(3, 0, pos -> null)).as("a cache that never evicted takes every miss").isNotNull();
    }

    @Test
    void aMissTheFullCacheDoesNotAdmitGoesThroughTheTransientLoader() {
        BlockCache c = new BlockCache(1L << 20);
        for (long p = 0; p < 1_000; p++) { // full
            c.get(1, p, pos -> block(4096));
        }
        AtomicInteger cached = new AtomicInteger();
        AtomicInteger transients = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            c.get(5, 7, pos -> {
                cached.incrementAndGet();
                return block(4096);
            }, pos -> {
                transients.incrementAndGet();
                return block(4096);
            });
        }
        assertThat(transients).as("the first miss is not admitted: read transiently").hasValue(1);
        assertThat(cached).as("the second miss is admitted: read to keep; the third get hits").hasValue(1);
        BlockCache none = new BlockCache(0);
        assertThat(none.get(1, 0, pos -> null, pos -> block(64))).as("no cache: every read is transient").isNotNull();
    }

    @Test
    void quietLookupsDoNotFillTheCacheAndSmallOrZeroBoundsWork() {
        BlockCache c = new BlockCache(4L << 20);
        AtomicInteger loads = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            c.getOrLoad(1, 0, pos -> {
                loads.incrementAndGet();
                return block(4096);
            });
        }
        assertThat(loads).hasValue(3);
        assertThat(c.sizeBytes()).isZero();
        assertThat(new BlockCache(1024).shardCount()).isEqualTo(1);
        BlockCache none = new BlockCache(0);
        none.get(1, 0, pos -> block(64));
        assertThat(none.sizeBytes()).isZero();
        assertThat(new BlockCache(100L << 30).shardCount()).isEqualTo(BlockCache.MAX_SHARDS);
        assertThatThrownBy(() -> new BlockCache(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative");
    }

    /** A miss that finds another insert under way in its shard is read but not inserted, and never waits. */
    @Test
    void aMissDuringAnotherInsertIntoItsShardIsNotInserted() {
        BlockCache c = new BlockCache(1024); // one shard
        java.util.concurrent.atomic.AtomicInteger loads = new java.util.concurrent.atomic.AtomicInteger();
        java.util.function.LongFunction<DataBlock> loader = p -> {
            loads.incrementAndGet();
            return block(100);
        };
        c.inserting.set(0, 1); // another thread inserts into shard 0
        assertThat(c.get(1, 0, loader)).isNotNull();
        assertThat(c.get(1, 0, loader)).isNotNull();
        assertThat(loads).hasValue(2); // read each time, kept by neither
        assertThat(c.insertsSkipped()).isEqualTo(2);
        c.inserting.set(0, 0);
        c.get(1, 0, loader);
        c.get(1, 0, loader);
        assertThat(loads).hasValue(3); // inserted by the first, found by the second
        assertThat(c.insertsSkipped()).isEqualTo(2);
        assertThat(c.inserting.get(0)).as("the gate is released after an insert").isZero();
    }
}
