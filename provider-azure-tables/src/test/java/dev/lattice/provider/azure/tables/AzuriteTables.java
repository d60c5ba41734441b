package dev.lattice.provider.azure.tables;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.ExponentialBackoffOptions;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.core.http.policy.RetryOptions;
import com.azure.core.util.HttpClientOptions;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import dev.lattice.testbackends.AzuriteServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;

/**
 * The tests' access to Azurite (started once per JVM by test-backends): one shared service client whose pipeline
 * also checks the real size of every request body against the service's 4 MiB transaction limit.
 */
final class AzuriteTables {
    /** Largest request body the service accepts for an entity-group transaction, bytes. */
    static final long MAX_REQUEST_BODY_BYTES = 4L * 1024 * 1024;

    private static TableServiceClient client;
    private static final List<String> OVERSIZED = Collections.synchronizedList(new ArrayList<>());
    private static final AtomicLong LARGEST_BODY = new AtomicLong();

    private AzuriteTables() {
    }

    /** @return the shared client for the JVM's Azurite */
    static synchronized TableServiceClient client() {
        if (client == null) {
            client = build(AzuriteServer.shared().connectionString());
        }
        return client;
    }

    /** @return a new client (like a second process) for a connection string, with the body-size check */
    static TableServiceClient build(String connectionString) {
        return new TableServiceClientBuilder().connectionString(connectionString)
                .clientOptions(new HttpClientOptions().setResponseTimeout(Duration.ofSeconds(60))
                        .setReadTimeout(Duration.ofSeconds(60)).setWriteTimeout(Duration.ofSeconds(60)))
                .retryOptions(new RetryOptions(new ExponentialBackoffOptions().setMaxRetries(2)
                        .setBaseDelay(Duration.ofMillis(50)).setMaxDelay(Duration.ofMillis(500))))
                .addPolicy(new BodySizePolicy())
                .buildClient();
    }

    /** @return requests whose body exceeded {@link #MAX_REQUEST_BODY_BYTES}, ever, in this JVM */
    static List<String> oversizedRequests() {
        return List.copyOf(OVERSIZED);
    }

    /** Forgets the largest request body seen so far (tests run one at a time). */
    static void resetLargestBody() {
        LARGEST_BODY.set(0);
    }

    /** @return the largest request body seen since the last reset, bytes */
    static long largestBody() {
        return LARGEST_BODY.get();
    }

    /** A fresh provider over a new table, every request checked against the service's limits. */
    static Opened open(String tableName, Layout layout) {
        RecordingGateway recording = new RecordingGateway(new SdkTableGateway(client(), tableName));
        ServiceLimitCheckingGateway checked = new ServiceLimitCheckingGateway(recording);
        return new Opened(new AzureTablesWalStorageProvider(checked, tableName, layout, true), recording, checked);
    }

    /** Deletes a table (test cleanup). */
    static void drop(String tableName) {
        client().deleteTable(tableName);
    }

    /**
     * A provider with its gateways.
     *
     * @param provider the provider
     * @param recording counts and injects (below the checker, so injected failures come from "the table")
     * @param checked the limit checker (outermost)
     */
    record Opened(AzureTablesWalStorageProvider provider, RecordingGateway recording,
                  ServiceLimitCheckingGateway checked) {
    }

    /** Records the real Content-Length of every request. */
    private static final class BodySizePolicy implements HttpPipelinePolicy {
        @Override
        public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
            String length = context.getHttpRequest().getHeaders().getValue(HttpHeaderName.CONTENT_LENGTH);
            if (length != null) {
                long n = Long.parseLong(length);
                LARGEST_BODY.accumulateAndGet(n, Math::max);
                if (n > MAX_REQUEST_BODY_BYTES) {
                    OVERSIZED.add(context.getHttpRequest().getHttpMethod() + " " + context.getHttpRequest().getUrl()
                            .getPath() + ": " + n + " bytes");
                }
            }
            return next.process();
        }
    }
}
