package dev.lattice.provider.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.lattice.conformance.WalTestSupport;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.ServerSocket;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * URI and option validation (clear {@link IllegalArgumentException}s before any connection), secrets kept out of
 * messages, ServiceLoader discovery, the DataSource entry point and the declared durability.
 */
@ExtendWith(PostgresTestServer.class)
class OptionsAndDiscoveryTest {

    private static final String SECRET = "s3cr3t-Pa55word";

    private static Throwable openFailure(String uri, Map<String, String> options) {
        return catchThrowable(() -> PostgresWalStorageProvider.open(URI.create(uri), options, k -> null).close());
    }

    /** Malformed URIs and options fail with IllegalArgumentException naming the problem, without connecting. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "postgres://localhost:5432/db?user=u&colour=blue | unknown option(s) [colour]",
        "postgres://localhost:5432/db?user=u&Schema=x    | unknown option(s) [Schema]",
        "postgres://localhost:5432                       | names no database",
        "postgres://localhost:5432/                      | names no database",
        "postgres://localhost/db/extra                   | just the database name",
        "postgres:db                                     | must look like postgres://host",
        "postgres:///db                                  | has no (valid) host",
        "mysql://localhost/db                            | not a postgres URI",
        "postgres://localhost/db#frag                    | fragment",
        "postgres://localhost/db?schema=Bad-Name         | option 'schema' must match",
        "postgres://localhost/db?schema=pg_catalog       | not start with pg_",
        "postgres://localhost/db?poolSize=0              | option 'poolSize' must be in 1..200",
        "postgres://localhost/db?poolSize=many           | option 'poolSize' must be an integer",
        "postgres://localhost/db?connectTimeout=100ms    | at least 250ms",
        "postgres://localhost/db?connectTimeout=soon     | option 'connectTimeout' must be a duration",
        "postgres://localhost/db?synchronousCommit=maybe | option 'synchronousCommit' must be one of",
        "postgres://localhost/db?sslmode=sometimes       | option 'sslmode' must be one of",
        "postgres://localhost/db?maxCheckpointBytes=2147483648 | option 'maxCheckpointBytes' must be in",
    })
    void badUrisAndOptionsAreRefused(String uri, String message) {
        assertThat(openFailure(uri, Map.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    /** A password in the URI's user info is refused without echoing it; passwords never appear in messages. */
    @Test
    void secretsStayOutOfMessages() throws Exception {
        Throwable t = openFailure("postgres://alice:" + SECRET + "@localhost/db", Map.of());
        assertThat(t).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("password");
        assertThat(messages(t)).doesNotContain(SECRET);

        Throwable unknown = openFailure("postgres://localhost/db?password=" + SECRET + "&bogus=1", Map.of());
        assertThat(unknown).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bogus");
        assertThat(messages(unknown)).doesNotContain(SECRET);

        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        Throwable unreachable = openFailure("postgres://127.0.0.1:" + closedPort + "/db?user=alice&connectTimeout=1s",
                Map.of("password", SECRET));
        assertThat(unreachable).isInstanceOf(ProviderUnavailableException.class);
        assertThat(messages(unreachable)).doesNotContain(SECRET);

        PostgresSettings s = PostgresSettings.fromUri(URI.create("postgres://h/db?user=u"), Map.of("password", SECRET),
                k -> null);
        assertThat(s.toString()).doesNotContain(SECRET);
    }

    /** The password comes from the option first, else from PGPASSWORD; the user from the option, user info, PGUSER. */
    @Test
    void credentialsComeFromOptionsThenEnvironment() {
        Map<String, String> env = Map.of("PGPASSWORD", "from-env", "PGUSER", "env-user");
        PostgresSettings fromEnv = PostgresSettings.fromUri(URI.create("postgres://h/db"), Map.of(), env::get);
        assertThat(fromEnv.password).isEqualTo("from-env");
        assertThat(fromEnv.user).isEqualTo("env-user");
        PostgresSettings fromOption = PostgresSettings.fromUri(URI.create("postgres://bob@h:6543/db?password=p"),
                Map.of(), env::get);
        assertThat(fromOption.password).isEqualTo("p");
        assertThat(fromOption.user).isEqualTo("bob");
        assertThat(fromOption.port).isEqualTo(6543);
        assertThat(fromOption.schema).isEqualTo("lattice");
        assertThat(fromOption.jdbcUrl()).isEqualTo("jdbc:postgresql://h:6543/db");
        PostgresSettings mapWins = PostgresSettings.fromUri(URI.create("postgres://h/db?user=a&schema=one"),
                Map.of("user", "b", "schema", "two"), env::get);
        assertThat(mapWins.user).isEqualTo("b");
        assertThat(mapWins.schema).isEqualTo("two");
    }

