package dev.lattice.testkit;

import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;

import java.time.Duration;
import java.util.Random;
import java.util.function.Supplier;

/**
 * A decorator that adds a delay before every intercepted call (see {@link ForwardingProvider}), like the round trip
 * to a remote store: fixed, or uniform in a range drawn from a seeded random source. {@code describe} and
 * {@code close} are not delayed. No delay until {@link #setLatency} is called.
 *
 * <p>Thread-safe; the latency may be changed while calls run (calls already waiting keep their delay).
 */
public final class LatencyProvider extends ForwardingProvider {

    private final Latency latency = new Latency();
    private final Random random;

    /**
     * Wraps a provider with no latency and random seed 0.
     *
     * @param delegate the provider that does the work
     * @throws NullPointerException if {@code delegate} is null
     */
    public LatencyProvider(WalStorageProvider delegate) {
        this(delegate, 0);
    }

    /**
     * Wraps a provider with no latency.
     *
     * @param delegate the provider that does the work
     * @param seed the seed of the random source for random latencies
     * @throws NullPointerException if {@code delegate} is null
     */
    public LatencyProvider(WalStorageProvider delegate, long seed) {
        super(delegate);
        this.random = new Random(seed);
    }

    /**
     * Sets a fixed delay for every call.
     *
     * @param delay the delay; {@link Duration#ZERO} for none
     * @return this decorator
     * @throws IllegalArgumentException if negative
     */
    public LatencyProvider setLatency(Duration delay) {
        return setLatency(delay, delay);
    }

    /**
     * Sets a uniformly distributed random delay for every call.
     *
     * @param min the shortest delay, inclusive
     * @param max the longest delay, inclusive, {@code >= min}
     * @return this decorator
     * @throws IllegalArgumentException if negative or {@code max < min}
     */
    public LatencyProvider setLatency(Duration min, Duration max) {
        latency.set(min, max);
        return this;
    }

    /**
     * Waits the latency, then runs the call.
     *
     * @throws dev.lattice.spi.ProviderUnavailableException if interrupted while waiting (the call is not made)
     */
    @Override
    protected <T> T intercept(SpiOperation op, LogId log, Supplier<T> call) {
        long delay;
        synchronized (random) {
            delay = latency.draw(random);
        }
        Latency.pause(delay, op, log);
        return call.get();
    }
}
