package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;

import java.util.List;
import java.util.function.Consumer;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The "backend stops answering" check for a provider's own deadlines: with the backend stalled (a proxy that stops
 * forwarding), an append and a read must fail with {@link ProviderUnavailableException} within a bound, and once the
 * backend answers again the retried append (same batch id) lands exactly once. Used by the providers' deadline tests;
 * each test supplies the stall switch of its proxy. Not thread-safe; one log per call.
 */
public final class StalledBackendCheck {

    /**
     * What was measured.
     *
     * @param appendMillis how long the stalled append took to fail, ms
     * @param readMillis how long the stalled read took to fail, ms
     */
    public record Result(long appendMillis, long readMillis) {
    }

    private StalledBackendCheck() {
    }

    /**
     * Runs the check on an open provider whose traffic goes through a stallable proxy.
     *
     * @param p the provider, reaching its backend through the proxy
     * @param log a log of its own
     * @param stall switches the proxy: {@code true} stops forwarding, {@code false} resumes
     * @param limitMillis each stalled call must fail within this many ms
     * @return the measured failure times
     * @throws AssertionError if a stalled call does not fail with {@link ProviderUnavailableException} in time, or
     *     the log does not hold exactly the two batches afterwards
     */
    public static Result run(WalStorageProvider p, LogId log, Consumer<Boolean> stall, long limitMillis) {
        Fence fence = p.claim(log);
        p.reconcile(log, fence);
        EncodedBatch b0 = batch(5, 0, 3, 40);
        p.append(log, fence, b0);
        EncodedBatch b1 = batch(5, 3, 3, 40);
        stall.accept(true);
        long append;
        long read;
        try {
            long t0 = System.nanoTime();
            Throwable f = catchThrowable(() -> p.append(log, fence, b1));
            append = (System.nanoTime() - t0) / 1_000_000;
            assertThat(f).as("append while the backend is stalled").isInstanceOf(ProviderUnavailableException.class);
            t0 = System.nanoTime();
            f = catchThrowable(() -> p.read(log, -1, 100, 1 << 20));
            read = (System.nanoTime() - t0) / 1_000_000;
            assertThat(f).as("read while the backend is stalled").isInstanceOf(ProviderUnavailableException.class);
        } finally {
            stall.accept(false);
        }
        assertThat(append).as("stalled append failed after (ms)").isLessThan(limitMillis);
        assertThat(read).as("stalled read failed after (ms)").isLessThan(limitMillis);
        p.append(log, fence, b1); // its outcome was unknown: the retry with the same batch id lands once
        assertSameEntries(readAll(p, log), entriesOf(List.of(b0, b1)));
        return new Result(append, read);
    }
}
