package dev.lattice.provider.azure.blob;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpMethod;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpRequest;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A pipeline policy for test clients that sees every HTTP attempt: it counts requests and bytes, and checks each
 * request against the real service's limits, which Azurite does not enforce (it accepts a 5 MiB append block): an
 * append block or staged block above the configured block limit, a single-shot upload above 256 MiB, or more
 * committed append blocks in one append blob than the configured per-blob limit. A violation is recorded (tests
 * assert there are none) and the request is refused, so nothing passes silently.
 *
 * <p>Thread-safe.
 */
final class RequestLedger implements HttpPipelinePolicy {

    /** Largest single-shot block blob upload of the older service versions: 256 MiB. */
    static final long SERVICE_MAX_PUT_BLOB_BYTES = 256L << 20;

    private final long maxBlockBytes;
    private final int maxBlocksPerAppendBlob;
    private final List<String> violations = new ArrayList<>();
    private final Map<String, AtomicInteger> appendsPerBlob = new ConcurrentHashMap<>();
    final LongAdder requests = new LongAdder();
    final LongAdder gets = new LongAdder();
    final LongAdder puts = new LongAdder();
    final LongAdder appendRequests = new LongAdder();
    final LongAdder bytesUp = new LongAdder();
    final LongAdder bytesDown = new LongAdder();

    /**
     * @param maxBlockBytes largest append or staged block the service accepts, in bytes
     * @param maxBlocksPerAppendBlob most committed blocks per append blob
     */
    RequestLedger(long maxBlockBytes, int maxBlocksPerAppendBlob) {
        this.maxBlockBytes = maxBlockBytes;
        this.maxBlocksPerAppendBlob = maxBlocksPerAppendBlob;
    }

    /** @return the violations seen so far */
    synchronized List<String> violations() {
        return new ArrayList<>(violations);
    }

    private synchronized void violation(String v) {
        violations.add(v);
    }

    /** @return null when the request is within the limits, else the violation */
    private String check(HttpRequest r) {
        requests.increment();
        if (r.getHttpMethod() == HttpMethod.GET) {
            gets.increment();
        } else if (r.getHttpMethod() == HttpMethod.PUT) {
            puts.increment();
        }
        String len = r.getHeaders().getValue(HttpHeaderName.CONTENT_LENGTH);
        long bytes = len == null ? 0 : Long.parseLong(len);
        bytesUp.add(bytes);
        String query = r.getUrl().getQuery() == null ? "" : r.getUrl().getQuery();
        String blobType = r.getHeaders().getValue(HttpHeaderName.fromString("x-ms-blob-type"));
        String v = null;
        if (query.contains("comp=appendblock")) {
            appendRequests.increment();
            if (bytes > maxBlockBytes) {
                v = "append block of " + bytes + " bytes > service limit " + maxBlockBytes + " (" + r.getUrl().getPath() + ")";
            }
        } else if (query.contains("comp=block&") || query.endsWith("comp=block")) {
            if (bytes > maxBlockBytes) {
                v = "staged block of " + bytes + " bytes > service limit " + maxBlockBytes;
            }
        } else if (r.getHttpMethod() == HttpMethod.PUT && "BlockBlob".equals(blobType)
                && bytes > SERVICE_MAX_PUT_BLOB_BYTES) {
            v = "single-shot upload of " + bytes + " bytes > " + SERVICE_MAX_PUT_BLOB_BYTES;
        }
        if (v != null) {
            violation(v);
        }
        return v;
    }

    private void after(HttpRequest r, HttpResponse resp) {
        String len = resp.getHeaders().getValue(HttpHeaderName.CONTENT_LENGTH);
        if (r.getHttpMethod() == HttpMethod.GET && len != null) {
            bytesDown.add(Long.parseLong(len));
        }
        String query = r.getUrl().getQuery() == null ? "" : r.getUrl().getQuery();
        if (query.contains("comp=appendblock") && resp.getStatusCode() == 201) {
            int n = appendsPerBlob.computeIfAbsent(r.getUrl().getPath(), k -> new AtomicInteger()).incrementAndGet();
            if (n > maxBlocksPerAppendBlob) {
                violation("append blob " + r.getUrl().getPath() + " got committed block #" + n + " > limit "
                        + maxBlocksPerAppendBlob);
            }
        }
    }

    @Override
    public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
        HttpRequest r = context.getHttpRequest();
        String v = check(r);
        if (v != null) {
            return Mono.error(new IllegalStateException("refused by the service-limit checker: " + v));
        }
        return next.process().doOnNext(resp -> after(r, resp));
    }

    @Override
    public HttpResponse processSync(HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
        HttpRequest r = context.getHttpRequest();
        String v = check(r);
        if (v != null) {
            throw new IllegalStateException("refused by the service-limit checker: " + v);
        }
        HttpResponse resp = next.processSync();
        after(r, resp);
        return resp;
    }
}
