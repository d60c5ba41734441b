package dev.lattice.spi.support;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.StagedBatch;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StagingRulesTest {

    private static final LogId LOG = new LogId("t", 0);
    private static final Fence F2 = new Fence(LOG, 2);

    private static EncodedBatch batch(long first, int n, BatchId id) {
        return EncodedBatch.of(first, id, java.util.Collections.nCopies(n, new byte[] {1}));
    }

    private record H(long firstOffset, long lastOffset, long epoch, BatchId batchId) implements StagedRange {
    }

    @Test
    void aRetriedStageOfACommittedBatchIsAlreadyCommittedAndAnyOtherOverlapOfCommittedOffsetsConflicts() {
        BatchId id = new BatchId(1, 1);
        assertThat(StagingRules.<H>decideStage(LOG, F2, batch(0, 3, id), 5, () -> true, List.of()).kind())
                .isEqualTo(StageDecision.Kind.ALREADY_COMMITTED);
        assertThatThrownBy(() -> StagingRules.<H>decideStage(LOG, F2, batch(4, 3, id), 5, () -> false, List.of()))
                .isInstanceOf(OffsetConflictException.class).hasMessageContaining("overlaps committed offsets")
                .hasMessageContaining("committed tail 5");
    }

    @Test
    void olderEpochsAreSupersededTheSameBatchIsAlreadyStagedAndOthersConflict() {
        BatchId id = new BatchId(1, 2);
        H old = new H(10, 12, 1, new BatchId(9, 9));
        StageDecision<H> d = StagingRules.decideStage(LOG, F2, batch(10, 3, id), 9, () -> false, List.of(old));
        assertThat(d.mustStage()).isTrue();
        assertThat(d.superseded()).containsExactly(old);
        assertThat(StagingRules.decideStage(LOG, F2, batch(10, 3, id), 9, () -> false, List.of(new H(10, 12, 2, id)))
                .kind()).isEqualTo(StageDecision.Kind.ALREADY_STAGED);
        assertThatThrownBy(() -> StagingRules.decideStage(LOG, F2, batch(10, 3, id), 9, () -> false,
                List.of(new H(11, 11, 2, new BatchId(3, 3))))).isInstanceOf(OffsetConflictException.class)
                .hasMessageContaining("overlaps staged batch 11..11");
    }

    @Test
    void theCommitChainMustStartAfterTheTailBeUnderTheEpochAndEndExactly() {
        H a = new H(0, 2, 2, new BatchId(1, 1));
        H b = new H(3, 5, 2, new BatchId(1, 2));
        H stale = new H(6, 6, 1, new BatchId(1, 3));
        assertThat(StagingRules.commitChain(LOG, F2, -1, 5, List.of(b, stale, a))).containsExactly(a, b);
        assertThatThrownBy(() -> StagingRules.commitChain(LOG, F2, -1, 6, List.of(a, b, stale)))
                .isInstanceOf(OffsetConflictException.class)
                .hasMessage("log " + LOG + ": cannot commit through 6: offset 6 after the committed tail -1 is not "
                        + "staged under epoch 2");
        assertThatThrownBy(() -> StagingRules.commitChain(LOG, F2, -1, 4, List.of(a, b)))
                .isInstanceOf(OffsetConflictException.class).hasMessageContaining("falls inside staged batch 3..5");
        assertThatThrownBy(() -> StagingRules.commitChain(LOG, F2, -1, 2, List.of(a, new H(0, 1, 2, new BatchId(5, 5)))))
                .isInstanceOf(OffsetConflictException.class).hasMessageContaining("two batches are staged at offset 0");
    }

    @Test
    void abortMatchesOnlyTheSameRangeEpochAndId() {
        BatchId id = new BatchId(4, 4);
        H s = new H(7, 9, 2, id);
        assertThat(StagingRules.abortMatches(s, new StagedBatch(LOG, 2, 7, 9, id))).isTrue();
        assertThat(StagingRules.abortMatches(s, new StagedBatch(LOG, 1, 7, 9, id))).isFalse();
        assertThat(StagingRules.abortMatches(s, new StagedBatch(LOG, 2, 7, 8, id))).isFalse();
        assertThat(StagingRules.abortMatches(s, new StagedBatch(LOG, 2, 7, 9, new BatchId(4, 5)))).isFalse();
    }

    @Test
    void theTableStagesCommitsAbortsAndDropsOlderEpochs() {
        StagedBatchTable<String> t = new StagedBatchTable<>();
        BatchId a = new BatchId(1, 1);
        BatchId b = new BatchId(1, 2);
        t.stage(LOG, new Fence(LOG, 1), batch(0, 2, new BatchId(8, 8)), -1, () -> false, x -> "old");
        StageDecision<StagedBatchTable.Staged<String>> d = t.stage(LOG, F2, batch(0, 2, a), -1, () -> false, x -> "a");
        assertThat(d.superseded()).extracting(StagedBatchTable.Staged::payload).containsExactly("old");
        t.stage(LOG, F2, batch(2, 3, b), -1, () -> false, x -> "b");
        assertThat(t.stage(LOG, F2, batch(2, 3, b), -1, () -> false, x -> "again").kind())
                .isEqualTo(StageDecision.Kind.ALREADY_STAGED);
        List<StagedBatchTable.Staged<String>> chain = t.commitChain(LOG, F2, -1, 4);
        assertThat(chain).extracting(StagedBatchTable.Staged::payload).containsExactly("a", "b");
        assertThat(t.size()).as("commitChain leaves the batches until remove").isEqualTo(2);
        t.remove(chain);
        assertThat(t.isEmpty()).isTrue();
        t.stage(LOG, F2, batch(5, 1, a), 4, () -> false, x -> "c");
        assertThat(t.abort(new StagedBatch(LOG, 2, 5, 5, b))).isNull();
        assertThat(t.abort(new StagedBatch(LOG, 2, 5, 5, a)).payload()).isEqualTo("c");
        t.stage(LOG, new Fence(LOG, 1), batch(9, 1, a), 4, () -> false, x -> "e1");
        assertThat(t.dropOlderThan(2)).extracting(StagedBatchTable.Staged::payload).containsExactly("e1");
    }
}
