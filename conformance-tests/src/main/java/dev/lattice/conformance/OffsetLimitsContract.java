package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Offsets never exceed {@link WalStorageProvider#MAX_OFFSET}: stage, commit and trim arguments above it are refused
 * with IllegalArgumentException naming the limit, before any I/O (the log is unchanged and takes its next append at
 * the same offset); a trim through MAX_OFFSET itself is legal and leaves a log whose counters did not overflow. (A
 * checkpoint through an offset above it is {@link CheckpointStoreContract}'s.)
 */
public abstract class OffsetLimitsContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected OffsetLimitsContract(ConformanceFixture fixture) {
        super(fixture);
    }

    private void assertRefused(Runnable call, String what) {
        assertThatThrownBy(call::run).as("%s must throw IllegalArgumentException naming the maximum offset", what)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maximum offset");
    }

    private EncodedBatch at(long first, int count) {
        return EncodedBatch.of(first, WalTestSupport.batchId(SEED, first, count),
                WalTestSupport.payloads(SEED, first, count, SMALL));
    }

    /** A batch whose last offset is above MAX_OFFSET is refused by stage and append. */
    @Test
    void stageEndingAboveMaxOffsetIsRefused() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> first = appendBatches(provider(), f, 1, 3, SMALL);
        LogSnapshot before = snapshot(provider(), log);
        long max = WalStorageProvider.MAX_OFFSET;
        for (EncodedBatch b : List.of(at(max - 1, 3), at(max + 1, 1), at(Long.MAX_VALUE - 1, 1))) {
            assertRefused(() -> provider().stage(log, f, b), "stage " + b.firstOffset() + ".." + b.lastOffset());
            assertRefused(() -> provider().append(log, f, b), "append " + b.firstOffset() + ".." + b.lastOffset());
        }
        assertUnchanged("after refused stages and appends ending above MAX_OFFSET", before,
                snapshot(provider(), log));
        List<EncodedBatch> all = new ArrayList<>(first);
        all.addAll(appendBatches(provider(), f, 1, 2, SMALL));
        assertLogHolds(provider(), log, entriesOf(all), 4);
    }

    /** commit through an offset above MAX_OFFSET is refused; the staged batch stays committable. */
    @Test
    void commitAboveMaxOffsetIsRefused() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> all = new ArrayList<>(appendBatches(provider(), f, 1, 3, SMALL));
        EncodedBatch pending = batch(SEED + 1, 3, 2, SMALL);
        provider().stage(log, f, pending);
        LogSnapshot before = snapshot(provider(), log);
        for (long through : new long[] {WalStorageProvider.MAX_OFFSET + 1, Long.MAX_VALUE}) {
            assertRefused(() -> provider().commit(log, f, through), "commit through " + through);
        }
        assertUnchanged("after refused commits above MAX_OFFSET", before, snapshot(provider(), log));
        provider().commit(log, f, 4);
        all.add(pending);
        assertLogHolds(provider(), log, entriesOf(all), 4);
    }

    /** trim(Long.MAX_VALUE) and trim(MAX_OFFSET + 1) are refused; the log keeps its entries and takes appends. */
    @Test
    void trimAboveMaxOffsetIsRefused() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> all = new ArrayList<>(appendBatches(provider(), f, 1, 3, SMALL));
        LogSnapshot before = snapshot(provider(), log);
        for (long through : new long[] {Long.MAX_VALUE, WalStorageProvider.MAX_OFFSET + 1}) {
            assertRefused(() -> provider().trim(log, f, through), "trim through " + through);
        }
        assertUnchanged("after refused trims above MAX_OFFSET", before, snapshot(provider(), log));
        all.addAll(appendBatches(provider(), f, 1, 2, SMALL));
        assertLogHolds(provider(), log, entriesOf(all), 4);
    }

    /**
     * trim(MAX_OFFSET) is legal: the tail and the watermark move to MAX_OFFSET, lowestOffset is MAX_OFFSET + 1
     * (no overflow), nothing is retained, also after reopen; the next offset is above the limit, so a stage
     * there is refused.
     */
    @Test
    void trimThroughMaxOffsetLeavesAFullButSaneLog() throws Exception {
        LogId log = log(1);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 3, SMALL);
        long max = WalStorageProvider.MAX_OFFSET;
        provider().trim(log, f, max);
        for (int round = 0; round < 2; round++) {
            LogState s = provider().state(log);
            String when = round == 0 ? "after trim(MAX_OFFSET)" : "after trim(MAX_OFFSET), reopen + claim + reconcile";
            assertThat(s.committedTail()).as("%s: committed tail", when).isEqualTo(max);
            assertThat(s.trimWatermark()).as("%s: trim watermark", when).isEqualTo(max);
            assertThat(s.lowestOffset()).as("%s: lowest offset (no overflow)", when).isEqualTo(max + 1);
            assertThat(s.retainedEntries()).as("%s: retained entries", when).isZero();
            assertThat(s.retainedPayloadBytes()).as("%s: retained payload bytes", when).isZero();
            assertThat(readAll(provider(), log)).as("%s: entries", when).isEmpty();
            Fence current = f;
            assertRefused(() -> provider().stage(log, current, at(max + 1, 1)), "stage at MAX_OFFSET + 1");
            provider().commit(log, f, max);
            f = reopenAndRecover(log);
        }
    }
}
