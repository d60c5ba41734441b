package dev.lattice.provider.azure.tables;

import dev.lattice.conformance.StalledBackendCheck;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testbackends.AzuriteExtension;
import dev.lattice.testbackends.AzuriteServer;
import dev.lattice.testbackends.StallingTcpProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Every request has a deadline: against a server that accepts connections and never answers, and against Azurite
 * behind a proxy that stops forwarding, a call fails with {@link ProviderUnavailableException} within
 * {@code (maxRetries + 1) x attemptTimeout} plus the SDK's backoff and slack, and the provider works again when the
 * server answers again.
 */
@ExtendWith(AzuriteExtension.class)
class DeadlineTest {

    private static final LogId LOG = new LogId("deadline", 0);
    /** (maxRetries 1 + 1) x attemptTimeout 500 ms + backoff: the bound the options promise, in ms. */
    private static final long BOUND_MILLIS = 2 * 500 + 200;

    private static WalStorageProvider open(int port) {
        return new AzureTablesProviderFactory().open(URI.create("azure-tables:dl" + UUID.randomUUID().toString()
                .replace("-", "").substring(0, 12) + "?maxRetries=1&attemptTimeout=500ms"), Map.of(
                AzureTablesProviderFactory.ENDPOINT, "http://127.0.0.1:" + port + "/" + AzuriteServer.ACCOUNT_NAME,
                AzureTablesProviderFactory.ACCOUNT_NAME, AzuriteServer.ACCOUNT_NAME,
                AzureTablesProviderFactory.ACCOUNT_KEY, AzuriteServer.ACCOUNT_KEY));
    }

    private static long millisOf(Runnable r, Throwable[] failure) {
        long t0 = System.nanoTime();
        failure[0] = catchThrowable(r::run);
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @Test
    void aSilentServerFailsOpenWithinTheAttemptTimeouts() {
        try (StallingTcpProxy silent = StallingTcpProxy.silent()) {
            Throwable[] f = new Throwable[1];
            long open = millisOf(() -> open(silent.port()).close(), f);
            assertThat(f[0]).isInstanceOf(ProviderUnavailableException.class);
            System.out.printf("attemptTimeout=500ms x 2 attempts, silent server: open failed after %d ms"
                    + " (%d connections)%n", open, silent.accepted());
            assertThat(silent.accepted()).isGreaterThanOrEqualTo(1);
            assertThat(open).isBetween(400L, 5 * BOUND_MILLIS);
        }
    }

    @Test
    void aServerThatStopsAnsweringFailsCallsWithinTheAttemptTimeoutsAndTheLogWorksAfterwards(AzuriteServer azurite) {
        URI tables = URI.create(azurite.tableEndpoint());
        try (StallingTcpProxy proxy = StallingTcpProxy.to(tables.getHost(), tables.getPort());
             WalStorageProvider p = open(proxy.port())) {
            StalledBackendCheck.Result r = StalledBackendCheck.run(p, LOG, proxy::stall, 5 * BOUND_MILLIS);
            System.out.printf("attemptTimeout=500ms x 2 attempts, stalled proxy: append failed after %d ms, read"
                    + " after %d ms%n", r.appendMillis(), r.readMillis());
        }
    }
}
