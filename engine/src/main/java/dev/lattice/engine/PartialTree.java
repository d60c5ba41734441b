package dev.lattice.engine;

import java.time.Duration;
import java.util.Set;

/**
 * A tree of which this process hosts only some partitions (for a cluster, where each partition's log has one owner
 * among several processes): {@link Lattice#hostTree}. Hosting a partition claims its log (fencing any earlier
 * owner) and replays it; releasing it drains its writes, checkpoints it and stops serving it, so that another
 * process can host it next (that process's claim fences this one if it did not release).
 *
 * <p>The {@link Tree} operations behave as on an embedded tree for keys of hosted partitions. A key, write or read
 * that needs a partition not hosted here throws {@link PartitionNotHostedException}; {@link #count()} and
 * {@link #scan} cover the hosted partitions only. Writes whose keys fall in more than one log (multi-partition
 * {@code putAllAtomic}, cross-tree atomic writes, {@code deleteRange}), moves and change feeds are refused with
 * {@link PartitionNotHostedException} unless every log they need is hosted here, and multi-log atomic writes are
 * refused on a partial tree altogether (their decision would not survive a hand-off of a participant). When another
 * process claims a hosted partition's log, only that partition stops being served: its reads and writes throw
 * {@link OwnershipLostException} until it is released and hosted again.
 *
 * <p>Thread-safe; {@link #host} and {@link #release} of one partition are serialised.
 */
public interface PartialTree extends Tree {

    /**
     * @param key a key (not validated beyond null)
     * @return the partition, {@code 0..partitions()-1}, that holds {@code key} by the tree's stored partition hash
     * @throws NullPointerException if the key is null
     */
    int partitionOf(String key);

    /** @return the partitions hosted now, a snapshot in ascending order */
    Set<Integer> hostedPartitions();

    /**
     * Hosts a partition: claims its log (fencing any other writer), reconciles it, loads its latest checkpoint or
     * manifest and replays the log after it. Blocks until done (about what opening a one-partition tree costs).
     * A no-op when the partition is hosted already.
     *
     * @param partition {@code 0..partitions()-1}
     * @throws IndexOutOfBoundsException if the partition does not exist
     * @throws LatticeException if the log holds an atomic write prepared by a coordinator log this process does not
     *     host (open the tree embedded once to resolve it)
     * @throws LatticeShuttingDownException if the lattice is closed
     * @throws dev.lattice.spi.CorruptLogException if a log entry or checkpoint is corrupt
     * @throws dev.lattice.spi.WalStorageException if the provider fails
     */
    void host(int partition);

    /**
     * Stops hosting a partition: new operations on it throw {@link PartitionNotHostedException} at once; writes
     * already admitted are drained and the partition is checkpointed (so the next owner replays little), within the
     * timeout. A no-op when it is not hosted.
     *
     * @param partition {@code 0..partitions()-1}
     * @param timeout how long to wait for the drain and the checkpoint, not negative
     * @return true when every admitted write was answered and the checkpoint was written (or not needed)
     * @throws IndexOutOfBoundsException if the partition does not exist
     */
    boolean release(int partition, Duration timeout);

    /**
     * Counts the live keys of one hosted partition (as {@link Tree#count()} does for a whole tree).
     *
     * @param partition a hosted partition
     * @return the number of live keys
     * @throws PartitionNotHostedException if the partition is not hosted here
     * @throws OwnershipLostException if another process claimed its log
     */
    long count(int partition);

    /**
     * Scans one hosted partition in key order, as {@link Tree#scan} does for a whole tree.
     *
     * @param partition a hosted partition
     * @param fromInclusive the lowest key, or null for the start
     * @param toExclusive the key after the last, or null for the end
     * @param reverse true for descending order
     * @return a cursor to close
     * @throws PartitionNotHostedException if the partition is not hosted here
     * @throws OwnershipLostException if another process claimed its log
     */
    ScanCursor scan(int partition, String fromInclusive, String toExclusive, boolean reverse);
}
