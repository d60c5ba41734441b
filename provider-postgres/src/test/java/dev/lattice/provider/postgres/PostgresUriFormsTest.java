package dev.lattice.provider.postgres;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.conformance.WalTestSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.ServerSocket;
import java.net.URI;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Issue 20 part 6: {@code jdbc:postgresql://} and {@code postgresql://} open the PostgreSQL provider like
 * {@code postgres://}, and an open against a server that is down says that it could not connect, to what, and how
 * long it tried.
 */
@ExtendWith(PostgresTestServer.class)
class PostgresUriFormsTest {

    @Test
    void jdbcAndPostgresqlUrisOpenTheProviderOnTheSameServer() throws Exception {
        PostgresTestServer.Server server = PostgresTestServer.server();
        String schema = PostgresTestServer.newSchema();
        String canonical = server.providerUri(schema).toString();
        String rest = canonical.substring("postgres".length());
        try {
            long tail = -1;
            for (String form : new String[] {"jdbc:postgresql" + rest, "postgresql" + rest, "JDBC:PostgreSQL" + rest}) {
                assertThat(Providers.canonical(URI.create(form))).as(form).hasToString(canonical);
                try (WalStorageProvider p = Providers.open(URI.create(form), server.options())) {
                    assertThat(p).as(form).isInstanceOf(PostgresWalStorageProvider.class);
                    LogId log = new LogId("forms", 0);
                    Fence f = p.claim(log);
                    p.append(log, f, WalTestSupport.batch(1, tail + 1, 1, 10));
                    tail = p.state(log).committedTail();
                }
            }
            assertThat(tail).as("all three forms wrote to one log on one server").isEqualTo(2);
            // the factory also takes them when called directly
            PostgresSettings s = PostgresSettings.fromUri(URI.create("jdbc:postgresql://h:6543/db?user=u"), Map.of(),
                    k -> null);
            assertThat(s.jdbcUrl()).isEqualTo("jdbc:postgresql://h:6543/db");
            assertThat(PostgresSettings.fromUri(URI.create("postgresql://h/db"), Map.of(), k -> null).port)
                    .isEqualTo(5432);
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
    }

    @Test
    void anOpenAgainstAServerThatIsDownSaysItCouldNotConnectToWhatAndHowLongItTried() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        Throwable t = catchThrowable(() -> Providers.open(URI.create("postgres://127.0.0.1:" + closedPort
                + "/orders?user=alice&connectTimeout=2s"), Map.of("password", "not-shown")).close());
        assertThat(t).isInstanceOf(ProviderUnavailableException.class);
        assertThat(t.getMessage())
                .contains("could not connect to postgres://127.0.0.1:" + closedPort + "/orders (user alice")
                .containsPattern("tried for \\d+ ms, connectTimeout 2000 ms")
                .contains("refused")
                .doesNotContain("outcome unknown").doesNotContain("not-shown");
    }
}
