package dev.lattice.provider.azure.blob;

import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import reactor.core.publisher.Mono;

import java.time.Duration;

/**
 * A pipeline policy that adds a fixed delay before each request while switched on: a crude emulation of a
 * long-distance link's round trip on a loopback emulator (bandwidth and the service's per-block read pace are not
 * emulated; the harness adds them from counted bytes and blocks). Used by the replay harness only, never by timed
 * assertions. Thread-safe.
 */
final class LinkEmulation implements HttpPipelinePolicy {

    private final long delayMillis;
    private volatile boolean on;

    /**
     * @param delayMillis delay per request, in milliseconds
     */
    LinkEmulation(long delayMillis) {
        this.delayMillis = delayMillis;
    }

    /**
     * @param enabled whether requests are delayed from now on
     */
    void enabled(boolean enabled) {
        this.on = enabled;
    }

    @Override
    public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
        if (!on || delayMillis == 0) {
            return next.process();
        }
        return Mono.delay(Duration.ofMillis(delayMillis)).then(next.process());
    }

    @Override
    public HttpResponse processSync(HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
        if (on && delayMillis > 0) {
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while emulating link latency", e);
            }
        }
        return next.processSync();
    }
}
