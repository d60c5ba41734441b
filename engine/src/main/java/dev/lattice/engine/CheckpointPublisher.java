package dev.lattice.engine;

import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.WalStorageProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.util.concurrent.TimeUnit;

/**
 * Publishes one log's checkpoints (a whole-partition snapshot, or a manifest naming runs), then trims the log up to
 * it (as far as change-feed consumers allow) and deletes older checkpoints; refuses a checkpoint larger than the
 * provider stores. Keeps the health issue of the last refused or failed checkpoint and the offset of the last
 * published one.
 *
 * <p>Thread-safe for one publisher at a time (the log's maintenance flag): its state is volatile.
 */
final class CheckpointPublisher {

    /** What the publisher needs from its log. */
    interface Host {
        /** @return the provider the log is on now */
        WalStorageProvider provider();

        /** @return that provider's descriptor */
        ProviderDescriptor descriptor();

        /** @return the log's fence */
        Fence fence();

        /** Runs a provider call under the call deadline (one that answers no writes). */
        void call(String op, Runnable call);

        /** Another writer claimed the log. */
        void lostOwnership(FencedException e);

        /** The health issue changed: the saturation state is recomputed. */
        void issueChanged();
    }

    // the category the pipeline always logged under
    private static final Logger LOG = LoggerFactory.getLogger(LogPipeline.class);

    private final LogId log;
    private final EngineContext ctx;
    private final PipelineMeters meters;
    private final Host host;
    private volatile HealthIssue issue;
    private volatile long lastOffset;

    CheckpointPublisher(LogId log, EngineContext ctx, PipelineMeters meters, Host host, long lastOffset) {
        this.log = log;
        this.ctx = ctx;
        this.meters = meters;
        this.host = host;
        this.lastOffset = lastOffset;
    }

    /** @return why the last checkpoint was refused or failed, null when the last one succeeded */
    HealthIssue issue() {
        return issue;
    }

    /** @return the offset through which the last published checkpoint reaches */
    long lastOffset() {
        return lastOffset;
    }

    /**
     * Publishes a checkpoint through {@code through}, then trims and deletes older checkpoints.
     *
     * @param format the checkpoint's format version
     * @return true when published (a later trim or delete failure only records the issue)
     */
    boolean publishAndTrim(byte[] snapshot, long through, int format) {
        long limit = host.descriptor().limits().maxCheckpointBytes();
        if (snapshot.length > limit) {
            refuse(snapshot.length, limit, through);
            return false;
        }
        long t0 = System.nanoTime();
        try {
            host.call("checkpoint publish", () -> host.provider().checkpoints().publish(log, host.fence(), through,
                    format, new ByteArrayInputStream(snapshot)));
            meters.checkpointDuration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            meters.checkpointBytes.record(snapshot.length);
            ctx.stats.checkpoints.increment();
            ctx.stats.checkpointBytes.add(snapshot.length);
            lastOffset = through;
        } catch (FencedException e) {
            host.lostOwnership(e);
            return false;
        } catch (RuntimeException e) {
            return failed(through, e);
        }
        // published: from here on a failure must not make the caller undo it (a manifest's runs are live now)
        try {
            long trimTo = ctx.feeds.trimThrough(log, through); // registered change-feed consumers may hold it back
            if (trimTo >= 0) {
                host.call("trim", () -> host.provider().trim(log, host.fence(), trimTo));
                ctx.stats.trims.increment();
                meters.trims.increment();
            }
            host.call("checkpoint delete", () -> host.provider().checkpoints().deleteBefore(log, through));
            issue = null;
        } catch (FencedException e) {
            host.lostOwnership(e);
        } catch (RuntimeException e) {
            failed(through, e); // the next checkpoint trims and deletes again
        }
        return true;
    }

    /** Records a failed checkpoint publish, trim or delete (health issue, meters, log); returns false. */
    private boolean failed(long through, RuntimeException e) {
        issue = new HealthIssue(log, HealthIssue.Kind.CHECKPOINT_FAILING, "checkpoint through "
                + through + " failed: " + e);
        ctx.stats.checkpointFailures.increment();
        meters.providerError(e);
        LOG.warn("log {}: checkpoint through {} failed (retried at the next threshold): {}", log, through,
                e.toString());
        return false;
    }

    /** A checkpoint larger than the provider stores: nothing is uploaded, the log keeps its tail untrimmed. */
    private void refuse(long bytes, long limit, long through) {
        meters.checkpointsRefused.increment();
        ctx.stats.checkpointFailures.increment();
        HealthIssue before = issue;
        boolean first = before == null || before.kind() != HealthIssue.Kind.CHECKPOINT_TOO_LARGE;
        HealthIssue now = new HealthIssue(log, HealthIssue.Kind.CHECKPOINT_TOO_LARGE, "checkpoint through offset "
                + through + " is " + bytes + " bytes, more than provider '" + host.descriptor().name() + "' stores ("
                + limit + " bytes, ProviderLimits.maxCheckpointBytes); nothing uploaded, the log is not trimmed"
                + " and replay grows until the partition shrinks (delete data or move it to more partitions)");
        issue = now;
        if (first) {
            LOG.error("log {}: {}", log, now.detail());
        }
        host.issueChanged();
    }
}
