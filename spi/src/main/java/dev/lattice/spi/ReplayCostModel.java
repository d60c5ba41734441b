package dev.lattice.spi;

/**
 * A provider's estimate of what replaying a log costs, declared in {@link ProviderDescriptor#replayCost()}, so the
 * engine's checkpoint policy can checkpoint a log before its replay gets slow (e.g. an append-blob log whose tail
 * has many small blocks, each of which the service serves at a per-block pace). Estimates, not promises.
 *
 * <p>Immutable and thread-safe.
 *
 * @param millisPerBatch estimated replay time per stored batch (block, row, item) of the log, in milliseconds
 * @param millisPerMiB estimated replay time per MiB of payload, in milliseconds
 */
public record ReplayCostModel(double millisPerBatch, double millisPerMiB) {

    /** No estimate: the engine's entry and byte thresholds alone drive checkpoints. */
    public static final ReplayCostModel UNKNOWN = new ReplayCostModel(0, 0);

    /**
     * Creates a model from two measured figures.
     *
     * @param millisPerBatch estimated replay time per stored batch (block, row, item) of the log, in milliseconds
     * @param millisPerMiB estimated replay time per MiB of payload, in milliseconds
     * @throws IllegalArgumentException if a figure is negative or not finite
     */
    public ReplayCostModel {
        if (!(millisPerBatch >= 0) || !(millisPerMiB >= 0) || Double.isInfinite(millisPerBatch)
                || Double.isInfinite(millisPerMiB)) {
            throw new IllegalArgumentException("replay cost figures must be finite and >= 0, got " + millisPerBatch
                    + " ms/batch, " + millisPerMiB + " ms/MiB");
        }
    }

    /**
     * Estimates how long replaying part of a log takes.
     *
     * @param batches stored batches to replay
     * @param payloadBytes payload bytes to replay
     * @return estimated replay time, in milliseconds
     */
    public double estimateMillis(long batches, long payloadBytes) {
        return batches * millisPerBatch + payloadBytes / (1024.0 * 1024.0) * millisPerMiB;
    }

    /** {@return true when this model gives no estimate} */
    public boolean isUnknown() {
        return millisPerBatch == 0 && millisPerMiB == 0;
    }
}
