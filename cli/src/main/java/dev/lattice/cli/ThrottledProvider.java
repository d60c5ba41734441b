package dev.lattice.cli;

import com.google.common.util.concurrent.RateLimiter;
import dev.lattice.conformance.ForwardingProvider;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;

import java.util.concurrent.atomic.LongAdder;

/**
 * Models one storage account's ceiling in benchmarks: every request waits for a permit of a requests/s limiter,
 * and every written or read payload byte for a permit of a bytes/s limiter (Guava {@link RateLimiter}), so that the
 * account, not the machine, binds. Counts requests and bytes. Thread-safe.
 */
final class ThrottledProvider extends ForwardingProvider {

    private final RateLimiter requests;
    private final RateLimiter bytes;
    final LongAdder requestCount = new LongAdder();
    final LongAdder byteCount = new LongAdder();

    /**
     * @param delegate the account's provider
     * @param requestsPerSecond the account's request ceiling, requests/s
     * @param bytesPerSecond the account's bandwidth ceiling, payload bytes/s
     */
    ThrottledProvider(WalStorageProvider delegate, double requestsPerSecond, double bytesPerSecond) {
        super(delegate);
        this.requests = RateLimiter.create(requestsPerSecond);
        this.bytes = RateLimiter.create(bytesPerSecond);
    }

    private void request(long payloadBytes) {
        requests.acquire();
        requestCount.increment();
        if (payloadBytes > 0) {
            bytes.acquire((int) Math.min(Integer.MAX_VALUE, payloadBytes));
            byteCount.add(payloadBytes);
        }
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        request(batch.payloadBytes());
        return super.stage(log, fence, batch);
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        request(0);
        super.commit(log, fence, throughOffset);
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        request(0);
        ReadPage page = super.read(log, fromExclusive, maxEntries, maxBytes);
        long n = page.payloadBytes();
        if (n > 0) {
            bytes.acquire((int) Math.min(Integer.MAX_VALUE, n));
            byteCount.add(n);
        }
        return page;
    }
}
