package dev.lattice.engine;

import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * When one log's fence was last proved current (a commit, an ownership check, a read-lease proof), and the two jobs
 * built on it: proving the fence before a read once the read lease ran out, and the background ownership check of
 * a log that committed nothing for a while.
 *
 * <p>Thread-safe.
 */
final class FenceLease {

    /** What the lease needs from its log. */
    interface Host {
        /** Proves the fence with one provider call under the call deadline ({@code op} names it). */
        void checkFence(String op);

        /** Another writer claimed the log. */
        void lostOwnership(FencedException e);

        /** @return the error that showed another writer claimed the log, or null */
        FencedException fencedBy();
    }

    // the category the pipeline always logged under
    private static final Logger LOG = LoggerFactory.getLogger(LogPipeline.class);

    private final LogId log;
    private final String tree;
    private final EngineContext ctx;
    private final Host host;
    private final long readLeaseNanos;
    private volatile long lastProofNanos = System.nanoTime();
    private final AtomicBoolean checkRunning = new AtomicBoolean();

    FenceLease(LogId log, String tree, EngineContext ctx, Host host) {
        this.log = log;
        this.tree = tree;
        this.ctx = ctx;
        this.host = host;
        this.readLeaseNanos = ctx.config.readLease.toNanos();
    }

    /** A fenced call that started at {@code startedNanos} (System.nanoTime) succeeded. */
    void proved(long startedNanos) {
        lastProofNanos = startedNanos;
    }

    /** @return true when a read needs no proof now: no read lease, or a fenced call within it succeeded */
    boolean provenForRead() {
        long lease = readLeaseNanos;
        return lease == 0 || System.nanoTime() - lastProofNanos <= lease;
    }

    /**
     * Proves the fence before a read unless a fenced call that started within the read lease succeeded.
     *
     * @throws OwnershipLostException if the proof shows that another writer claimed the log
     * @throws dev.lattice.spi.WalStorageException if the provider call fails
     */
    void proveForRead() {
        if (provenForRead()) {
            return;
        }
        FencedException f = host.fencedBy();
        if (f == null) {
            long started = System.nanoTime();
            try {
                host.checkFence("read lease");
                if (started - lastProofNanos > 0) {
                    lastProofNanos = started;
                }
                return;
            } catch (FencedException e) {
                host.lostOwnership(e);
                f = e;
            }
        }
        throw new OwnershipLostException(tree, log, f.currentEpoch(), f);
    }

    /**
     * Timer thread: when nothing proved the fence for {@code intervalNanos}, proves it with one call on the I/O pool.
     *
     * @param skip true when the log is closing, paused or lost
     */
    void checkInBackground(long intervalNanos, boolean skip) {
        if (skip || System.nanoTime() - lastProofNanos < intervalNanos || !checkRunning.compareAndSet(false, true)) {
            return;
        }
        try {
            ctx.io.execute(() -> {
                long started = System.nanoTime();
                try {
                    host.checkFence("ownership check");
                    lastProofNanos = started;
                } catch (FencedException e) {
                    host.lostOwnership(e);
                } catch (RuntimeException | Error e) {
                    LOG.debug("log {}: ownership check failed (retried next interval): {}", log, e.toString());
                } finally {
                    checkRunning.set(false);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            checkRunning.set(false);
        }
    }
}
