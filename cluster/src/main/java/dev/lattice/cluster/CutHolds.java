package dev.lattice.cluster;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The prepare holds that a scan ({@link ClusterScanCursor}) or count ({@link ClusterTree#count()}) across a tree's
 * partitions places when a validation round failed, so that it makes progress beside continuous multi-partition
 * atomic writes.
 *
 * <p><b>Why.</b> A cut validates when no partition registered an atomic-write prepare between its counter reading
 * and its check. A writer that never pauses prepares in some partition within every such window, so without holds
 * a scan could fail every round until its operation timeout. With holds placed on every partition it reads
 * ({@link Op#PREPARE_HOLD}), a write that has no part prepared in the tree yet waits at the partition's
 * {@link PrepareGate} instead of preparing; the writes that had begun in the tree go on (a snapshot waits for
 * them), they are few and end within a few milliseconds, and then the counters stand still, so the next round
 * validates. The holds are released as soon as a round validated (or the cut gives up).
 *
 * <p><b>What it costs writers, and why it stays safe.</b> A hold lasts at most {@code hold} (each owner also caps
 * it at its own {@link LatticeClusterConfig.Builder#scanPrepareHold}) and ends by itself when its scanner dies or
 * its release is lost; a cut renews it while it goes on, but one prepare waits at most the owner's bound in total,
 * however many holds follow one another. Consistency never rests on the holds: every round is validated exactly as
 * without them, a hold only makes a round likely to validate. So a partition whose owner ignores holds (holds off
 * there) or a hold that expired early costs rounds, never a partial atomic write.
 *
 * <p><b>Older owners.</b> While a hosting member of protocol level 1 is in the cluster no cut is taken at all (scans
 * and counts are level 1's, {@link PeerProtocols}), so no hold is sent. An owner that cannot read
 * {@link Op#PREPARE_HOLD} anyway (one seen late) drops it, so the attempt is refused or times out (at most
 * {@code min(request timeout, 1 s)}); the cut then goes on without holds (the validation loop), and this node sends
 * no holds for the next minute. An owner that answers {@link UnsupportedOperationException} is treated the same way.
 *
 * <p>Thread-safe; each {@link Cut} is used by one thread.
 */
final class CutHolds {

    private static final Logger LOG = LoggerFactory.getLogger(CutHolds.class);
    /** How long this node sends no holds after an owner did not serve one. */
    static final Duration UNSERVED_PAUSE = Duration.ofMinutes(1);

    private final Router router;
    private final long holdMillis;
    private final Duration attemptTimeout;
    /** {@link System#nanoTime} until which no holds are sent; valid while {@link #unserved}. */
    private volatile long unservedUntil;
    private volatile boolean unserved;

    /**
     * @param router sends the holds
     * @param hold how long a hold is asked for (zero: no holds)
     * @param requestTimeout the node's request timeout (an attempt waits at most the smaller of it and 1 s)
     */
    CutHolds(Router router, Duration hold, Duration requestTimeout) {
        this.router = router;
        this.holdMillis = hold.toMillis();
        this.attemptTimeout = requestTimeout.compareTo(Duration.ofSeconds(1)) < 0 ? requestTimeout
                : Duration.ofSeconds(1);
    }

    /**
     * @param tree the tree read
     * @param partitions its partition count
     * @return the holds of one scan or count (none placed yet)
     */
    Cut begin(String tree, int partitions) {
        return new Cut(tree, partitions);
    }

    /** @return true while this node sends no holds (an owner did not serve one lately) */
    boolean paused() {
        return unserved && System.nanoTime() - unservedUntil < 0;
    }

    private void unserved(Throwable why) {
        unservedUntil = System.nanoTime() + UNSERVED_PAUSE.toNanos();
        unserved = true;
        LOG.info("a partition's owner did not serve a prepare hold ({}): scans and counts through this node go on"
                + " without holds for {} s (an owner of an older version?)", why.toString(),
                UNSERVED_PAUSE.toSeconds());
    }

    /** The holds of one scan or count over every partition of one tree. Not thread-safe. */
    final class Cut {
        private final String tree;
        private final int partitions;
        private final long id;
        private boolean off;
        private boolean placed;
        private boolean sent;
        private long placedAt;
        private long grantedMillis;

        private Cut(String tree, int partitions) {
            this.tree = tree;
            this.partitions = partitions;
            long i;
            do {
                i = ThreadLocalRandom.current().nextLong();
            } while (i == 0);
            this.id = i;
        }

        /**
         * Places the holds on every partition, or renews them when half of their time passed; waits for the
         * answers (each at most the attempt timeout). Failures are not thrown: a cut goes on without the holds it
         * could not place.
         *
         * @return true when every partition holds its prepares now
         */
        boolean ensure() {
            if (off || holdMillis <= 0 || paused()) {
                off = true;
                return false;
            }
            long now = System.nanoTime();
            if (placed && grantedMillis > 0 && now - placedAt < TimeUnit.MILLISECONDS.toNanos(grantedMillis) / 2) {
                return true;
            }
            List<CompletableFuture<Response>> acks = new ArrayList<>(partitions);
            for (int p = 0; p < partitions; p++) {
                acks.add(router.send(new LogAddress(tree, p), Op.PREPARE_HOLD,
                        r -> Request.hold(Op.PREPARE_HOLD, id, holdMillis, r), attemptTimeout, attemptTimeout));
            }
            placed = true;
            sent = true;
            placedAt = now;
            long granted = Long.MAX_VALUE;
            for (CompletableFuture<Response> ack : acks) {
                try {
                    long g = Router.await(ack).number();
                    if (g <= 0) {
                        off = true; // an owner with holds off: the holds placed elsewhere stay until released
                    }
                    granted = Math.min(granted, g);
                } catch (UnsupportedOperationException e) {
                    unserved(e);
                    off = true;
                    granted = 0;
                } catch (RuntimeException e) {
                    if (e.getCause() instanceof TimeoutException) {
                        unserved(e);
                        off = true;
                    }
                    granted = 0; // not held there (not hosted at the moment, ...): the next round asks again
                }
            }
            grantedMillis = granted;
            return granted > 0;
        }

        /** @return true once holds were sent for this cut */
        boolean sent() {
            return sent;
        }

        /** Ends the holds (without waiting for the answers). Idempotent; nothing when none were placed. */
        void release() {
            if (!placed) {
                return;
            }
            placed = false;
            for (int p = 0; p < partitions; p++) {
                router.send(new LogAddress(tree, p), Op.PREPARE_RELEASE,
                        r -> Request.hold(Op.PREPARE_RELEASE, id, 0, r), attemptTimeout, attemptTimeout);
            }
        }
    }
}
