package dev.lattice.spi;

/**
 * What {@link WalStorageProvider#reconcile(LogId, Fence)} found and repaired.
 *
 * <p>Immutable and thread-safe.
 *
 * @param committedTail the committed tail after reconcile (never lower than before)
 * @param rolledBackBatches staged-but-uncommitted batches that were removed
 * @param rolledForwardBatches staged batches that were committed because a durable commit intent existed
 * @param removedLeftovers other leftovers that were removed (torn frames, rows above the tail or below the trim
 *     watermark, older-epoch pieces)
 */
public record ReconcileResult(long committedTail, int rolledBackBatches, int rolledForwardBatches,
                              long removedLeftovers) {

    /** {@return true when reconcile changed nothing} */
    public boolean isClean() {
        return rolledBackBatches == 0 && rolledForwardBatches == 0 && removedLeftovers == 0;
    }
}
