package dev.lattice.testkit;

/**
 * The provider SPI calls that reach the backend: what a {@link ForwardingProvider} passes to its interception point,
 * and what {@link FaultInjectingProvider} faults and {@link CountingProvider} counts. {@code describe},
 * {@code checkpoints} and {@code close} are local and not listed; {@code append} is not listed because the decorators
 * run the SPI's default {@code append}, which is {@link #STAGE} then {@link #COMMIT} (and {@link #ABORT} when the
 * commit fails). {@code runs} and the run store's {@code limits} are local too.
 */
public enum SpiOperation {
    /** {@link dev.lattice.spi.WalStorageProvider#claim}. */
    CLAIM,
    /** {@link dev.lattice.spi.WalStorageProvider#stage}. */
    STAGE,
    /** {@link dev.lattice.spi.WalStorageProvider#commit}. */
    COMMIT,
    /** {@link dev.lattice.spi.WalStorageProvider#abort}. */
    ABORT,
    /** {@link dev.lattice.spi.WalStorageProvider#read}. */
    READ,
    /** {@link dev.lattice.spi.WalStorageProvider#state}. */
    STATE,
    /** {@link dev.lattice.spi.WalStorageProvider#trim}. */
    TRIM,
    /** {@link dev.lattice.spi.WalStorageProvider#reconcile}. */
    RECONCILE,
    /** {@link dev.lattice.spi.WalStorageProvider#logs}. */
    LOGS,
    /** {@link dev.lattice.spi.WalStorageProvider#trees}. */
    TREES,
    /** {@link dev.lattice.spi.CheckpointStore#publish}. */
    CHECKPOINT_PUBLISH,
    /** {@link dev.lattice.spi.CheckpointStore#latest}. */
    CHECKPOINT_LATEST,
    /** {@link dev.lattice.spi.CheckpointStore#open}. */
    CHECKPOINT_OPEN,
    /** {@link dev.lattice.spi.CheckpointStore#deleteBefore}. */
    CHECKPOINT_DELETE_BEFORE,
    /** {@link dev.lattice.spi.WalStorageProvider#checkFence}. */
    CHECK_FENCE,
    /** {@link dev.lattice.spi.WalStorageProvider#repair}. */
    REPAIR,
    /** {@link dev.lattice.spi.RunStore#write}. */
    RUN_WRITE,
    /** {@link dev.lattice.spi.RunStore#read}. */
    RUN_READ,
    /** {@link dev.lattice.spi.RunStore#delete}. */
    RUN_DELETE,
    /** {@link dev.lattice.spi.RunStore#list}. */
    RUN_LIST,
    /** {@link dev.lattice.spi.WalStorageProvider#drop}. */
    DROP;

    /**
     * Whether the call changes the log (so a lost response leaves its outcome unknown).
     *
     * @return true for claim, stage, commit, abort, trim, reconcile, checkpoint publish and delete, repair, run
     *     write and delete, drop
     */
    public boolean isWrite() {
        return switch (this) {
            case CLAIM, STAGE, COMMIT, ABORT, TRIM, RECONCILE, CHECKPOINT_PUBLISH, CHECKPOINT_DELETE_BEFORE, REPAIR,
                 RUN_WRITE, RUN_DELETE, DROP -> true;
            default -> false;
        };
    }
}
