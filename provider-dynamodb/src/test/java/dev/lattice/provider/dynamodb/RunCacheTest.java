package dev.lattice.provider.dynamodb;

import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RunCache} on its own (no backend): the byte bound and least-recently-used eviction, inserts refused after
 * an invalidation that followed their stamp, invalidation of one run (every generation) or of one log, a budget of
 * 0, and entries larger than the budget.
 */
class RunCacheTest {

    private static final LogId LOG = new LogId("cache", 0);
    private static final RunCache.RunKey A = new RunCache.RunKey(LOG, new RunId("a"));
    private static final RunCache.RunKey B = new RunCache.RunKey(LOG, new RunId("b"));
    private static final RunCache.RunKey OTHER_LOG = new RunCache.RunKey(new LogId("cache", 1), new RunId("a"));
    private static final RunHeader HEADER = new RunHeader(4000, 7, 4, 99, 1000);
    private static final int CHUNK_WEIGHT = 1000 + RunCache.ENTRY_OVERHEAD_BYTES;

    @Test
    void keepsAtMostItsBudgetAndEvictsTheLeastRecentlyUsedFirst() {
        RunCache c = new RunCache(3L * CHUNK_WEIGHT + 10);
        long s = c.stamp(A);
        c.putChunk(A, 99, 0, new byte[1000], s);
        c.putChunk(A, 99, 1, new byte[1000], s);
        c.putChunk(A, 99, 2, new byte[1000], s);
        assertThat(c.sizeBytes()).isEqualTo(3L * CHUNK_WEIGHT);
        assertThat(c.chunk(A, 99, 0)).as("chunk 0, now the most recently used").isNotNull();
        c.putChunk(A, 99, 3, new byte[1000], s);
        assertThat(c.sizeBytes()).as("bytes after the fourth chunk").isLessThanOrEqualTo(c.maxBytes());
        assertThat(c.chunk(A, 99, 1)).as("chunk 1, the least recently used, was evicted").isNull();
        assertThat(c.chunk(A, 99, 0)).isNotNull();
        assertThat(c.chunk(A, 99, 2)).isNotNull();
        assertThat(c.chunk(A, 99, 3)).isNotNull();
        assertThat(c.chunk(A, 98, 0)).as("another generation's chunk 0 is another entry").isNull();
    }

    @Test
    void anInsertStampedBeforeAnInvalidationIsDropped() {
        RunCache c = new RunCache(1 << 20);
        long before = c.stamp(A);
        c.invalidate(A);
        c.putChunk(A, 99, 0, new byte[10], before);
        RunCache.CachedRun r = c.putHeader(A, HEADER, before);
        assertThat(r.header).as("the caller still gets the header it read").isEqualTo(HEADER);
        assertThat(c.header(A)).as("but a header read before the delete is not cached").isNull();
        assertThat(c.chunk(A, 99, 0)).as("nor a chunk fetched before the delete").isNull();
        assertThat(c.sizeBytes()).isZero();
        long after = c.stamp(A);
        c.putChunk(A, 99, 0, new byte[10], after);
        assertThat(c.putHeader(A, HEADER, after)).isSameAs(c.header(A));
        assertThat(c.chunk(A, 99, 0)).as("an insert stamped after the invalidation is kept").isNotNull();
    }

    @Test
    void invalidatingARunDropsItsHeaderAndEveryGenerationButNothingElse() {
        RunCache c = new RunCache(1 << 20);
        c.putHeader(A, HEADER, c.stamp(A));
        c.putChunk(A, 99, 0, new byte[10], c.stamp(A));
        c.putChunk(A, 98, 0, new byte[10], c.stamp(A));
        c.putChunk(B, 5, 0, new byte[10], c.stamp(B));
        c.putChunk(OTHER_LOG, 99, 0, new byte[10], c.stamp(OTHER_LOG));
        c.invalidate(A);
        assertThat(c.header(A)).isNull();
        assertThat(c.chunk(A, 99, 0)).isNull();
        assertThat(c.chunk(A, 98, 0)).isNull();
        assertThat(c.chunk(B, 5, 0)).isNotNull();
        assertThat(c.chunk(OTHER_LOG, 99, 0)).isNotNull();
        assertThat(c.sizeBytes()).isEqualTo(2L * (10 + RunCache.ENTRY_OVERHEAD_BYTES));
        c.invalidateLog(LOG);
        assertThat(c.chunk(B, 5, 0)).as("every run of the dropped log is gone").isNull();
        assertThat(c.chunk(OTHER_LOG, 99, 0)).as("another log keeps its runs").isNotNull();
        c.clear();
        assertThat(c.sizeBytes()).isZero();
        assertThat(c.chunk(OTHER_LOG, 99, 0)).isNull();
    }

    @Test
    void aNewHeaderForTheSameIdDropsTheOldChunksAndAnEqualOneKeepsTheReadAheadState() {
        RunCache c = new RunCache(1 << 20);
        RunCache.CachedRun first = c.putHeader(A, HEADER, c.stamp(A));
        first.fetchedUpTo(3);
        c.putChunk(A, 99, 0, new byte[10], c.stamp(A));
        assertThat(c.putHeader(A, new RunHeader(4000, 7, 4, 99, 1000), c.stamp(A))).isSameAs(first);
        assertThat(first.nextChunk()).isEqualTo(3);
        RunCache.CachedRun rewritten = c.putHeader(A, new RunHeader(4000, 7, 4, 100, 1000), c.stamp(A));
        assertThat(c.header(A)).isSameAs(rewritten);
        assertThat(rewritten.nextChunk()).isEqualTo(-1);
        assertThat(c.chunk(A, 99, 0)).as("chunks of the replaced generation are dropped").isNull();
    }

    @Test
    void aBudgetOfZeroCachesNothingAndAnEntryAboveTheBudgetIsNotCached() {
        RunCache off = new RunCache(0);
        assertThat(off.enabled()).isFalse();
        off.putHeader(A, HEADER, off.stamp(A));
        off.putChunk(A, 99, 0, new byte[1], off.stamp(A));
        assertThat(off.header(A)).isNull();
        assertThat(off.chunk(A, 99, 0)).isNull();
        RunCache small = new RunCache(1000);
        small.putChunk(A, 99, 0, new byte[1000], small.stamp(A));
        assertThat(small.chunk(A, 99, 0)).isNull();
        assertThat(small.sizeBytes()).isZero();
        assertThatThrownBy(() -> new RunCache(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("runCacheBytes");
    }
}
