package dev.lattice.provider.azure.blob;

import com.azure.core.http.HttpHeaders;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpRequest;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.common.StorageSharedKeyCredential;
import com.azure.storage.common.policy.RequestRetryOptions;
import com.azure.storage.common.policy.RetryPolicyType;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import dev.lattice.testbackends.AzuriteServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Service failures map to the SPI: throttling and server errors (after the SDK's retries) and network failures are
 * {@link ProviderUnavailableException}, other statuses a plain {@link WalStorageException}; messages name the
 * operation, status and error code, never a credential. The service is replaced by a pipeline policy that answers
 * every request with the status under test (the SDK's retry policy still runs before it gives up).
 */
class FailureMappingTest {

    private static final LogId LOG = new LogId("m", 0);

    /** Answers every request with one status and a storage error body; counts the attempts. */
    private static final class Answer implements HttpPipelinePolicy {
        final int status;
        final String code;
        final AtomicInteger attempts = new AtomicInteger();

        Answer(int status, String code) {
            this.status = status;
            this.code = code;
        }

        private HttpResponse respond(HttpRequest r) {
            attempts.incrementAndGet();
            byte[] body = ("<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>" + code
                    + "</Code><Message>injected</Message></Error>").getBytes(StandardCharsets.UTF_8);
            HttpHeaders h = new HttpHeaders().set("x-ms-error-code", code).set("Content-Type", "application/xml")
                    .set("Content-Length", String.valueOf(body.length));
            return new HttpResponse(r) {
                @Override
                public int getStatusCode() {
                    return status;
                }

                @Override
                public String getHeaderValue(String name) {
                    return h.getValue(name);
                }

                @Override
                public HttpHeaders getHeaders() {
                    return h;
                }

                @Override
                public Flux<ByteBuffer> getBody() {
                    return Flux.just(ByteBuffer.wrap(body));
                }

                @Override
                public Mono<byte[]> getBodyAsByteArray() {
                    return Mono.just(body);
                }

                @Override
                public Mono<String> getBodyAsString() {
                    return Mono.just(new String(body, StandardCharsets.UTF_8));
                }

                @Override
                public Mono<String> getBodyAsString(Charset charset) {
                    return Mono.just(new String(body, charset));
                }
            };
        }

        @Override
        public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
            return Mono.just(respond(context.getHttpRequest()));
        }

        @Override
        public HttpResponse processSync(HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
            return respond(context.getHttpRequest());
        }
    }

    private static AzureBlobWalStorageProvider provider(HttpPipelinePolicy answer) {
        BlobServiceClient client = new BlobServiceClientBuilder().endpoint("http://127.0.0.1:1/devstoreaccount1")
                .credential(new StorageSharedKeyCredential(AzuriteServer.ACCOUNT_NAME, AzuriteServer.ACCOUNT_KEY))
                .addPolicy(answer)
                .retryOptions(new RequestRetryOptions(RetryPolicyType.FIXED, 3, Duration.ofSeconds(5),
                        Duration.ofMillis(1), Duration.ofMillis(1), null))
                .buildClient();
        return AzureBlobWalStorageProvider.open(client, AzureBlobConfig.builder("mapping").build());
    }

    /** Throttling and server errors are transient once the SDK's retries are spent; other statuses are not. */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"503, ServerBusy, true, 3", "500, InternalError, true, 3", "429, TooManyRequests, true, 3",
            "408, OperationTimedOut, true, 1", "403, AuthorizationFailure, false, 1", "400, InvalidInput, false, 1"})
    void statusesMapToTheSpi(int status, String code, boolean transientFailure, int sdkAttempts) {
        Answer answer = new Answer(status, code);
        try (AzureBlobWalStorageProvider p = provider(answer)) {
            Throwable t = catchThrowable(() -> p.state(LOG));
            assertThat(t).isInstanceOf(WalStorageException.class).hasMessageContaining("HTTP " + status)
                    .hasMessageContaining(code).hasMessageNotContaining(AzuriteServer.ACCOUNT_KEY);
            assertThat(t instanceof ProviderUnavailableException).as("transient").isEqualTo(transientFailure);
            assertThat(((WalStorageException) t).log()).isEqualTo(LOG);
            assertThat(t.getCause()).isNotNull();
            assertThat(answer.attempts.get()).as("attempts (the SDK retries 429 and 5xx itself)")
                    .isEqualTo(sdkAttempts);
            Throwable w = catchThrowable(() -> p.claim(LOG));
            assertThat(w).isInstanceOf(transientFailure ? ProviderUnavailableException.class
                    : WalStorageException.class);
        }
    }

    /** Nothing listening: a network failure, transient. */
    @Test
    void unreachableServiceIsUnavailable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String cs = "DefaultEndpointsProtocol=http;AccountName=" + AzuriteServer.ACCOUNT_NAME + ";AccountKey="
                + AzuriteServer.ACCOUNT_KEY + ";BlobEndpoint=http://127.0.0.1:" + port + "/"
                + AzuriteServer.ACCOUNT_NAME + ";";
        try (var p = new AzureBlobProviderFactory().open(URI.create("azure-blob:unreachable?maxRetries=1"
                + "&attemptTimeout=2s"), Map.of("connectionString", cs))) {
            Throwable t = catchThrowable(() -> p.claim(LOG));
            assertThat(t).isInstanceOf(ProviderUnavailableException.class)
                    .hasMessageNotContaining(AzuriteServer.ACCOUNT_KEY);
        }
    }

    /** Nothing listening, through the engine: the open says it could not connect, to what, and how long it tried. */
    @Test
    void anEngineOpenAgainstNothingSaysItCouldNotConnectAndHowLongItTried() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String cs = "DefaultEndpointsProtocol=http;AccountName=" + AzuriteServer.ACCOUNT_NAME + ";AccountKey="
                + AzuriteServer.ACCOUNT_KEY + ";BlobEndpoint=http://127.0.0.1:" + port + "/"
                + AzuriteServer.ACCOUNT_NAME + ";";
        Throwable t = catchThrowable(() -> dev.lattice.engine.Lattice.open(dev.lattice.engine.LatticeConfig.builder()
                .uri("azure-blob:unreachable?maxRetries=0&attemptTimeout=2s")
                .providerOptions(Map.of("connectionString", cs)).build()));
        assertThat(t).isInstanceOf(ProviderUnavailableException.class)
                .hasMessageContaining("could not connect to provider '")
                .hasMessageContaining("azure-blob:unreachable")
                .hasMessageContaining("tried for ")
                .hasMessageContaining("providerCallTimeout")
                .hasMessageNotContaining(AzuriteServer.ACCOUNT_KEY);
    }

    /** Nothing listening: the message says the request could not connect (not "outcome unknown"). */
    @Test
    void unreachableServiceSaysItCouldNotConnect() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String cs = "DefaultEndpointsProtocol=http;AccountName=" + AzuriteServer.ACCOUNT_NAME + ";AccountKey="
                + AzuriteServer.ACCOUNT_KEY + ";BlobEndpoint=http://127.0.0.1:" + port + "/"
                + AzuriteServer.ACCOUNT_NAME + ";";
        try (var p = new AzureBlobProviderFactory().open(URI.create("azure-blob:unreachable?maxRetries=0"
                + "&attemptTimeout=2s"), Map.of("connectionString", cs))) {
            Throwable t = catchThrowable(() -> p.state(LOG));
            assertThat(t).isInstanceOf(ProviderUnavailableException.class)
                    .hasMessageContaining("could not connect to the Blob service (")
                    .hasMessageNotContaining("outcome unknown").hasMessageNotContaining(AzuriteServer.ACCOUNT_KEY);
        }
    }
}
