package dev.lattice.provider.postgres;

import dev.lattice.spi.support.ProviderOptions;

import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * The provider's parsed and checked configuration: where the server is, who logs in, which schema holds the tables,
 * and the pool and durability knobs. Built from a {@code postgres://} URI plus options, or from options alone when
 * the caller hands in a {@link javax.sql.DataSource}. {@link #toString()} leaves the password out.
 *
 * <p>Immutable and thread-safe.
 */
final class PostgresSettings {

    /** Option: database user (else the URI's user info, else {@code PGUSER}, else the JVM's {@code user.name}). */
    static final String USER = "user";
    /** Option: password (else {@code PGPASSWORD}); never logged, never put in a message. */
    static final String PASSWORD = "password";
    /** Option: the schema holding the provider's tables; default {@value #DEFAULT_SCHEMA}. */
    static final String SCHEMA = "schema";
    /** Option: connections in the pool; default {@value #DEFAULT_POOL_SIZE}. */
    static final String POOL_SIZE = "poolSize";
    /** Option: TCP connect and login (startup handshake) timeout of a new connection (duration); default 10 s. */
    static final String CONNECT_TIMEOUT = "connectTimeout";
    /** Option: server-side {@code statement_timeout} of every statement (duration); default 30 s. */
    static final String STATEMENT_TIMEOUT = "statementTimeout";
    /** Option: pgjdbc's client-side {@code socketTimeout} (duration, whole seconds, rounded up); default 45 s. */
    static final String SOCKET_TIMEOUT = "socketTimeout";
    /** Option: HikariCP's {@code connectionTimeout}, the wait for a pooled connection (duration); default 10 s. */
    static final String POOL_TIMEOUT = "poolTimeout";
    /** Option: {@code on} (default) or {@code off}, set on every pooled connection. */
    static final String SYNCHRONOUS_COMMIT = "synchronousCommit";
    /** Option: pgjdbc's {@code sslmode}. */
    static final String SSL_MODE = "sslmode";
    /** Option: the {@code application_name} the server shows; default {@code lattice}. */
    static final String APPLICATION_NAME = "applicationName";
    /** Option: largest checkpoint stream in bytes; default and maximum 1 GiB. */
    static final String MAX_CHECKPOINT_BYTES = "maxCheckpointBytes";

    /** Options accepted with a {@code postgres://} URI. */
    static final Set<String> URI_OPTIONS = Set.of(USER, PASSWORD, SCHEMA, POOL_SIZE, CONNECT_TIMEOUT,
            STATEMENT_TIMEOUT, SOCKET_TIMEOUT, POOL_TIMEOUT, SYNCHRONOUS_COMMIT, SSL_MODE, APPLICATION_NAME, MAX_CHECKPOINT_BYTES);
    /** Options accepted with a caller's DataSource (the connection options belong to the DataSource). */
    static final Set<String> DATA_SOURCE_OPTIONS = Set.of(SCHEMA, MAX_CHECKPOINT_BYTES);

    static final String DEFAULT_SCHEMA = "lattice";
    static final int DEFAULT_POOL_SIZE = 8;
    static final int MAX_POOL_SIZE = 200;
    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Default server-side statement timeout: far above any statement the provider sends (a 32 MiB commit). */
    static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(30);
    /** Default client-side socket timeout: above the statement timeout, so a live server cancels first. */
    static final Duration DEFAULT_SOCKET_TIMEOUT = Duration.ofSeconds(45);
    static final Duration DEFAULT_POOL_TIMEOUT = Duration.ofSeconds(10);
    static final long MAX_CHECKPOINT_LIMIT = 1L << 30;
    static final int DEFAULT_PORT = 5432;

    private static final Pattern SCHEMA_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final Set<String> SSL_MODES = Set.of("disable", "allow", "prefer", "require", "verify-ca",
            "verify-full");

    /** Whether commits wait for the server's WAL flush. */
    enum SynchronousCommit { ON, OFF }

    final String host;
    final int port;
    final String database;
    final String user;
    final String password;
    final String schema;
    final int poolSize;
    final Duration connectTimeout;
    final Duration statementTimeout;
    final Duration socketTimeout;
    final Duration poolTimeout;
    final SynchronousCommit synchronousCommit;
    final String sslMode;
    final String applicationName;
    final long maxCheckpointBytes;

    private PostgresSettings(String host, int port, String database, String user, String password, String schema,
                             int poolSize, Timeouts timeouts, SynchronousCommit synchronousCommit,
                             String sslMode, String applicationName, long maxCheckpointBytes) {
        this.host = host;
        this.port = port;
        this.database = database;
        this.user = user;
        this.password = password;
        this.schema = schema;
        this.poolSize = poolSize;
        this.connectTimeout = timeouts == null ? null : timeouts.connect;
        this.statementTimeout = timeouts == null ? null : timeouts.statement;
        this.socketTimeout = timeouts == null ? null : timeouts.socket;
        this.poolTimeout = timeouts == null ? null : timeouts.pool;
        this.synchronousCommit = synchronousCommit;
        this.sslMode = sslMode;
        this.applicationName = applicationName;
        this.maxCheckpointBytes = maxCheckpointBytes;
    }

    /**
     * Parses {@code postgres://host[:port]/database?option=value&...} (or the same after {@code postgresql://} or
     * {@code jdbc:postgresql://}) plus explicit options.
     *
     * @param uri the URI
     * @param options explicit options, winning over the URI's query
     * @param env environment lookup ({@code System::getenv} in production)
     * @return the settings
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the URI is malformed (no host, no database, a password in the user info,
     *     another scheme), an option is unknown or a value is out of range; the message never holds a secret
     */
    static PostgresSettings fromUri(URI uri, Map<String, String> options, UnaryOperator<String> env) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(env, "env");
        String shape = "postgres://host[:port]/database?user=...&schema=...";
        uri = canonical(uri);
        if (uri.getScheme() == null || !uri.getScheme().equalsIgnoreCase("postgres")) {
            throw new IllegalArgumentException("not a postgres URI (scheme '" + uri.getScheme() + "'); expected "
                    + shape);
        }
        if (uri.isOpaque()) {
            throw new IllegalArgumentException("postgres URI must look like " + shape);
        }
        ProviderOptions o = ProviderOptions.of(uri, options).requireKnown(URI_OPTIONS);
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("postgres URI has no (valid) host; expected " + shape);
        }
        int port = uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort();
        String path = uri.getPath();
        String database = path == null ? "" : path.startsWith("/") ? path.substring(1) : path;
        if (database.isEmpty()) {
            throw new IllegalArgumentException("postgres URI names no database: add it as the path, e.g. "
                    + "postgres://" + host + ":" + port + "/mydb");
        }
        if (database.contains("/")) {
            throw new IllegalArgumentException("postgres URI path must be just the database name, got '" + database
                    + "'");
        }
        if (uri.getRawFragment() != null) {
            throw new IllegalArgumentException("postgres URI must not have a fragment ('#...')");
        }
        String userInfo = uri.getUserInfo();
        if (userInfo != null && userInfo.contains(":")) {
            throw new IllegalArgumentException("the postgres URI's user info holds a password; pass it in the '"
                    + PASSWORD + "' option or the PGPASSWORD environment variable instead");
        }
        String user = o.get(USER);
        if (user == null || user.isEmpty()) {
            user = userInfo != null && !userInfo.isEmpty() ? userInfo : env.apply("PGUSER");
        }
        if (user == null || user.isEmpty()) {
            user = System.getProperty("user.name");
        }
        String password = o.get(PASSWORD);
        if (password == null) {
            password = env.apply("PGPASSWORD");
        }
        int poolSize = (int) o.getLong(POOL_SIZE, DEFAULT_POOL_SIZE, 1, MAX_POOL_SIZE);
        Timeouts timeouts = Timeouts.parse(o);
        SynchronousCommit sc = o.getEnum(SYNCHRONOUS_COMMIT, SynchronousCommit.class, SynchronousCommit.ON);
        String sslMode = o.get(SSL_MODE);
        if (sslMode != null && !SSL_MODES.contains(sslMode.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("option '" + SSL_MODE + "' must be one of " + SSL_MODES + ", got '"
                    + sslMode + "'");
        }
        String appName = o.get(APPLICATION_NAME, "lattice");
        return new PostgresSettings(host, port, database, user, password, schema(o), poolSize, timeouts, sc,
                sslMode == null ? null : sslMode.toLowerCase(Locale.ROOT), appName, maxCheckpointBytes(o));
    }

    /**
     * The URI with scheme {@code postgres}: {@code jdbc:postgresql://...} and {@code postgresql://...} are rewritten
     * (everything after the scheme kept as written); any other URI is returned as it is.
     *
     * @param uri the URI
     * @return the URI with scheme {@code postgres}, or {@code uri}
     */
    static URI canonical(URI uri) {
        URI u = uri;
        if ("jdbc".equalsIgnoreCase(u.getScheme()) && u.isOpaque()
                && u.getRawSchemeSpecificPart().toLowerCase(Locale.ROOT).startsWith("postgresql:")) {
            u = URI.create(u.getRawSchemeSpecificPart() + (u.getRawFragment() == null ? "" : "#" + u.getRawFragment()));
        }
        if ("postgresql".equalsIgnoreCase(u.getScheme())) {
            u = URI.create("postgres" + u.toString().substring(u.getScheme().length()));
        }
        return u;
    }

    /**
     * Parses the options that apply when the caller hands in a DataSource.
     *
     * @param options the options ({@value #SCHEMA}, {@value #MAX_CHECKPOINT_BYTES})
     * @return the settings; connection fields are null
     * @throws NullPointerException if {@code options} is null
     * @throws IllegalArgumentException if an option is unknown or out of range
     */
    static PostgresSettings forDataSource(Map<String, String> options) {
        Objects.requireNonNull(options, "options");
        ProviderOptions o = ProviderOptions.of(URI.create("postgres:datasource"), options)
                .requireKnown(DATA_SOURCE_OPTIONS);
        return new PostgresSettings(null, 0, null, null, null, schema(o), 0, null, null, null, null,
                maxCheckpointBytes(o));
    }

    /** The four deadlines of one provider; see the option constants. */
    private record Timeouts(Duration connect, Duration statement, Duration socket, Duration pool) {

        static Timeouts parse(ProviderOptions o) {
            Duration connect = atLeast(o, CONNECT_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, 250);
            Duration statement = atLeast(o, STATEMENT_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT, 100);
            Duration socket = atLeast(o, SOCKET_TIMEOUT, DEFAULT_SOCKET_TIMEOUT, 1000);
            Duration pool = atLeast(o, POOL_TIMEOUT, DEFAULT_POOL_TIMEOUT, 250);
            if (o.get(SOCKET_TIMEOUT) == null && socket.compareTo(statement) <= 0) {
                socket = statement.plusSeconds(15); // keep the client-side bound above a raised statement timeout
            }
            if (socket.compareTo(statement) <= 0) {
                throw new IllegalArgumentException("option '" + SOCKET_TIMEOUT + "' (" + socket.toMillis()
                        + "ms) must be above '" + STATEMENT_TIMEOUT + "' (" + statement.toMillis() + "ms), so that a"
                        + " live server cancels a slow statement before the client gives up on its socket");
            }
            return new Timeouts(connect, statement, socket, pool);
        }

        private static Duration atLeast(ProviderOptions o, String name, Duration dflt, long minMillis) {
            Duration d = o.getDuration(name, dflt);
            if (d.toMillis() < minMillis) {
                throw new IllegalArgumentException("option '" + name + "' must be at least " + minMillis
                        + "ms, got " + d.toMillis() + "ms");
            }
            return d;
        }
    }

    /** @return pgjdbc's socketTimeout, in whole seconds (rounded up) */
    int socketTimeoutSeconds() {
        return (int) Math.min(Integer.MAX_VALUE, (socketTimeout.toMillis() + 999) / 1000);
    }

    /** @return pgjdbc's connectTimeout and loginTimeout, in whole seconds (rounded up) */
    int connectTimeoutSeconds() {
        return (int) Math.min(Integer.MAX_VALUE, (connectTimeout.toMillis() + 999) / 1000);
    }

    private static String schema(ProviderOptions o) {
        String schema = o.get(SCHEMA, DEFAULT_SCHEMA);
        if (!SCHEMA_NAME.matcher(schema).matches() || schema.startsWith("pg_")) {
            throw new IllegalArgumentException("option '" + SCHEMA + "' must match [a-z_][a-z0-9_]{0,62} and not "
                    + "start with pg_, got '" + schema + "'");
        }
        return schema;
    }

    private static long maxCheckpointBytes(ProviderOptions o) {
        return o.getLong(MAX_CHECKPOINT_BYTES, MAX_CHECKPOINT_LIMIT, 1, MAX_CHECKPOINT_LIMIT);
    }

    /** @return the JDBC URL without credentials */
    String jdbcUrl() {
        String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        return "jdbc:postgresql://" + h + ":" + port + "/" + database;
    }

    @Override
    public String toString() {
        return host == null ? "postgres(DataSource, schema " + schema + ")"
                : "postgres://" + host + ":" + port + "/" + database + " (user " + user + ", schema " + schema + ")";
    }
}
