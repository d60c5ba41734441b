package dev.lattice.testkit;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;

import java.util.concurrent.atomic.LongAdder;

/**
 * Models one storage account's ceiling in benchmarks: every {@code stage}, {@code commit} and {@code read} waits for
 * a permit of a requests/s limiter, and every written or read payload byte for a permit of a bytes/s limiter (see
 * {@link RateLimit}), so that the account, not the machine, binds. Other calls pass unthrottled. Counts the
 * throttled requests and bytes. Thread-safe.
 */
public final class ThrottledProvider extends ForwardingProvider {

    private final RateLimit requests;
    private final RateLimit bytes;
    private final LongAdder requestCount = new LongAdder();
    private final LongAdder byteCount = new LongAdder();

    /**
     * Creates the instance.
     *
     * @param delegate the account's provider
     * @param requestsPerSecond the account's request ceiling, requests/s, {@code > 0}
     * @param bytesPerSecond the account's bandwidth ceiling, payload bytes/s, {@code > 0}
     * @throws NullPointerException if {@code delegate} is null
     * @throws IllegalArgumentException if a rate is not positive
     */
    public ThrottledProvider(WalStorageProvider delegate, double requestsPerSecond, double bytesPerSecond) {
        super(delegate);
        this.requests = new RateLimit(requestsPerSecond);
        this.bytes = new RateLimit(bytesPerSecond);
    }

    /** {@return throttled requests so far ({@code stage}, {@code commit}, {@code read})} */
    public long requestCount() {
        return requestCount.sum();
    }

    /** {@return payload bytes staged and read so far} */
    public long byteCount() {
        return byteCount.sum();
    }

    private void request(long payloadBytes) {
        requests.acquire(1);
        requestCount.increment();
        payload(payloadBytes);
    }

    private void payload(long n) {
        if (n > 0) {
            bytes.acquire(n);
            byteCount.add(n);
        }
    }

    /** Waits for a request permit and a permit per payload byte, then stages. */
    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        request(batch.payloadBytes());
        return super.stage(log, fence, batch);
    }

    /** Waits for a request permit, then commits. */
    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        request(0);
        super.commit(log, fence, throughOffset);
    }

    /** Waits for a request permit, reads, then waits for a permit per payload byte read. */
    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        request(0);
        ReadPage page = super.read(log, fromExclusive, maxEntries, maxBytes);
        payload(page.payloadBytes());
        return page;
    }
}
