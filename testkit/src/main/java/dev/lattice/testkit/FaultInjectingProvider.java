package dev.lattice.testkit;

import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A decorator that injects the failures of a remote store into any provider (and its {@link CheckpointStore}):
 * requests that fail before they reach the store, requests that land but whose response is lost, requests that
 * time out, and a latency on every call.
 *
 * <p>A fault is described by a {@link FaultRule} and armed with {@link #inject(FaultRule)}:
 * <pre>{@code
 * FaultInjectingProvider p = new FaultInjectingProvider(real, 42);
 * p.inject(FaultRule.failAfter(SpiOperation.COMMIT));                    // next commit lands, caller sees a failure
 * p.inject(FaultRule.failBefore(SpiOperation.STAGE).times(3));           // next 3 stages fail, nothing stored
 * p.inject(FaultRule.failBefore(SpiOperation.STAGE).always().withProbability(0.05));
 * p.inject(FaultRule.timeoutBefore(SpiOperation.READ, Duration.ofMillis(200)).afterSkipping(10));
 * p.setLatency(Duration.ofMillis(2));                                    // every call takes 2 ms more
 * }</pre>
 *
 * <p>Every injected failure is an {@link InjectedFaultException} (a {@link ProviderUnavailableException}, the SPI's
 * transient failure whose outcome is unknown). {@link Timing#BEFORE}: the call is not delegated, nothing happened.
 * {@link Timing#AFTER}: the call is delegated and completes, then its result is dropped and the exception thrown (if
 * the delegated call itself throws, that exception propagates instead). A timeout blocks the calling thread for its
 * duration, then fails the same way.
 *
 * <p>Rules are checked in the order they were injected; the first one that matches a call and decides to fire wins.
 * A rule fires at most its {@link FaultRule#times(int) count} (default once), after letting
 * {@link FaultRule#afterSkipping(int) skipped} matching calls through, each time with its
 * {@link FaultRule#withProbability(double) probability} drawn from this decorator's seeded {@link Random}.
 *
 * <p>{@code append} is the SPI's default (stage, then commit, abort if the commit fails) running through this
 * decorator, so stage and commit faults apply to appends too, even when the delegate overrides {@code append}.
 * {@code describe} and {@code close} are never faulted nor delayed.
 *
 * <p>Thread-safe: rules may be injected and cancelled while other threads call the provider; the firing decision
 * is made under a lock, so with a fixed seed and a fixed call order the same calls fail.
 */
public final class FaultInjectingProvider extends ForwardingProvider {

    /** When an injected fault strikes relative to the delegated call. */
    public enum Timing {
        /** The request fails before it reaches the provider: nothing happened. */
        BEFORE,
        /** The request reaches the provider and completes, but the response is lost. */
        AFTER
    }

    /**
     * An immutable description of a fault: which call, when, how many times, with which probability. Build one with
     * the static factories and refine it with the {@code with}-style methods, each of which returns a new rule.
     *
     * @param operation the call to fault
     * @param timing before or after delegating
     * @param timeout how long to block before failing; {@link Duration#ZERO} fails at once
     * @param times how many times the rule fires, {@code >= 1}, or {@code -1} for no limit
     * @param skip how many matching calls to let through before the first firing, {@code >= 0}
     * @param probability the chance that an eligible call fires, in {@code (0, 1]}
     * @param log only calls addressing this log match, or null for any log
     */
    public record FaultRule(SpiOperation operation, Timing timing, Duration timeout, int times, int skip,
                            double probability, LogId log) {

        /**
         * Validates a rule.
         *
         * @param operation the call to fault
         * @param timing before or after delegating
         * @param timeout how long to block before failing; {@link Duration#ZERO} fails at once
         * @param times how many times the rule fires, {@code >= 1}, or {@code -1} for no limit
         * @param skip how many matching calls to let through before the first firing, {@code >= 0}
         * @param probability the chance that an eligible call fires, in {@code (0, 1]}
         * @param log only calls addressing this log match, or null for any log
         * @throws NullPointerException if operation, timing or timeout is null
         * @throws IllegalArgumentException if a number is out of range or the timeout is negative
         */
        public FaultRule {
            Objects.requireNonNull(operation, "operation");
            Objects.requireNonNull(timing, "timing");
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("timeout must be >= 0, got " + timeout);
            }
            if (times < 1 && times != -1) {
                throw new IllegalArgumentException("times must be >= 1 or -1 (no limit), got " + times);
            }
            if (skip < 0) {
                throw new IllegalArgumentException("skip must be >= 0, got " + skip);
            }
            if (!(probability > 0 && probability <= 1)) {
                throw new IllegalArgumentException("probability must be in (0, 1], got " + probability);
            }
        }

        /**
         * The next call of an operation fails before reaching the provider (nothing happens).
         *
         * @param operation the call
         * @return a rule that fires once
         */
        public static FaultRule failBefore(SpiOperation operation) {
            return new FaultRule(operation, Timing.BEFORE, Duration.ZERO, 1, 0, 1.0, null);
        }

        /**
         * The next call of an operation lands on the provider, but its response is lost.
         *
         * @param operation the call
         * @return a rule that fires once
         */
        public static FaultRule failAfter(SpiOperation operation) {
            return new FaultRule(operation, Timing.AFTER, Duration.ZERO, 1, 0, 1.0, null);
        }

        /**
         * The next call of an operation hangs for {@code timeout} without reaching the provider, then fails.
         *
         * @param operation the call
         * @param timeout how long it blocks
         * @return a rule that fires once
         */
        public static FaultRule timeoutBefore(SpiOperation operation, Duration timeout) {
            return new FaultRule(operation, Timing.BEFORE, timeout, 1, 0, 1.0, null);
        }

        /**
         * The next call of an operation lands on the provider, then hangs for {@code timeout}, then fails.
         *
         * @param operation the call
         * @param timeout how long it blocks after the call landed
         * @return a rule that fires once
         */
        public static FaultRule timeoutAfter(SpiOperation operation, Duration timeout) {
            return new FaultRule(operation, Timing.AFTER, timeout, 1, 0, 1.0, null);
        }

        /** {@return this rule firing once (the default)} */
        public FaultRule once() {
            return times(1);
        }

        /**
         * Limits how often the rule fires.
         *
         * @param n how many times the rule fires, {@code >= 1}
         * @return a copy firing {@code n} times
         */
        public FaultRule times(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("times must be >= 1, got " + n);
            }
            return new FaultRule(operation, timing, timeout, n, skip, probability, log);
        }

        /** {@return a copy that fires on every eligible call until cancelled} */
        public FaultRule always() {
            return new FaultRule(operation, timing, timeout, -1, skip, probability, log);
        }

        /**
         * Lets some matching calls through before the rule may fire.
         *
         * @param calls matching calls to let through before the rule may fire, {@code >= 0}
         * @return a copy that skips that many calls first
         */
        public FaultRule afterSkipping(int calls) {
            return new FaultRule(operation, timing, timeout, times, calls, probability, log);
        }

        /**
         * Makes the rule fire at random.
         *
         * @param p the chance, in {@code (0, 1]}, that an eligible call fires
         * @return a copy with that probability
         */
        public FaultRule withProbability(double p) {
            return new FaultRule(operation, timing, timeout, times, skip, p, log);
        }

        /**
         * Restricts the rule to one log's calls.
         *
         * @param only the log whose calls match (calls without a log, {@code logs} and {@code trees}, never match)
         * @return a copy restricted to that log
         */
        public FaultRule onLog(LogId only) {
            return new FaultRule(operation, timing, timeout, times, skip, probability,
                    Objects.requireNonNull(only, "log"));
        }
    }

    /** An armed rule: how often it fired; cancel it to disarm. Thread-safe. */
    public final class Fault {
        private final FaultRule rule;
        private long seen;
        private long fired;
        private boolean cancelled;

        private Fault(FaultRule rule) {
            this.rule = rule;
        }

        /** {@return the rule} */
        public FaultRule rule() {
            return rule;
        }

        /** {@return how many calls this rule failed so far} */
        public long firedCount() {
            synchronized (lock) {
                return fired;
            }
        }

        /** {@return true when the rule fired as often as it may, or was cancelled} */
        public boolean isExhausted() {
            synchronized (lock) {
                return cancelled || (rule.times() != -1 && fired >= rule.times());
            }
        }

        /** Disarms the rule; calls already failing are not affected. Idempotent. */
        public void cancel() {
            synchronized (lock) {
                cancelled = true;
            }
            faults.remove(this);
        }

        /** Called under {@code lock}. */
        private boolean fires(SpiOperation op, LogId log) {
            if (cancelled || rule.operation() != op || (rule.log() != null && !rule.log().equals(log))) {
                return false;
            }
            if (rule.times() != -1 && fired >= rule.times()) {
                return false;
            }
            seen++;
            if (seen <= rule.skip()) {
                return false;
            }
            if (rule.probability() < 1 && random.nextDouble() >= rule.probability()) {
                return false;
            }
            fired++;
            return true;
        }
    }

    private final Object lock = new Object();
    private final Random random;
    private final List<Fault> faults = new CopyOnWriteArrayList<>();
    private final AtomicLong injected = new AtomicLong();
    private final Latency latency = new Latency();

    /**
     * Wraps a provider with no faults and no latency, with random seed 0.
     *
     * @param delegate the provider that does the work
     * @throws NullPointerException if {@code delegate} is null
     */
    public FaultInjectingProvider(WalStorageProvider delegate) {
        this(delegate, 0);
    }

    /**
     * Wraps a provider with no faults and no latency.
     *
     * @param delegate the provider that does the work
     * @param seed the seed of the random source used for probabilities and random latencies
     * @throws NullPointerException if {@code delegate} is null
     */
    public FaultInjectingProvider(WalStorageProvider delegate, long seed) {
        super(delegate);
        this.random = new Random(seed);
    }

    /**
     * Arms a fault.
     *
     * @param rule what to inject
     * @return the armed fault, to observe or cancel it
     * @throws NullPointerException if {@code rule} is null
     */
    public Fault inject(FaultRule rule) {
        Fault f = new Fault(Objects.requireNonNull(rule, "rule"));
        faults.add(f);
        return f;
    }

    /** Disarms every fault (latency stays). */
    public void clearFaults() {
        for (Fault f : faults) {
            f.cancel();
        }
    }

    /** {@return how many calls this decorator failed so far} */
    public long injectedFaultCount() {
        return injected.get();
    }

    /**
     * Adds a fixed latency to every faultable call (before it is delegated), like a round trip to a remote store.
     *
     * @param latency the delay; {@link Duration#ZERO} for none
     * @throws IllegalArgumentException if negative
     */
    public void setLatency(Duration latency) {
        setLatency(latency, latency);
    }

    /**
     * Adds a uniformly distributed random latency, drawn from the seeded random source, to every faultable call.
     *
     * @param min the shortest delay, inclusive
     * @param max the longest delay, inclusive, {@code >= min}
     * @throws IllegalArgumentException if negative or {@code max < min}
     */
    public void setLatency(Duration min, Duration max) {
        latency.set(min, max);
    }

    private Fault decide(SpiOperation op, LogId log) {
        long delay;
        Fault hit = null;
        synchronized (lock) {
            delay = latency.draw(random);
            for (Fault f : faults) {
                if (f.fires(op, log)) {
                    hit = f;
                    break;
                }
            }
        }
        Latency.pause(delay, op, log);
        return hit;
    }

    private InjectedFaultException fail(Fault f, SpiOperation op, LogId log) {
        Duration t = f.rule().timeout();
        Latency.pause(t.toNanos(), op, log);
        injected.incrementAndGet();
        String how = f.rule().timing() == Timing.BEFORE
                ? "failed before reaching the provider (nothing happened)"
                : "landed on the provider but its response was lost";
        if (!t.isZero()) {
            how = "timed out after " + t.toMillis() + " ms and " + how;
        }
        return new InjectedFaultException(log, op, f.rule().timing(), how);
    }

    /**
     * Waits the latency, then fails the call if an armed rule fires on it ({@link Timing#BEFORE}: without running
     * it; {@link Timing#AFTER}: after running it, closing its result if that is {@link AutoCloseable}), else runs it.
     *
     * @throws InjectedFaultException when a rule fires
     * @throws ProviderUnavailableException if interrupted while waiting
     */
    @Override
    protected <T> T intercept(SpiOperation op, LogId log, Supplier<T> body) {
        Fault f = decide(op, log);
        if (f != null && f.rule().timing() == Timing.BEFORE) {
            throw fail(f, op, log);
        }
        T result = body.get();
        if (f != null) {
            if (result instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // the response is being dropped anyway
                }
            }
            throw fail(f, op, log);
        }
        return result;
    }
}
