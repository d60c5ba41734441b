package dev.lattice.engine;

import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Recovery of one log after a failed batch: reconciles the log with the provider (retrying transient failures),
 * applies the failed batches whose commit did land, fails the others, and has the pipeline resume at the committed
 * tail. A fenced reconcile loses the log; a provider that keeps failing answers the batches' callers with what is
 * known and leaves the batches in flight for a later try.
 *
 * <p>Thread-safety: {@link #run} runs on one thread at a time, outside the pipeline's lock and holding the applier
 * role (the pipeline starts it under its lock, only when no stage, commit or other recovery runs). This class holds
 * no state; the pipeline's state is changed only in the {@link Host} methods that take the pipeline's lock.
 */
final class PipelineRecovery {

    /** What recovery reaches of its pipeline. */
    interface Host {
        /**
         * Reconciles the log and reads its state, under the call deadline (answering the writes in flight when the
         * call is overdue).
         */
        LogState reconcile();

        /** A transient provider failure is retried (counted and logged). */
        void retried(Throwable e);

        /**
         * Applier: applies a batch whose commit landed and answers its blocking callers.
         *
         * @return true if some (asynchronous) callers are still to be answered
         */
        boolean apply(LogPipeline.Batch b);

        /** Answers every write of a batch with an error ({@link WriteOutcomeUnknownException} when uncertain). */
        void failAll(LogPipeline.Batch b, boolean uncertain, Throwable cause);

        /** Answers the asynchronous callers of applied batches, after the log moved on. */
        void completeCallers(List<LogPipeline.Batch> batches);

        /**
         * Under the lock: the batches leave the flight and the log resumes at {@code tail}; when this process did
         * not apply through {@code tail} the log is lost instead (another writer changed it).
         *
         * @param cause the failure that started the recovery
         */
        void resume(List<LogPipeline.Batch> batches, long tail, Throwable cause);

        /** Without the lock, before any caller hears of it: another writer claimed the log (the tree is told). */
        void fencedOut(FencedException e);

        /** Under the lock: the batches leave the flight and the log is lost to {@code e}. */
        void lost(List<LogPipeline.Batch> batches, FencedException e);

        /** Under the lock: this recovery ended without reconciling (the batches stay in flight). */
        void gaveUp();

        /** Timer thread: under the lock, starts a recovery again if one is still needed. */
        void recoverAgain();
    }

    // the category the pipeline always logged under
    private static final Logger LOG = LoggerFactory.getLogger(LogPipeline.class);

    private final LogId log;
    private final EngineContext ctx;
    private final PartitionState state;
    private final Host host;

    PipelineRecovery(LogId log, EngineContext ctx, PartitionState state, Host host) {
        this.log = log;
        this.ctx = ctx;
        this.state = state;
        this.host = host;
    }

    /**
     * Recovers from a failed batch; called without the lock.
     *
     * @param batches the batches in flight when the recovery started, in offset order
     * @param cause the failure that stopped the pipeline
     */
    void run(List<LogPipeline.Batch> batches, Throwable cause) {
        LogState st = null;
        FencedException fenced = cause instanceof FencedException ? (FencedException) cause : null;
        Throwable last = cause;
        if (fenced == null) {
            for (int attempt = 0; ; attempt++) {
                try {
                    ctx.stats.reconciles.increment();
                    st = host.reconcile();
                    break;
                } catch (FencedException e) {
                    fenced = e;
                    break;
                } catch (ProviderUnavailableException e) {
                    last = e;
                    if (attempt >= ctx.config.maxRetries) {
                        break;
                    }
                    host.retried(e);
                    ctx.backoff(attempt);
                } catch (RuntimeException e) {
                    last = e;
                    break;
                } catch (Error e) {
                    last = new WalStorageException(log, "reconcile failed with " + e, e);
                    break;
                }
            }
        }
        ctx.stats.failedBatches.add(batches.size());
        if (st != null) {
            long tail = st.committedTail();
            List<LogPipeline.Batch> landed = new ArrayList<>(1);
            for (LogPipeline.Batch b : batches) {
                if (b.encoded.lastOffset() <= tail && b.encoded.firstOffset() == state.appliedOffset + 1) {
                    if (host.apply(b)) { // its commit did land
                        landed.add(b);
                    }
                } else {
                    host.failAll(b, false, cause);
                }
            }
            host.resume(batches, tail, cause);
            if (!landed.isEmpty()) {
                host.completeCallers(landed);
            }
        } else if (fenced != null) {
            host.fencedOut(fenced);
            for (LogPipeline.Batch b : batches) {
                host.failAll(b, b.uncertain, fenced);
            }
            host.lost(batches, fenced);
            LOG.error("log {}: fenced out by another writer; this process can no longer write it", log);
        } else {
            // The provider keeps failing: report what we know now, keep the batches to resolve them later.
            for (LogPipeline.Batch b : batches) {
                host.failAll(b, b.uncertain, last);
            }
            host.gaveUp();
            long delay = Math.max(100, ctx.config.retryBackoff.toMillis() * 8);
            try {
                ctx.timer.schedule(host::recoverAgain, delay, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                LOG.debug("log {}: lattice closed before recovery could be retried", log);
            }
        }
    }
}
