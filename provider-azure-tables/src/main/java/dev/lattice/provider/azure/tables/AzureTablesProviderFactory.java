package dev.lattice.provider.azure.tables;

import com.azure.core.credential.AzureNamedKeyCredential;
import com.azure.core.credential.TokenCredential;
import com.azure.core.http.policy.ExponentialBackoffOptions;
import com.azure.core.http.policy.RetryOptions;
import com.azure.core.util.HttpClientOptions;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import dev.lattice.spi.support.ProviderOptions;
import dev.lattice.spi.ProviderUris;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.WalStorageProviderFactory;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * Opens {@link AzureTablesWalStorageProvider}s for URIs with scheme {@value #SCHEME} (registered with
 * {@link java.util.ServiceLoader}).
 *
 * <p>URI forms: {@code azure-tables:<table>?options}, {@code azure-tables://<host>[:port][/<path>]/<table>?options}
 * (endpoint {@code https://<host>[:port][/<path>]}), or {@code azure-tables:///<table>?options}. Options (query or
 * map; the map wins):
 * <ul>
 *   <li>{@value #TABLE}: the table (instead of the URI's last path segment);</li>
 *   <li>credentials, exactly one way: {@value #CONNECTION_STRING}; or an endpoint ({@value #ENDPOINT} or the URI's
 *       host) with {@value #SAS_TOKEN}, or {@value #ACCOUNT_NAME} + {@value #ACCOUNT_KEY}, or
 *       {@value #CREDENTIAL}{@code =default} (the {@code DefaultAzureCredential} chain; needs
 *       {@code com.azure:azure-identity} on the classpath and an https endpoint);</li>
 *   <li>{@value #ATTEMPT_TIMEOUT}: per-attempt network timeout (default 10s); {@value #MAX_RETRIES}: SDK retries of
 *       a failed attempt (0 to 10, default 3); {@value #CREATE_TABLE}: create the table when missing (default
 *       true); {@value #RUN_CHUNKS_IN_FLIGHT}: most run chunk rows being read and sent at once over the
 *       provider's run writes (1 to 64, default 4; about 4 MB of heap each).</li>
 * </ul>
 * Secrets are never logged nor put into exception messages. Stateless and thread-safe.
 */
public final class AzureTablesProviderFactory implements WalStorageProviderFactory {
    /** The URI scheme. */
    public static final String SCHEME = "azure-tables";
    /** Option: table name. */
    public static final String TABLE = "table";
    /** Option: storage connection string (secret). */
    public static final String CONNECTION_STRING = "connectionString";
    /** Option: table service endpoint, e.g. {@code https://acct.table.core.windows.net}. */
    public static final String ENDPOINT = "endpoint";
    /** Option: SAS token (secret). */
    public static final String SAS_TOKEN = "sasToken";
    /** Option: account name, for a shared key. */
    public static final String ACCOUNT_NAME = "accountName";
    /** Option: account key (secret). */
    public static final String ACCOUNT_KEY = "accountKey";
    /** Option: {@code default} for the DefaultAzureCredential chain. */
    public static final String CREDENTIAL = "credential";
    /** Option: per-attempt network timeout. */
    public static final String ATTEMPT_TIMEOUT = "attemptTimeout";
    /** Option: SDK retries per request. */
    public static final String MAX_RETRIES = "maxRetries";
    /** Option: create the table when it does not exist. */
    public static final String CREATE_TABLE = "createTable";
    /**
     * Option: most run chunk rows in flight at once over all run writes of the provider, 1 to
     * {@value AzureTablesWalStorageProvider#MAX_RUN_CHUNKS_IN_FLIGHT} (default
     * {@value AzureTablesWalStorageProvider#DEFAULT_RUN_CHUNKS_IN_FLIGHT}); each costs about 4 MB of heap while it is
     * read and sent.
     */
    public static final String RUN_CHUNKS_IN_FLIGHT = "runChunksInFlight";
    /** Default per-attempt timeout: well below the SDK's default, so a stuck socket does not hold a WAL slot. */
    public static final Duration DEFAULT_ATTEMPT_TIMEOUT = Duration.ofSeconds(10);

    private static final Set<String> KNOWN = Set.of(TABLE, CONNECTION_STRING, ENDPOINT, SAS_TOKEN, ACCOUNT_NAME,
            ACCOUNT_KEY, CREDENTIAL, ATTEMPT_TIMEOUT, MAX_RETRIES, CREATE_TABLE, RUN_CHUNKS_IN_FLIGHT);

    /** Creates the factory; {@link java.util.ServiceLoader} calls this. */
    public AzureTablesProviderFactory() {
    }

    @Override
    public String scheme() {
        return SCHEME;
    }

    @Override
    public String description() {
        return "Azure Table Storage: azure-tables://<account>.table.core.windows.net/<table>?sasToken=... or"
                + " azure-tables:<table>?connectionString=...";
    }

    /**
     * Opens a provider; see the class description for URI forms and options.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the scheme, table name, an option or the credential combination is wrong
     * @throws ProviderUnavailableException if the service cannot be reached
     * @throws WalStorageException if the table cannot be created
     */
    @Override
    public WalStorageProvider open(URI uri, Map<String, String> options) {
        ProviderOptions o = ProviderOptions.forScheme(SCHEME, uri, options, KNOWN);
        String fromUri = ProviderUris.resourceName(uri);
        String table = o.get(TABLE);
        if (table != null && fromUri != null && !table.equals(fromUri)) {
            throw new IllegalArgumentException("the URI names table '" + fromUri + "' but option '" + TABLE + "' says '"
                    + table + "'");
        }
        table = table != null ? table : fromUri;
        if (table == null) {
            throw new IllegalArgumentException("no table: give it as the URI's last path segment or option '" + TABLE
                    + "'");
        }
        AzureTablesWalStorageProvider.validateTableName(table);
        int runChunks = (int) o.getLong(RUN_CHUNKS_IN_FLIGHT,
                AzureTablesWalStorageProvider.DEFAULT_RUN_CHUNKS_IN_FLIGHT, 1,
                AzureTablesWalStorageProvider.MAX_RUN_CHUNKS_IN_FLIGHT);
        TableServiceClient client = buildClient(uri, o);
        return new AzureTablesWalStorageProvider(new SdkTableGateway(client, table), table, Layout.DEFAULT,
                o.getBoolean(CREATE_TABLE, true), runChunks);
    }

    /** Builds the service client; package-private so tests can check option handling. */
    static TableServiceClient buildClient(URI uri, ProviderOptions o) {
        Duration attempt = o.getDuration(ATTEMPT_TIMEOUT, DEFAULT_ATTEMPT_TIMEOUT);
        if (attempt.isZero()) {
            throw new IllegalArgumentException("option '" + ATTEMPT_TIMEOUT + "' must be positive");
        }
        int retries = (int) o.getLong(MAX_RETRIES, 3, 0, 10);
        HttpClientOptions http = new HttpClientOptions()
                .setConnectTimeout(attempt.compareTo(Duration.ofSeconds(10)) < 0 ? attempt : Duration.ofSeconds(10))
                .setResponseTimeout(attempt).setReadTimeout(attempt).setWriteTimeout(attempt);
        RetryOptions retry = new RetryOptions(new ExponentialBackoffOptions().setMaxRetries(retries)
                .setBaseDelay(Duration.ofMillis(100)).setMaxDelay(Duration.ofSeconds(2)));
        TableServiceClientBuilder b = new TableServiceClientBuilder().clientOptions(http).retryOptions(retry);

        String connectionString = o.get(CONNECTION_STRING);
        String sas = o.get(SAS_TOKEN);
        String key = o.get(ACCOUNT_KEY);
        String credential = o.get(CREDENTIAL);
        int ways = (connectionString != null ? 1 : 0) + (sas != null ? 1 : 0) + (key != null ? 1 : 0)
                + (credential != null ? 1 : 0);
        if (ways != 1) {
            throw new IllegalArgumentException("give exactly one credential: '" + CONNECTION_STRING + "', '"
                    + SAS_TOKEN + "', '" + ACCOUNT_NAME + "' + '" + ACCOUNT_KEY + "', or '" + CREDENTIAL
                    + "=default' (got " + ways + ")");
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
                        + "' or a URI host (azure-tables://<account>.table.core.windows.net/<table>)");
            }
            b.endpoint(endpoint);
            if (sas != null) {
                b.sasToken(sas.startsWith("?") ? sas.substring(1) : sas);
            } else if (key != null) {
                String account = o.require(ACCOUNT_NAME);
                b.credential(new AzureNamedKeyCredential(account, key));
            } else {
                if (!"default".equals(credential)) {
                    throw new IllegalArgumentException("option '" + CREDENTIAL + "' must be 'default', got '"
                            + credential + "'");
                }
                b.credential(defaultAzureCredential());
            }
        }
        try {
            return b.buildClient();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException("cannot build the Azure Table client from the given options ("
                    + e.getClass().getSimpleName() + ")");
        }
    }

    private static TokenCredential defaultAzureCredential() {
        try {
            Class<?> builder = Class.forName("com.azure.identity.DefaultAzureCredentialBuilder");
            Object instance = builder.getConstructor().newInstance();
            return (TokenCredential) builder.getMethod("build").invoke(instance);
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("option '" + CREDENTIAL + "=default' needs com.azure:azure-identity"
                    + " on the classpath");
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException("cannot create DefaultAzureCredential: " + e.getClass().getSimpleName());
        }
    }
}
