package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import io.micrometer.core.instrument.Timer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Bounded retry of one log's provider calls: a {@link ProviderUnavailableException} (transient) is retried up to
 * {@code maxRetries} times with the engine's backoff, with the same arguments (so a retried batch keeps its batch id);
 * any other failure ends the call at once. Thread-safe (no state of its own).
 */
final class ProviderRetry {

    /**
     * The outcome of a call.
     *
     * @param error the failure that ended it, or null on success
     * @param hadTransientFailure whether any attempt failed transiently (a commit that did may have landed)
     */
    record Outcome(Throwable error, boolean hadTransientFailure) {
        static final Outcome OK = new Outcome(null, false);
        static final Outcome OK_AFTER_RETRY = new Outcome(null, true);
    }

    private final LogId log;
    private final EngineContext ctx;
    /** Runs one attempt of a call under the call deadline. */
    interface Watched {
        /**
         * @param op the operation's name
         * @param call the call
         * @param arg its argument
         */
        void attempt(String op, Consumer<Object> call, Object arg);
    }

    private final Watched watched;
    private final Consumer<Throwable> onRetry;

    /**
     * @param watched runs one attempt under the call deadline (operation name, the call)
     * @param onRetry told of each transient failure that is retried (metrics, health)
     */
    ProviderRetry(LogId log, EngineContext ctx, Watched watched, Consumer<Throwable> onRetry) {
        this.log = log;
        this.ctx = ctx;
        this.watched = watched;
        this.onRetry = onRetry;
    }

    /**
     * Runs {@code call} on {@code arg} with bounded retries, counting each attempt in {@code calls} and timing
     * successful ones. The call and its argument are passed apart so that a caller needs no capturing lambda per call.
     *
     * @param op the operation's name, for errors and the watchdog
     * @return the outcome; never throws for a provider failure (an {@link Error} from the provider becomes a
     *     {@link WalStorageException} with an uncertain outcome)
     */
    @SuppressWarnings("unchecked")
    <A> Outcome run(String op, Consumer<? super A> call, A arg, LongAdder calls, Timer timer) {
        Consumer<Object> c = (Consumer<Object>) call;
        boolean transientSeen = false;
        for (int attempt = 0; ; attempt++) {
            long t0 = System.nanoTime();
            try {
                calls.increment();
                watched.attempt(op, c, arg);
                timer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                return transientSeen ? Outcome.OK_AFTER_RETRY : Outcome.OK;
            } catch (ProviderUnavailableException e) {
                transientSeen = true;
                if (attempt >= ctx.config.maxRetries) {
                    return new Outcome(e, true);
                }
                onRetry.accept(e);
                ctx.backoff(attempt);
            } catch (RuntimeException e) {
                return new Outcome(e, transientSeen);
            } catch (Error e) {
                // e.g. InternalError from a failed access to a mapped file: the call's outcome is unknown
                return new Outcome(new WalStorageException(log, op + " failed with " + e, e), true);
            }
        }
    }
}
