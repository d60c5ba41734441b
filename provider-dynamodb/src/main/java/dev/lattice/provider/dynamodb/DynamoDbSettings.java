package dev.lattice.provider.dynamodb;

import dev.lattice.spi.support.ProviderOptions;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The DynamoDB provider's configuration: table, region, endpoint override, credentials, table creation, key prefix,
 * timeouts and retries, and the run store's chunk size and read cache. Built from a URI plus options ({@link #fromUri(URI, Map)}) or with {@link #builder()}.
 *
 * <p>Options (URI query or map; the map wins):
 * <table>
 *   <caption>options</caption>
 *   <tr><th>name</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code table}</td><td>from the URI</td><td>table name (3-255 of {@code [A-Za-z0-9_.-]})</td></tr>
 *   <tr><td>{@code region}</td><td>SDK default chain</td><td>AWS region, e.g. {@code eu-west-1}</td></tr>
 *   <tr><td>{@code endpoint}</td><td>none</td><td>endpoint override, e.g. {@code http://127.0.0.1:8000}</td></tr>
 *   <tr><td>{@code accessKeyId}, {@code secretAccessKey}, {@code sessionToken}</td><td>none</td><td>static
 *       credentials (key id and secret together); otherwise the SDK default credential chain. Never logged.</td></tr>
 *   <tr><td>{@code createTable}</td><td>{@code false}</td><td>create the table (on-demand billing) if missing</td></tr>
 *   <tr><td>{@code keyPrefix}</td><td>empty</td><td>prefix of every partition key (0-64 of
 *       {@code [A-Za-z0-9_.-]}), so several providers share one table</td></tr>
 *   <tr><td>{@code apiCallTimeout}</td><td>{@code 30s}</td><td>total time of one SDK call, retries included</td></tr>
 *   <tr><td>{@code apiCallAttemptTimeout}</td><td>{@code 10s}</td><td>time of one HTTP attempt of an SDK call (at
 *       most {@code apiCallTimeout})</td></tr>
 *   <tr><td>{@code connectTimeout}</td><td>{@code 5s}</td><td>TCP connect timeout</td></tr>
 *   <tr><td>{@code socketTimeout}</td><td>{@code apiCallAttemptTimeout}</td><td>longest wait for the next bytes of
 *       a response (the HTTP client's read timeout)</td></tr>
 *   <tr><td>{@code maxAttempts}</td><td>{@code 3}</td><td>SDK attempts per call (1 = no SDK retry)</td></tr>
 *   <tr><td>{@code batchWriteDeadline}</td><td>{@code 30s}</td><td>how long unprocessed {@code BatchWriteItem}
 *       deletes are resubmitted</td></tr>
 *   <tr><td>{@code tableActiveTimeout}</td><td>{@code 120s}</td><td>wait for a created table to become
 *       active</td></tr>
 *   <tr><td>{@code runCacheBytes}</td><td>{@code 4194304} (4 MiB)</td><td>bytes of run headers and chunk
 *       payloads the run store keeps for reads, 0 (off) to {@code 1073741824} (1 GiB)</td></tr>
 *   <tr><td>{@code runChunkBytes}</td><td>{@value #DEFAULT_RUN_CHUNK_BYTES}</td><td>data bytes per chunk item of
 *       runs written from now on, {@value #MIN_RUN_CHUNK_BYTES} to {@value DynamoDbRunStore#MAX_CHUNK_BYTES}; also
 *       the store's preferred read size</td></tr>
 * </table>
 *
 * <p>Immutable and thread-safe. {@link #toString()} never shows the secret key or session token.
 */
public final class DynamoDbSettings {

    /** The option names {@link #fromUri(URI, Map)} accepts. */
    public static final Set<String> OPTIONS = Set.of("table", "region", "endpoint", "accessKeyId", "secretAccessKey",
            "sessionToken", "createTable", "keyPrefix", "apiCallTimeout", "apiCallAttemptTimeout", "connectTimeout",
            "socketTimeout", "maxAttempts", "batchWriteDeadline", "tableActiveTimeout", "runCacheBytes",
            "runChunkBytes");

    /** Default of {@code runCacheBytes}: 4 MiB. */
    public static final long DEFAULT_RUN_CACHE_BYTES = 4L << 20;
    /** Largest {@code runCacheBytes}: 1 GiB. */
    public static final long MAX_RUN_CACHE_BYTES = 1L << 30;
    /** Default of {@code runChunkBytes}: 64 KiB. */
    public static final int DEFAULT_RUN_CHUNK_BYTES = 64 << 10;
    /** Smallest {@code runChunkBytes}: 4 KiB. */
    public static final int MIN_RUN_CHUNK_BYTES = 4 << 10;

    private static final Pattern TABLE = Pattern.compile("[A-Za-z0-9_.-]{3,255}");
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_.-]{0,64}");
    private static final Pattern REGION = Pattern.compile("[a-z0-9-]{1,64}");

    private final String table;
    private final String region;
    private final URI endpoint;
    private final String accessKeyId;
    private final String secretAccessKey;
    private final String sessionToken;
    private final boolean createTable;
    private final String keyPrefix;
    private final Duration apiCallTimeout;
    private final Duration apiCallAttemptTimeout;
    private final Duration connectTimeout;
    private final Duration socketTimeout;
    private final int maxAttempts;
    private final Duration batchWriteDeadline;
    private final Duration tableActiveTimeout;
    private final long runCacheBytes;
    private final int runChunkBytes;

    private DynamoDbSettings(Builder b) {
        this.table = b.table;
        this.region = b.region;
        this.endpoint = b.endpoint;
        this.accessKeyId = b.accessKeyId;
        this.secretAccessKey = b.secretAccessKey;
        this.sessionToken = b.sessionToken;
        this.createTable = b.createTable;
        this.keyPrefix = b.keyPrefix;
        this.apiCallTimeout = b.apiCallTimeout;
        this.apiCallAttemptTimeout = b.apiCallAttemptTimeout.compareTo(b.apiCallTimeout) > 0 ? b.apiCallTimeout
                : b.apiCallAttemptTimeout;
        this.connectTimeout = b.connectTimeout;
        this.socketTimeout = b.socketTimeout != null ? b.socketTimeout : this.apiCallAttemptTimeout;
        this.maxAttempts = b.maxAttempts;
        this.batchWriteDeadline = b.batchWriteDeadline;
        this.tableActiveTimeout = b.tableActiveTimeout;
        this.runCacheBytes = b.runCacheBytes;
        this.runChunkBytes = b.runChunkBytes;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Reads settings from a provider URI and options: {@code dynamodb://<table>?region=...} or
     * {@code dynamodb:<table>?...}, or the table in option {@code table}.
     *
     * @param uri the URI, scheme {@code dynamodb}
     * @param options further options, winning over the URI's query
     * @return the settings
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the scheme is not {@code dynamodb}, an option is unknown or malformed, or
     *     the table is missing or invalid (the message names the option, never a secret value)
     */
    public static DynamoDbSettings fromUri(URI uri, Map<String, String> options) {
        ProviderOptions o = ProviderOptions.forScheme("dynamodb", uri, options, OPTIONS);
        Builder b = builder();
        String fromUri = tableFromUri(uri);
        String table = o.get("table", fromUri);
        if (table == null || table.isEmpty()) {
            throw new IllegalArgumentException("dynamodb URI needs a table: dynamodb://<table>?region=... "
                    + "or option 'table'");
        }
        b.table(table);
        if (o.get("region") != null) {
            b.region(o.get("region"));
        }
        if (o.get("endpoint") != null) {
            try {
                b.endpoint(new URI(o.get("endpoint")));
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("option 'endpoint' must be a URI like http://127.0.0.1:8000, got '"
                        + o.get("endpoint") + "'", e);
            }
        }
        String key = o.get("accessKeyId");
        String secret = o.get("secretAccessKey");
        if ((key == null) != (secret == null)) {
            throw new IllegalArgumentException("options 'accessKeyId' and 'secretAccessKey' go together "
                    + "(or leave both out to use the AWS SDK default credential chain)");
        }
        if (key != null) {
            b.staticCredentials(key, secret, o.get("sessionToken"));
        } else if (o.get("sessionToken") != null) {
            throw new IllegalArgumentException("option 'sessionToken' needs 'accessKeyId' and 'secretAccessKey'");
        }
        b.createTable(o.getBoolean("createTable", false));
        b.keyPrefix(o.get("keyPrefix", ""));
        b.apiCallTimeout(o.getDuration("apiCallTimeout", b.apiCallTimeout));
        b.apiCallAttemptTimeout(o.getDuration("apiCallAttemptTimeout", b.apiCallAttemptTimeout));
        b.connectTimeout(o.getDuration("connectTimeout", b.connectTimeout));
        if (o.get("socketTimeout") != null) {
            b.socketTimeout(o.getDuration("socketTimeout", null));
        }
        b.maxAttempts((int) o.getLong("maxAttempts", b.maxAttempts, 1, 20));
        b.batchWriteDeadline(o.getDuration("batchWriteDeadline", b.batchWriteDeadline));
        b.tableActiveTimeout(o.getDuration("tableActiveTimeout", b.tableActiveTimeout));
        b.runCacheBytes(o.getLong("runCacheBytes", b.runCacheBytes, 0, MAX_RUN_CACHE_BYTES));
        b.runChunkBytes((int) o.getLong("runChunkBytes", b.runChunkBytes, MIN_RUN_CHUNK_BYTES,
                DynamoDbRunStore.MAX_CHUNK_BYTES));
        return b.build();
    }

    private static String tableFromUri(URI uri) {
        String raw;
        if (uri.isOpaque()) {
            raw = uri.getSchemeSpecificPart();
            int q = raw.indexOf('?');
            raw = q >= 0 ? raw.substring(0, q) : raw;
        } else {
            raw = uri.getAuthority() != null ? uri.getAuthority() : "";
            String path = uri.getPath();
            if (path != null && !path.isEmpty() && !path.equals("/")) {
                if (!raw.isEmpty()) {
                    throw new IllegalArgumentException("dynamodb URI takes the table as its host: dynamodb://<table>"
                            + "?region=..., got a path '" + path + "'");
                }
                raw = path.startsWith("/") ? path.substring(1) : path;
            }
        }
        return raw.isEmpty() ? null : raw;
    }

    /** @return the table name */
    public String table() {
        return table;
    }

    /** @return the region, or null for the SDK default region chain */
    public String region() {
        return region;
    }

    /** @return the endpoint override, or null */
    public URI endpoint() {
        return endpoint;
    }

    /** @return whether static credentials are set (otherwise the SDK default chain is used) */
    public boolean hasStaticCredentials() {
        return accessKeyId != null;
    }

    String accessKeyId() {
        return accessKeyId;
    }

    String secretAccessKey() {
        return secretAccessKey;
    }

    String sessionToken() {
        return sessionToken;
    }

    /** @return whether a missing table is created (on-demand billing) */
    public boolean createTable() {
        return createTable;
    }

    /** @return the partition-key prefix, empty for none */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** @return the total time of one SDK call, retries included */
    public Duration apiCallTimeout() {
        return apiCallTimeout;
    }

    /** @return the time of one HTTP attempt of an SDK call (never above {@link #apiCallTimeout()}) */
    public Duration apiCallAttemptTimeout() {
        return apiCallAttemptTimeout;
    }

    /** @return the TCP connect timeout */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** @return the HTTP client's read timeout: longest wait for the next bytes of a response */
    public Duration socketTimeout() {
        return socketTimeout;
    }

    /** @return SDK attempts per call */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** @return how long unprocessed {@code BatchWriteItem} deletes are resubmitted */
    public Duration batchWriteDeadline() {
        return batchWriteDeadline;
    }

    /** @return how long open waits for a created table to become active */
    public Duration tableActiveTimeout() {
        return tableActiveTimeout;
    }

    /**
     * @return the run read cache's budget in bytes (headers and verified chunk payloads of runs), 0 when it is off
     */
    public long runCacheBytes() {
        return runCacheBytes;
    }

    /** @return data bytes per chunk item of runs this provider writes; also its runs' preferred read size */
    public int runChunkBytes() {
        return runChunkBytes;
    }

    /** @return the settings without secrets: table, region, endpoint, whether static credentials are set, options */
    @Override
    public String toString() {
        return "DynamoDbSettings[table=" + table + ", region=" + (region == null ? "(default chain)" : region)
                + ", endpoint=" + (endpoint == null ? "(default)" : endpoint)
                + ", credentials=" + (accessKeyId == null ? "default chain" : "static (key id set)")
                + ", createTable=" + createTable + ", keyPrefix='" + keyPrefix + "', apiCallTimeout="
                + apiCallTimeout + ", apiCallAttemptTimeout=" + apiCallAttemptTimeout + ", socketTimeout=" + socketTimeout
                + ", maxAttempts=" + maxAttempts + ", runCacheBytes=" + runCacheBytes + ", runChunkBytes="
                + runChunkBytes + "]";
    }

    /** Builds {@link DynamoDbSettings}. Not thread-safe. */
    public static final class Builder {
        private String table;
        private String region;
        private URI endpoint;
        private String accessKeyId;
        private String secretAccessKey;
        private String sessionToken;
        private boolean createTable;
        private String keyPrefix = "";
        private Duration apiCallTimeout = Duration.ofSeconds(30);
        private Duration apiCallAttemptTimeout = Duration.ofSeconds(10);
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration socketTimeout;
        private int maxAttempts = 3;
        private Duration batchWriteDeadline = Duration.ofSeconds(30);
        private Duration tableActiveTimeout = Duration.ofSeconds(120);
        private long runCacheBytes = DEFAULT_RUN_CACHE_BYTES;
        private int runChunkBytes = DEFAULT_RUN_CHUNK_BYTES;

        private Builder() {
        }

        /**
         * @param table the table name, 3-255 of {@code [A-Za-z0-9_.-]}
         * @return this
         * @throws IllegalArgumentException if the name breaks DynamoDB's rule
         */
        public Builder table(String table) {
            Objects.requireNonNull(table, "table");
            if (!TABLE.matcher(table).matches()) {
                throw new IllegalArgumentException("table name must be 3-255 of [A-Za-z0-9_.-], got '" + table + "'");
            }
            this.table = table;
            return this;
        }

        /**
         * @param region an AWS region name such as {@code us-east-1}, or null for the SDK default chain
         * @return this
         * @throws IllegalArgumentException if it is not a region-like name
         */
        public Builder region(String region) {
            if (region != null && !REGION.matcher(region).matches()) {
                throw new IllegalArgumentException("option 'region' must look like us-east-1, got '" + region + "'");
            }
            this.region = region;
            return this;
        }

        /**
         * @param endpoint an endpoint override with scheme http or https, or null
         * @return this
         * @throws IllegalArgumentException if it has no http(s) scheme or no host
         */
        public Builder endpoint(URI endpoint) {
            if (endpoint != null && (endpoint.getHost() == null || endpoint.getScheme() == null
                    || !endpoint.getScheme().matches("https?"))) {
                throw new IllegalArgumentException("option 'endpoint' must be http(s)://host[:port], got '"
                        + endpoint + "'");
            }
            this.endpoint = endpoint;
            return this;
        }

        /**
         * Uses static credentials instead of the SDK default chain.
         *
         * @param accessKeyId the access key id
         * @param secretAccessKey the secret key (never logged nor put in a message)
         * @param sessionToken a session token, or null
         * @return this
         * @throws IllegalArgumentException if the key id or secret is empty
         */
        public Builder staticCredentials(String accessKeyId, String secretAccessKey, String sessionToken) {
            if (accessKeyId == null || accessKeyId.isEmpty() || secretAccessKey == null || secretAccessKey.isEmpty()) {
                throw new IllegalArgumentException("static credentials need a non-empty 'accessKeyId' and "
                        + "'secretAccessKey'");
            }
            this.accessKeyId = accessKeyId;
            this.secretAccessKey = secretAccessKey;
            this.sessionToken = sessionToken == null || sessionToken.isEmpty() ? null : sessionToken;
            return this;
        }

        /**
         * @param createTable whether to create a missing table (on-demand billing)
         * @return this
         */
        public Builder createTable(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * @param keyPrefix partition-key prefix, 0-64 of {@code [A-Za-z0-9_.-]}
         * @return this
         * @throws IllegalArgumentException if it breaks that rule
         */
        public Builder keyPrefix(String keyPrefix) {
            Objects.requireNonNull(keyPrefix, "keyPrefix");
            if (!PREFIX.matcher(keyPrefix).matches()) {
                throw new IllegalArgumentException("option 'keyPrefix' must be 0-64 of [A-Za-z0-9_.-], got '"
                        + keyPrefix + "'");
            }
            this.keyPrefix = keyPrefix;
            return this;
        }

        /**
         * @param timeout total time of one SDK call including its retries, positive
         * @return this
         */
        public Builder apiCallTimeout(Duration timeout) {
            this.apiCallTimeout = positive("apiCallTimeout", timeout);
            return this;
        }

        /**
         * @param timeout time of one HTTP attempt, positive; an attempt timeout above {@code apiCallTimeout} is
         *     lowered to it (the whole call cannot take longer anyway)
         * @return this
         */
        public Builder apiCallAttemptTimeout(Duration timeout) {
            this.apiCallAttemptTimeout = positive("apiCallAttemptTimeout", timeout);
            return this;
        }

        /**
         * @param timeout the HTTP client's read timeout (longest wait for the next bytes of a response), positive;
         *     by default the attempt timeout
         * @return this
         */
        public Builder socketTimeout(Duration timeout) {
            this.socketTimeout = positive("socketTimeout", timeout);
            return this;
        }

        /**
         * @param timeout TCP connect timeout, positive
         * @return this
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive("connectTimeout", timeout);
            return this;
        }

        /**
         * @param attempts SDK attempts per call, 1-20 (the SDK backs off between them, throttling included)
         * @return this
         */
        public Builder maxAttempts(int attempts) {
            if (attempts < 1 || attempts > 20) {
                throw new IllegalArgumentException("option 'maxAttempts' must be in 1..20, got " + attempts);
            }
            this.maxAttempts = attempts;
            return this;
        }

        /**
         * @param deadline how long unprocessed {@code BatchWriteItem} deletes are resubmitted, positive
         * @return this
         */
        public Builder batchWriteDeadline(Duration deadline) {
            this.batchWriteDeadline = positive("batchWriteDeadline", deadline);
            return this;
        }

        /**
         * @param timeout how long open waits for a created table to become active, positive
         * @return this
         */
        public Builder tableActiveTimeout(Duration timeout) {
            this.tableActiveTimeout = positive("tableActiveTimeout", timeout);
            return this;
        }

        /**
         * Sets the run read cache's budget: run headers and verified chunk payloads this provider instance keeps so
         * that reads of a run in blocks smaller than a chunk fetch each chunk once (docs/providers/dynamodb.md,
         * "Run read cache"). Each chunk is charged its payload plus {@value RunCache#ENTRY_OVERHEAD_BYTES} bytes, each
         * header {@value RunCache#HEADER_BYTES} bytes.
         *
         * @param bytes 0 (no cache: every read fetches the header and the chunks it spans) to 1073741824 (1 GiB);
         *     default 4194304 (4 MiB)
         * @return this
         * @throws IllegalArgumentException naming {@code runCacheBytes} if out of bounds
         */
        public Builder runCacheBytes(long bytes) {
            if (bytes < 0 || bytes > MAX_RUN_CACHE_BYTES) {
                throw new IllegalArgumentException("option 'runCacheBytes' must be in 0.." + MAX_RUN_CACHE_BYTES
                        + " (0 turns the run read cache off), got " + bytes);
            }
            this.runCacheBytes = bytes;
            return this;
        }

        /**
         * Sets the data bytes per chunk item of runs written from now on (runs already written keep theirs: it is
         * in their header) and the run store's preferred read size ({@code RunLimits.preferredReadBytes}). A read
         * fetches whole chunk items, so this is what a point read of a block costs at least; smaller chunks mean
         * more items per run written (docs/providers/dynamodb.md, "Chunk size").
         *
         * @param bytes {@value #MIN_RUN_CHUNK_BYTES} to {@value DynamoDbRunStore#MAX_CHUNK_BYTES} (one 400 KB item
         *     minus 1 KiB); default {@value #DEFAULT_RUN_CHUNK_BYTES}
         * @return this
         * @throws IllegalArgumentException naming {@code runChunkBytes} if out of bounds
         */
        public Builder runChunkBytes(int bytes) {
            if (bytes < MIN_RUN_CHUNK_BYTES || bytes > DynamoDbRunStore.MAX_CHUNK_BYTES) {
                throw new IllegalArgumentException("option 'runChunkBytes' must be in " + MIN_RUN_CHUNK_BYTES + ".."
                        + DynamoDbRunStore.MAX_CHUNK_BYTES + ", got " + bytes);
            }
            this.runChunkBytes = bytes;
            return this;
        }

        private static Duration positive(String name, Duration d) {
            Objects.requireNonNull(d, name);
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException("option '" + name + "' must be positive, got " + d);
            }
            return d;
        }

        /**
         * @return the settings
         * @throws IllegalStateException if no table was set
         */
        public DynamoDbSettings build() {
            if (table == null) {
                throw new IllegalStateException("a table name is required");
            }
            return new DynamoDbSettings(this);
        }
    }
}
