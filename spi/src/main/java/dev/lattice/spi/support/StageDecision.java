package dev.lattice.spi.support;

import java.util.List;
import java.util.Objects;

/**
 * What {@link StagingRules#decideStage} concluded for a batch a caller asked to stage.
 *
 * @param kind what the provider must do
 * @param superseded staged batches of older epochs that overlap the new batch; the provider drops them (they can
 *     never be committed: their fence is stale) before or while it stages the new one. Empty unless {@code kind} is
 *     {@link Kind#STAGE}.
 * @param <S> the provider's type of staged batch record
 */
public record StageDecision<S extends StagedRange>(Kind kind, List<S> superseded) {

    /** What a provider does with a batch after the rules judged it. */
    public enum Kind {
        /** Store the batch (after dropping {@link StageDecision#superseded()}). */
        STAGE,
        /** The same batch (same range and id) is already staged under this epoch: return its receipt, store nothing. */
        ALREADY_STAGED,
        /** The same batch is already committed: return its receipt, store nothing. */
        ALREADY_COMMITTED
    }

    /**
     * Creates a decision.
     *
     * @param kind what the provider must do
     * @param superseded staged batches of older epochs that overlap the new batch; the provider drops them (they can
     *     never be committed: their fence is stale) before or while it stages the new one. Empty unless {@code kind}
     *     is {@link Kind#STAGE}.
     * @throws NullPointerException if an argument is null
     */
    public StageDecision {
        Objects.requireNonNull(kind, "kind");
        superseded = List.copyOf(superseded);
    }

    /**
     * Whether the provider must store the batch.
     *
     * @return true for {@link Kind#STAGE}
     */
    public boolean mustStage() {
        return kind == Kind.STAGE;
    }
}
