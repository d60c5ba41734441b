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
 * is seen (it joined meanwhile: an owner of level 1 drops what it cannot read), so that the caller falls
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
        RuntimeException e = refusal(log, op, late);
        if (e == null) {
            return false;
        }
        out.completeExceptionally(e);
        return true;
    }

    /** @return the error when a hosting member does not understand {@code op} (unsupported), or null */
    private RuntimeException refusal(LogAddress log, Op op, Throwable late) {
        if (op.level <= PeerProtocols.OLDEST) {
            return null;
        }
        int level = protocols.hostLevel();
        if (level >= op.level) {
            return null;
        }
        UnsupportedOperationException e = new UnsupportedOperationException(op + " on " + log.entityId() + " needs"
                + " wire protocol level " + op.level + ", and the cluster has hosting members (or this node) of level "
                + level + (late == null ? "" : " (seen after an attempt had no answer)")
                + ": a rolling upgrade is under way (docs/cluster.md \"Rolling upgrades\")");
        if (late != null) {
            e.initCause(late);
        }
        return e;
    }

    Duration operationTimeout() {
        return Duration.ofNanos(operationTimeoutNanos);
    }

    /**
     * Blocking form of {@link #send}: the response, or the typed error thrown as is. The calling thread waits for
     * each attempt's answer itself and retries on itself, so an answer wakes it directly (no hand-off to the reply
     * threads: one thread switch less per request).
     */
    Response call(LogAddress log, Op op, Function<ActorRef<Response>, Request> make) {
        RuntimeException refused = refusal(log, op, null);
        if (refused != null) {
            throw refused;
        }
        long deadline = System.nanoTime() + operationTimeoutNanos;
        for (int attempt = 0; ; attempt++) {
            CompletableFuture<Response> answer = ask(log, make, requestTimeout);
            Response r = null;
            Throwable err = null;
            try {
                r = answer.get(); // the ask's own future: waiting registers no callback (those run on the default pool)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LatticeException("interrupted while waiting for the cluster", e);
            } catch (ExecutionException e) {
                err = e.getCause() != null ? e.getCause() : e;
            }
            Outcome o = judge(log, op, r, err, deadline, requestTimeout);
            if (o.response != null) {
                return o.response;
            }
            if (o.error != null) {
                throw o.error;
            }
            try {
                Thread.sleep(pauseMillis(attempt));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LatticeException("interrupted while waiting for the cluster", e);
            }
        }
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

    private CompletableFuture<Response> ask(LogAddress log, Function<ActorRef<Response>, Request> make,
                                            Duration requestTimeout) {
        String id = log.entityId();
        return AskPattern.<ShardingEnvelope<EntityMessage>, Response>ask(region,
                replyTo -> new ShardingEnvelope<>(id, make.apply(replyTo)), requestTimeout, scheduler)
                .toCompletableFuture();
    }

    private void attempt(LogAddress log, Op op, Function<ActorRef<Response>, Request> make, long deadline,
                         int attempt, CompletableFuture<Response> out, Duration requestTimeout) {
        ask(log, make, requestTimeout).whenCompleteAsync((r, err) -> {
            Outcome o = judge(log, op, r, err, deadline, requestTimeout);
            if (o.response != null) {
                out.complete(o.response);
            } else if (o.error != null) {
                out.completeExceptionally(o.error);
            } else {
                CompletableFuture.delayedExecutor(pauseMillis(attempt), TimeUnit.MILLISECONDS, replies)
                        .execute(() -> attempt(log, op, make, deadline, attempt + 1, out, requestTimeout));
            }
        }, replies);
    }

    /** What to do after one attempt: answer with {@code response}, fail with {@code error}, or (both null) retry. */
    private record Outcome(Response response, RuntimeException error) {
        static final Outcome RETRY = new Outcome(null, null);
    }

    /**
     * Judges one attempt's answer: a successful response is the answer; a log without an owner that serves it, or a
     * read's late answer, is retried until {@code deadline}; a write's late answer is
     * {@link WriteOutcomeUnknownException}; anything else is the typed error.
     */
    private Outcome judge(LogAddress log, Op op, Response r, Throwable err, long deadline, Duration requestTimeout) {
        if (err == null && r.ok()) {
            return new Outcome(r, null);
        }
        String id = log.entityId();
        boolean late = System.nanoTime() > deadline;
        if (err != null) {
            Throwable c = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            boolean timedOut = c instanceof TimeoutException;
            if (timedOut && op.writes()) {
                return new Outcome(null, new WriteOutcomeUnknownException(op + " on " + id
                        + ": no answer from the log's owner within " + requestTimeout.toMillis()
                        + " ms; the write may or may not have been applied", c));
            }
            RuntimeException refused = timedOut ? refusal(log, op, c) : null;
            if (refused != null) {
                return new Outcome(null, refused); // an owner of an older version may have dropped it
            }
            if (timedOut && !late) {
                return Outcome.RETRY;
            }
            return new Outcome(null, new LatticeException(op + " on " + id + ": " + (timedOut
                    ? "no owner answered within the operation timeout" : c.toString()), c));
        }
        RuntimeException e = RemoteErrors.toException(r);
        return RemoteErrors.retryElsewhere(e) && !late ? Outcome.RETRY : new Outcome(null, e);
    }

    /** @return the pause before retry {@code attempt + 1}, in ms: 10, 20, 40 ... at most 500 */
    private static long pauseMillis(int attempt) {
        return Math.min(500, 10L << Math.min(attempt, 6));
    }
}