    /** The factory is found by scheme through ServiceLoader and opens a working provider. */
    @Test
    void factoryIsDiscoveredByScheme() throws Exception {
        assertThat(Providers.schemes()).contains("postgres");
        assertThat(Providers.factory("postgres")).isInstanceOf(PostgresProviderFactory.class);
        String schema = PostgresTestServer.newSchema();
        PostgresTestServer.Server server = PostgresTestServer.server();
        try (WalStorageProvider p = Providers.open(server.providerUri(schema), server.options())) {
            assertThat(p).isInstanceOf(PostgresWalStorageProvider.class);
            assertThat(p.describe().name()).isEqualTo("postgres");
            assertThat(p.describe().features()).contains(ProviderFeature.DEFERRED_STAGE,
                    ProviderFeature.CONCURRENT_STAGE, ProviderFeature.PERSISTENT, ProviderFeature.PHYSICAL_BYTES);
            // a remote provider's calls must stay on the engine's pool, under its call deadline
            assertThat(p.describe().features()).doesNotContain(ProviderFeature.LOCAL_CALLS);
            assertThat(p.describe().replayCost()).isEqualTo(PostgresWalStorageProvider.REPLAY_COST);
            assertThat(p.describe().replayCost().isUnknown()).isFalse();
            LogId log = new LogId("discovered", 0);
            Fence f = p.claim(log);
            p.append(log, f, WalTestSupport.batch(1, 0, 3, 10));
            assertThat(p.state(log).committedTail()).isEqualTo(2);
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
    }

    /**
     * A caller's DataSource: options limited to the schema and checkpoint size, the provider works on it, and
     * closing the provider leaves the caller's pool open.
     */
    @Test
    void callerDataSourceIsUsedAndNotClosed() throws Exception {
        PostgresTestServer.Server server = PostgresTestServer.server();
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(server.jdbcUrl());
        c.setUsername(server.user());
        if (server.password() != null) {
            c.setPassword(server.password());
        }
        c.setMaximumPoolSize(2);
        c.addDataSourceProperty("options", "-c synchronous_commit=on");
        String schema = PostgresTestServer.newSchema();
        try (HikariDataSource ds = new HikariDataSource(c)) {
            assertThatThrownBy(() -> PostgresWalStorageProvider.fromDataSource(ds, Map.of("poolSize", "3")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("poolSize");
            assertThatThrownBy(() -> PostgresWalStorageProvider.fromDataSource(null, Map.of()))
                    .isInstanceOf(NullPointerException.class);
            LogId log = new LogId("ds", 3);
            try (PostgresWalStorageProvider p = PostgresWalStorageProvider.fromDataSource(ds, Map.of("schema", schema))) {
                Fence f = p.claim(log);
                p.append(log, f, WalTestSupport.batch(2, 0, 4, 16));
                assertThat(p.logs("ds")).containsExactly(log);
            }
            assertThat(ds.isClosed()).isFalse();
            try (Connection conn = ds.getConnection(); Statement s = conn.createStatement();
                 ResultSet rs = s.executeQuery("SELECT tail FROM \"" + schema + "\".log_head")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).isEqualTo(3);
            }
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
    }

    /**
     * Durability follows the server: with fsync and synchronous_commit on (the embedded test server's settings)
     * it is OS_CRASH; with {@code synchronousCommit=off} it is PROCESS_CRASH.
     */
    @Test
    void durabilityFollowsTheServerSettings() throws Exception {
        PostgresTestServer.Server server = PostgresTestServer.server();
        String schema = PostgresTestServer.newSchema();
        boolean fsync;
        try (Connection c = server.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT current_setting('fsync')")) {
            rs.next();
            fsync = rs.getString(1).equals("on");
        }
        if (server.embedded()) {
            assertThat(fsync).as("the embedded test server runs with fsync=on").isTrue();
        }
        try {
            try (WalStorageProvider on = PostgresWalStorageProvider.open(server.providerUri(schema),
                    server.options())) {
                assertThat(on.describe().durability())
                        .isEqualTo(fsync ? DurabilityLevel.OS_CRASH : DurabilityLevel.PROCESS_CRASH);
            }
            Map<String, String> off = new HashMap<>(server.options());
            off.put("synchronousCommit", "off");
            try (WalStorageProvider p = PostgresWalStorageProvider.open(server.providerUri(schema), off)) {
                assertThat(p.describe().durability()).isEqualTo(DurabilityLevel.PROCESS_CRASH);
            }
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
    }

    private static String messages(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c).append('\n');
            for (Throwable s : c.getSuppressed()) {
                b.append(s).append('\n');
            }
        }
        return b.toString();
    }
}
