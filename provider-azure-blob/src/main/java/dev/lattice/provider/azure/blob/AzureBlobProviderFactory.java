package dev.lattice.provider.azure.blob;

import com.azure.core.util.HttpClientOptions;
import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.common.StorageSharedKeyCredential;
import com.azure.storage.common.policy.RequestRetryOptions;
import com.azure.storage.common.policy.RetryPolicyType;
import dev.lattice.spi.support.ProviderOptions;
import dev.lattice.spi.ProviderUris;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.WalStorageProviderFactory;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * Opens {@link AzureBlobWalStorageProvider}s for URIs with scheme {@value #SCHEME} (registered with
 * {@link java.util.ServiceLoader}).
 *
 * <p>URI forms: {@code azure-blob:<container>?options}, {@code azure-blob://<host>[:port][/<path>]/<container>?options}
 * (endpoint {@code https://<host>[:port][/<path>]}), or {@code azure-blob:///<container>?options}. Options (query or
 * map; the map wins):
 * <ul>
 *   <li>{@value #CONTAINER}: the container (instead of the URI's last path segment);</li>
 *   <li>credentials, exactly one way: {@value #CONNECTION_STRING}; or an endpoint ({@value #ENDPOINT} or the URI's
 *       host) with {@value #SAS_TOKEN}, or {@value #ACCOUNT_NAME} + {@value #ACCOUNT_KEY};</li>
 *   <li>{@value #ATTEMPT_TIMEOUT}: per-attempt timeout of every request (default 10s); {@value #MAX_RETRIES}: SDK
 *       retries of a failed attempt, 0 to 10 (default 3);</li>
 *   <li>layout and limits, see {@link AzureBlobConfig.Builder}: {@value #PREFIX}, {@value #CREATE_CONTAINER},
 *       {@value #MAX_BLOCK_BYTES}, {@value #MAX_BLOCKS_PER_SEGMENT}, {@value #MAX_SEGMENT_BYTES},
 *       {@value #MAX_ENTRIES_PER_BATCH}, {@value #MAX_CHECKPOINT_BYTES}, {@value #INLINE_TAIL_BYTES},
 *       {@value #INLINE_TAIL_BATCHES}, {@value #READ_CHUNK_BYTES}, {@value #CACHE_BYTES};</li>
 *   <li>replay cost model figures: {@value #REPLAY_MILLIS_PER_BLOCK} (default 5.7) and
 *       {@value #REPLAY_MBIT_PER_SECOND} (default 100).</li>
 * </ul>
 * Secrets are never logged nor put into exception messages. Stateless and thread-safe.
 */
public final class AzureBlobProviderFactory implements WalStorageProviderFactory {
    /** The URI scheme. */
    public static final String SCHEME = "azure-blob";
    /** Option: container name. */
    public static final String CONTAINER = "container";
    /** Option: storage connection string (secret). */
    public static final String CONNECTION_STRING = "connectionString";
    /** Option: blob service endpoint, e.g. {@code https://acct.blob.core.windows.net}. */
    public static final String ENDPOINT = "endpoint";
    /** Option: SAS token (secret). */
    public static final String SAS_TOKEN = "sasToken";
    /** Option: account name, for a shared key. */
    public static final String ACCOUNT_NAME = "accountName";
    /** Option: account key (secret). */
    public static final String ACCOUNT_KEY = "accountKey";
    /** Option: per-attempt timeout. */
    public static final String ATTEMPT_TIMEOUT = "attemptTimeout";
    /** Option: SDK retries per request. */
    public static final String MAX_RETRIES = "maxRetries";
    /** Option: blob name prefix. */
    public static final String PREFIX = "prefix";
    /** Option: create the container when missing. */
    public static final String CREATE_CONTAINER = "createContainer";
    /** Option: largest block, in bytes. */
    public static final String MAX_BLOCK_BYTES = "maxBlockBytes";
    /** Option: blocks after which a segment rolls. */
    public static final String MAX_BLOCKS_PER_SEGMENT = "maxBlocksPerSegment";
    /** Option: bytes after which a segment rolls. */
    public static final String MAX_SEGMENT_BYTES = "maxSegmentBytes";
    /** Option: most entries per batch. */
    public static final String MAX_ENTRIES_PER_BATCH = "maxEntriesPerBatch";
    /** Option: largest checkpoint, in bytes. */
    public static final String MAX_CHECKPOINT_BYTES = "maxCheckpointBytes";
    /** Option: inline tail size, in bytes (0 = off). */
    public static final String INLINE_TAIL_BYTES = "inlineTailBytes";
    /** Option: most frames in the inline tail. */
    public static final String INLINE_TAIL_BATCHES = "inlineTailBatches";
    /** Option: bytes per segment range download. */
    public static final String READ_CHUNK_BYTES = "readChunkBytes";
    /** Option: segment cache budget, in bytes. */
    public static final String CACHE_BYTES = "cacheBytes";
    /** Option: replay model, milliseconds per block. */
    public static final String REPLAY_MILLIS_PER_BLOCK = "replayMillisPerBlock";
    /** Option: replay model, link bandwidth in Mbit/s. */
    public static final String REPLAY_MBIT_PER_SECOND = "replayMbitPerSecond";
    /** Default per-attempt timeout: short, so a stuck connection does not hold a log's writer for long. */
    public static final Duration DEFAULT_ATTEMPT_TIMEOUT = Duration.ofSeconds(10);

    private static final Set<String> KNOWN = Set.of(CONTAINER, CONNECTION_STRING, ENDPOINT, SAS_TOKEN, ACCOUNT_NAME,
            ACCOUNT_KEY, ATTEMPT_TIMEOUT, MAX_RETRIES, PREFIX, CREATE_CONTAINER, MAX_BLOCK_BYTES,
            MAX_BLOCKS_PER_SEGMENT, MAX_SEGMENT_BYTES, MAX_ENTRIES_PER_BATCH, MAX_CHECKPOINT_BYTES, INLINE_TAIL_BYTES,
            INLINE_TAIL_BATCHES, READ_CHUNK_BYTES, CACHE_BYTES, REPLAY_MILLIS_PER_BLOCK, REPLAY_MBIT_PER_SECOND);

    /** Creates the factory; {@link java.util.ServiceLoader} calls this. */
    public AzureBlobProviderFactory() {
    }

    @Override
    public String scheme() {
        return SCHEME;
    }

    @Override
    public String description() {
        return "Azure Blob Storage (append-blob segments + manifest): azure-blob://<account>.blob.core.windows.net/"
                + "<container>?sasToken=... or azure-blob:<container>?connectionString=...";
    }

    /**
     * Opens a provider; see the class description for URI forms and options. Makes no request: the container is
     * created (when missing and allowed) on the first write.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the scheme, container name, an option or the credential combination is
     *     wrong (the message names it, never a secret)
     */
    @Override
    public WalStorageProvider open(URI uri, Map<String, String> options) {
        ProviderOptions o = ProviderOptions.forScheme(SCHEME, uri, options, KNOWN);
        AzureBlobConfig config = config(uri, o);
        return AzureBlobWalStorageProvider.open(buildClient(uri, o), config);
    }

    /** Parses the layout, limit and model options; package-private for tests. */
    static AzureBlobConfig config(URI uri, ProviderOptions o) {
        String fromUri = ProviderUris.resourceName(uri);
        String container = o.get(CONTAINER);
        if (container != null && fromUri != null && !container.equals(fromUri)) {
            throw new IllegalArgumentException("the URI names container '" + fromUri + "' but option '" + CONTAINER
                    + "' says '" + container + "'");
        }
        container = container != null ? container : fromUri;
        if (container == null) {
            throw new IllegalArgumentException("no container: give it as the URI's last path segment or option '"
                    + CONTAINER + "'");
        }
        AzureBlobConfig.Builder b = AzureBlobConfig.builder(container)
                .prefix(o.get(PREFIX, ""))
                .createContainer(o.getBoolean(CREATE_CONTAINER, true))
                .maxBlockBytes((int) o.getLong(MAX_BLOCK_BYTES, AzureBlobConfig.SERVICE_MAX_BLOCK_BYTES_OLD, 64 << 10,
                        AzureBlobConfig.SERVICE_MAX_BLOCK_BYTES_NEW))
                .maxBlocksPerSegment((int) o.getLong(MAX_BLOCKS_PER_SEGMENT,
                        AzureBlobConfig.DEFAULT_MAX_BLOCKS_PER_SEGMENT, 1,
                        AzureBlobConfig.SERVICE_MAX_BLOCKS_PER_APPEND_BLOB))
                .maxSegmentBytes(o.getLong(MAX_SEGMENT_BYTES, AzureBlobConfig.DEFAULT_MAX_SEGMENT_BYTES, 64 << 10,
                        Long.MAX_VALUE))
                .maxEntriesPerBatch((int) o.getLong(MAX_ENTRIES_PER_BATCH,
                        AzureBlobConfig.DEFAULT_MAX_ENTRIES_PER_BATCH, 1, 100_000))
                .maxCheckpointBytes(o.getLong(MAX_CHECKPOINT_BYTES, AzureBlobConfig.DEFAULT_MAX_CHECKPOINT_BYTES, 1,
                        Long.MAX_VALUE))
                .inlineTailBytes((int) o.getLong(INLINE_TAIL_BYTES, AzureBlobConfig.DEFAULT_INLINE_TAIL_BYTES, 0,
                        1 << 20))
                .inlineTailBatches((int) o.getLong(INLINE_TAIL_BATCHES, AzureBlobConfig.DEFAULT_INLINE_TAIL_BATCHES, 1,
                        100_000))
                .readChunkBytes((int) o.getLong(READ_CHUNK_BYTES, AzureBlobConfig.DEFAULT_READ_CHUNK_BYTES, 64 << 10,
                        256 << 20))
                .cacheBytes(o.getLong(CACHE_BYTES, AzureBlobConfig.DEFAULT_CACHE_BYTES, 0, 16L << 30))
                .replayMillisPerBlock(getDouble(o, REPLAY_MILLIS_PER_BLOCK, AzureBlobConfig.DEFAULT_REPLAY_MILLIS_PER_BLOCK))
                .replayMbitPerSecond(getDouble(o, REPLAY_MBIT_PER_SECOND, AzureBlobConfig.DEFAULT_REPLAY_MBIT_PER_SECOND));
        return b.build();
    }

    private static double getDouble(ProviderOptions o, String name, double defaultValue) {
        String v = o.get(name);
        if (v == null) {
            return defaultValue;
        }
        try {
            return Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option '" + name + "' must be a number, got '" + v + "'", e);
        }
    }

    /**
     * Builds the service client with the SDK's exponential retry and a per-attempt timeout; package-private so tests
     * can check option handling.
     */
    static BlobServiceClient buildClient(URI uri, ProviderOptions o) {
        Duration attempt = o.getDuration(ATTEMPT_TIMEOUT, DEFAULT_ATTEMPT_TIMEOUT);
        if (attempt.isZero()) {
            throw new IllegalArgumentException("option '" + ATTEMPT_TIMEOUT + "' must be positive");
        }
        int retries = (int) o.getLong(MAX_RETRIES, 3, 0, 10);
        HttpClientOptions http = new HttpClientOptions()
                .setConnectTimeout(attempt.compareTo(Duration.ofSeconds(10)) < 0 ? attempt : Duration.ofSeconds(10))
                .setResponseTimeout(attempt).setReadTimeout(attempt).setWriteTimeout(attempt);
        // The retry policy's try timeout counts whole seconds (the SDK refuses less than 1 s); the HTTP client's
        // response and read timeouts above bound a sub-second attempt exactly.
        Duration tryTimeout = Duration.ofSeconds(Math.max(1, (attempt.toMillis() + 999) / 1000));
        RequestRetryOptions retry = new RequestRetryOptions(RetryPolicyType.EXPONENTIAL, retries + 1, tryTimeout,
                Duration.ofMillis(100), Duration.ofSeconds(2), null);
        BlobServiceClientBuilder b = new BlobServiceClientBuilder().clientOptions(http).retryOptions(retry);

        String connectionString = o.get(CONNECTION_STRING);
        String sas = o.get(SAS_TOKEN);
        String key = o.get(ACCOUNT_KEY);
        int ways = (connectionString != null ? 1 : 0) + (sas != null ? 1 : 0) + (key != null ? 1 : 0);
        if (ways != 1) {
            throw new IllegalArgumentException("give exactly one credential: '" + CONNECTION_STRING + "', '"
                    + SAS_TOKEN + "', or '" + ACCOUNT_NAME + "' + '" + ACCOUNT_KEY + "' (got " + ways + ")");
        }
        if (connectionString != null) {
            if (o.get(ENDPOINT) != null) {
                throw new IllegalArgumentException("option '" + ENDPOINT + "' cannot be combined with '"
                        + CONNECTION_STRING + "' (the connection string names the endpoint)");
            }
            try {
                b.connectionString(connectionString);
            } catch (RuntimeException e) {
                // The SDK's message may quote the string, which holds the account key: keep it out.
                throw new IllegalArgumentException("option '" + CONNECTION_STRING + "' is not a valid storage"
                        + " connection string (" + e.getClass().getSimpleName() + ")");
            }
        } else {
            String endpoint = o.get(ENDPOINT) != null ? o.get(ENDPOINT) : ProviderUris.httpsEndpoint(uri);
            if (endpoint == null) {
                throw new IllegalArgumentException("no endpoint: give option '" + ENDPOINT
                        + "' or a URI host (azure-blob://<account>.blob.core.windows.net/<container>)");
            }
            try {
                b.endpoint(endpoint);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("option '" + ENDPOINT + "' is not a valid URL ("
                        + e.getClass().getSimpleName() + ")");
            }
            if (sas != null) {
                b.sasToken(sas.startsWith("?") ? sas.substring(1) : sas);
            } else {
                String account = o.require(ACCOUNT_NAME);
                b.credential(new StorageSharedKeyCredential(account, key));
            }
        }
        try {
            return b.buildClient();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException("cannot build the Azure Blob client from the given options ("
                    + e.getClass().getSimpleName() + ")");
        }
    }
}
