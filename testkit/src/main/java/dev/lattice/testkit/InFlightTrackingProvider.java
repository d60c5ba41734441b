package dev.lattice.testkit;

import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A pass-through decorator that knows how many calls are running, so that a benchmark (e.g. {@code lattice bench
 * replay --reopen crash}) can stop using a provider at a quiet moment (no stage, commit or background checkpoint in
 * flight) and reopen the storage as a crashed process would find it: without the checkpoint a clean close writes.
 * Every intercepted call counts (see {@link ForwardingProvider}), checkpoint store calls included. Thread-safe.
 */
public final class InFlightTrackingProvider extends ForwardingProvider {

    private final AtomicInteger running = new AtomicInteger();
    private final AtomicLong lastCallEndNanos = new AtomicLong(System.nanoTime());

    /**
     * Creates the instance.
     *
     * @param delegate the provider that does the work
     * @throws NullPointerException if {@code delegate} is null
     */
    public InFlightTrackingProvider(WalStorageProvider delegate) {
        super(delegate);
    }

    /** {@return how many calls are running now} */
    public int inFlight() {
        return running.get();
    }

    /**
     * Waits until no call has been running for {@code quiet}, or {@code max} has passed. Polls every 5 ms.
     *
     * @param quiet how long the provider must stay idle
     * @param max the longest wait
     * @return true when it was idle for {@code quiet}; false on timeout or when interrupted (the interrupt flag is
     *     set again)
     */
    public boolean awaitQuiet(Duration quiet, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline) {
            if (running.get() == 0 && System.nanoTime() - lastCallEndNanos.get() >= quiet.toNanos()) {
                return true;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    /**
     * Runs the call, counted as in flight until it returns or throws.
     *
     * @return the call's result
     */
    @Override
    protected <T> T intercept(SpiOperation op, LogId log, Supplier<T> call) {
        running.incrementAndGet();
        try {
            return call.get();
        } finally {
            lastCallEndNanos.set(System.nanoTime());
            running.decrementAndGet();
        }
    }
}
