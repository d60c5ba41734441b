package dev.lattice.provider.azure.tables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.core.http.HttpClient;
import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpHeaders;
import com.azure.core.http.HttpRequest;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.ExponentialBackoffOptions;
import com.azure.core.http.policy.RetryOptions;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import dev.lattice.testbackends.AzuriteServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Backend failures map to the SPI's exceptions: throttling, server errors and timeouts to
 * {@link ProviderUnavailableException} (after the SDK's retries), other refusals to {@link WalStorageException}; a
 * stuck socket is given up after the per-attempt timeout, not the SDK's default.
 */
class FailureMappingTest {

    /** A fake HTTP client that answers every request with one status and Azure error code, counting attempts. */
    private static final class Answering implements HttpClient {
        private final int status;
        private final String code;
        final AtomicInteger attempts = new AtomicInteger();

        Answering(int status, String code) {
            this.status = status;
            this.code = code;
        }

        @Override
        public Mono<HttpResponse> send(HttpRequest request) {
            attempts.incrementAndGet();
            byte[] body = ("{\"odata.error\":{\"code\":\"" + code + "\",\"message\":{\"lang\":\"en-US\",\"value\":\""
                    + "injected by the test\"}}}").getBytes(StandardCharsets.UTF_8);
            HttpHeaders headers = new HttpHeaders()
                    .set(HttpHeaderName.CONTENT_TYPE, "application/json;odata=minimalmetadata")
                    .set(HttpHeaderName.fromString("x-ms-error-code"), code)
                    .set(HttpHeaderName.CONTENT_LENGTH, String.valueOf(body.length));
            return Mono.just(new HttpResponse(request) {
                @Override
                public int getStatusCode() {
                    return status;
                }

                @Override
                @Deprecated
                public String getHeaderValue(String name) {
                    return headers.getValue(HttpHeaderName.fromString(name));
                }

                @Override
                public HttpHeaders getHeaders() {
                    return headers;
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
            });
        }
    }

    private static TableServiceClient clientOver(HttpClient http, int retries) {
        return new TableServiceClientBuilder().endpoint("http://127.0.0.1:1/devstoreaccount1")
                .credential(new com.azure.core.credential.AzureNamedKeyCredential(AzuriteServer.ACCOUNT_NAME,
                        AzuriteServer.ACCOUNT_KEY))
                .httpClient(http).retryOptions(new RetryOptions(new ExponentialBackoffOptions().setMaxRetries(retries)
                        .setBaseDelay(Duration.ofMillis(1)).setMaxDelay(Duration.ofMillis(5))))
                .buildClient();
    }

    @ParameterizedTest(name = "HTTP {0} {1}")
    @CsvSource({"503, ServerBusy", "500, OperationTimedOut", "429, TooManyRequests", "500, InternalError",
            "504, GatewayTimeout"})
    void throttlingAndServerErrorsAreTransientAfterTheSdkRetries(int status, String code) {
        Answering http = new Answering(status, code);
        assertThatThrownBy(() -> AzureTablesWalStorageProvider.open(clientOver(http, 2), "throttled"))
                .isInstanceOf(ProviderUnavailableException.class)
                .hasMessageContaining("HTTP " + status)
                .hasMessageContaining("transiently");
        assertThat(http.attempts.get()).as("first attempt plus the SDK's 2 retries").isEqualTo(3);
    }

    @ParameterizedTest(name = "HTTP {0} {1}")
    @CsvSource({"403, AuthorizationFailure", "400, InvalidInput", "404, ResourceNotFound"})
    void otherRefusalsArePermanent(int status, String code) {
        Answering http = new Answering(status, code);
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() ->
                AzureTablesWalStorageProvider.open(clientOver(http, 2), "refused"));
        assertThat(t).isInstanceOf(WalStorageException.class).isNotInstanceOf(ProviderUnavailableException.class)
                .hasMessageContaining("HTTP " + status);
        assertThat(http.attempts.get()).as("not retried").isEqualTo(1);
    }

    @Test
    void ioFailuresAreTransient() {
        WalStorageException e = AzureTablesWalStorageProvider.failure(null, "reading",
                new UncheckedIOException(new IOException("connection reset")));
        assertThat(e).isInstanceOf(ProviderUnavailableException.class).hasMessageContaining("outcome is unknown");
        assertThat(AzureTablesWalStorageProvider.failure(null, "x", new IllegalStateException("bug")))
                .isNotInstanceOf(ProviderUnavailableException.class);
    }

    /** A server that accepts connections and never answers: given up after attemptTimeout x (retries + 1). */
    @Test
    @Timeout(120)
    void stuckSocketIsGivenUpAfterThePerAttemptTimeout() throws Exception {
        List<Socket> held = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket()) {
            silent.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        Socket s = silent.accept();
                        synchronized (held) {
                            held.add(s);
                        }
                    }
                } catch (IOException closed) {
                    // test over
                }
            }, "silent-server");
            acceptor.setDaemon(true);
            acceptor.start();
            AzureTablesProviderFactory factory = new AzureTablesProviderFactory();
            URI uri = URI.create("azure-tables:stuck");
            Map<String, String> options = Map.of(
                    AzureTablesProviderFactory.ENDPOINT, "http://127.0.0.1:" + silent.getLocalPort() + "/devstoreaccount1",
                    AzureTablesProviderFactory.ACCOUNT_NAME, AzuriteServer.ACCOUNT_NAME,
                    AzureTablesProviderFactory.ACCOUNT_KEY, AzuriteServer.ACCOUNT_KEY,
                    AzureTablesProviderFactory.ATTEMPT_TIMEOUT, "500ms",
                    AzureTablesProviderFactory.MAX_RETRIES, "1");
            assertThatThrownBy(() -> factory.open(uri, options)).isInstanceOf(ProviderUnavailableException.class);
            synchronized (held) {
                assertThat(held).as("the provider did reach the silent server").isNotEmpty();
            }
        } finally {
            synchronized (held) {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }
}
