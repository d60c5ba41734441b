package dev.lattice.cluster;

import dev.lattice.engine.LatticeException;
import dev.lattice.engine.WriteOutcomeUnknownException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.sharding.typed.ShardingEnvelope;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Sends a request to the entity of a log through the shard region and retries while the log has no owner that
 * serves it: an answer {@link dev.lattice.engine.PartitionNotHostedException}/{@link dev.lattice.engine.OwnershipLostException} (the
 * entity did nothing) is retried with a growing pause until the operation timeout; a read whose answer does not
 * come within the request timeout is retried too; a write whose answer does not come fails with
 * {@link WriteOutcomeUnknownException} (it may have been applied). An operation that some hosting member does not
 * understand ({@link PeerProtocols}: its protocol level is below the operation's) is not sent: it fails at once with
 * {@link UnsupportedOperationException}, as does a read of such an operation whose answer is late once such a member
 * is seen (it joined meanwhile: an owner of the previous release drops what it cannot read), so that the caller falls
 * back without waiting out the operation timeout. Thread-safe.
 */
final class Router {

    private final ActorRef<ShardingEnvelope<EntityMessage>> region;
    private final Scheduler scheduler;
    private final Duration requestTimeout;
    private final long operationTimeoutNanos;
    private final PeerProtocols protocols;
    private final Executor replies;

    /**
     * @param replies where an answer is looked at and the caller's future completed: the stage an ask returns
     *     runs even its non-async callbacks on {@code CompletableFuture}'s default pool otherwise
     */
    Router(ActorRef<ShardingEnvelope<EntityMessage>> region, Scheduler scheduler, Duration requestTimeout,
           Duration operationTimeout, PeerProtocols protocols, Executor replies) {
        this.protocols = protocols;
        this.replies = replies;
        this.region = region;
        this.scheduler = scheduler;
        this.requestTimeout = requestTimeout;
        this.operationTimeoutNanos = operationTimeout.toNanos();
    }

    /** @return the successful response, completed exceptionally with the typed error otherwise */
    CompletableFuture<Response> send(LogAddress log, Op op, Function<ActorRef<Response>, Request> make) {
        return send(log, op, make, requestTimeout);
    }

    /** The same with a longer wait for one attempt's answer (an atomic commit's several steps). */
    CompletableFuture<Response> send(LogAddress log, Op op, Function<ActorRef<Response>, Request> make,
                                     Duration attemptTimeout) {
        CompletableFuture<Response> out = new CompletableFuture<>();
        if (refused(log, op, out, null)) {
            return out;
        }
        attempt(log, op, make, System.nanoTime() + operationTimeoutNanos, 0, out, attemptTimeout);
        return out;
    }

    /**
     * The same, retrying (while the log has no owner, or a read's answer is late) only within {@code within}
     * instead of the operation timeout: for requests that are useless when late (a scan's prepare holds).
     */
    CompletableFuture<Response> send(LogAddress log, Op op, Function<ActorRef<Response>, Request> make,
                                     Duration attemptTimeout, Duration within) {
        CompletableFuture<Response> out = new CompletableFuture<>();
        if (refused(log, op, out, null)) {
            return out;
        }
        attempt(log, op, make, System.nanoTime() + Math.min(within.toNanos(), operationTimeoutNanos), 0, out,
                attemptTimeout);
        return out;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    /** @return what this node and its peers understand */
    PeerProtocols protocols() {
        return protocols;
    }

    /**
     * Fails {@code out} with {@link UnsupportedOperationException} when a hosting member does not understand
     * {@code op}.
     *
     * @param late the timeout of the attempt that found it, or null before the first attempt
     * @return true when it did
     */
    private boolean refused(LogAddress log, Op op, CompletableFuture<Response> out, Throwable late) {
        if (op.level <= PeerProtocols.OLDEST) {
            return false;
        }
        int level = protocols.hostLevel();
        if (level >= op.level) {
            return false;
        }
        UnsupportedOperationException e = new UnsupportedOperationException(op + " on " + log.entityId() + " needs"
                + " wire protocol level " + op.level + ", and the cluster has hosting members (or this node) of level "
                + level + (late == null ? "" : " (seen after an attempt had no answer)")
                + ": a rolling upgrade is under way (docs/cluster.md \"Rolling upgrades\")");
        if (late != null) {
            e.initCause(late);
        }
        out.completeExceptionally(e);
        return true;
    }

    Duration operationTimeout() {
        return Duration.ofNanos(operationTimeoutNanos);
    }

    /** Blocking form of {@link #send}: the response, or the typed error thrown as is. */
    Response call(LogAddress log, Op op, Function<ActorRef<Response>, Request> make) {
        return await(send(log, op, make));
    }

    static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LatticeException("interrupted while waiting for the cluster", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new LatticeException("cluster call failed", c);
        }
    }

    private void attempt(LogAddress log, Op op, Function<ActorRef<Response>, Request> make, long deadline,
                         int attempt, CompletableFuture<Response> out, Duration requestTimeout) {
        String id = log.entityId();
        AskPattern.<ShardingEnvelope<EntityMessage>, Response>ask(region,
                        replyTo -> new ShardingEnvelope<>(id, make.apply(replyTo)), requestTimeout, scheduler)
                .whenCompleteAsync((r, err) -> {
                    if (err == null && r.ok()) {
                        out.complete(r);
                        return;
                    }
                    boolean late = System.nanoTime() > deadline;
                    if (err != null) {
                        Throwable c = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                        boolean timedOut = c instanceof TimeoutException;
                        if (timedOut && op.writes()) {
                            out.completeExceptionally(new WriteOutcomeUnknownException(op + " on " + id
                                    + ": no answer from the log's owner within " + requestTimeout.toMillis()
                                    + " ms; the write may or may not have been applied", c));
                        } else if (timedOut && refused(log, op, out, c)) {
                            return; // an owner of an older version may have dropped it
                        } else if (timedOut && !late) {
                            retry(log, op, make, deadline, attempt, out, requestTimeout);
                        } else {
                            out.completeExceptionally(new LatticeException(op + " on " + id + ": " + (timedOut
                                    ? "no owner answered within the operation timeout" : c.toString()), c));
                        }
                        return;
                    }
                    RuntimeException e = RemoteErrors.toException(r);
                    if (RemoteErrors.retryElsewhere(e) && !late) {
                        retry(log, op, make, deadline, attempt, out, requestTimeout);
                    } else {
                        out.completeExceptionally(e);
                    }
                }, replies);
    }

    private void retry(LogAddress log, Op op, Function<ActorRef<Response>, Request> make, long deadline, int attempt,
                       CompletableFuture<Response> out, Duration requestTimeout) {
        long pauseMillis = Math.min(500, 10L << Math.min(attempt, 6));
        CompletableFuture.delayedExecutor(pauseMillis, TimeUnit.MILLISECONDS, replies)
                .execute(() -> attempt(log, op, make, deadline, attempt + 1, out, requestTimeout));
    }
}
