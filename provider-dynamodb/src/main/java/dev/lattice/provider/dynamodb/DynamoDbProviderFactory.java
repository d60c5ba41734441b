package dev.lattice.provider.dynamodb;

import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.WalStorageProviderFactory;

import java.net.URI;
import java.util.Map;
import java.util.Objects;

/**
 * ServiceLoader factory for scheme {@code dynamodb}: {@code dynamodb://<table>?region=...&endpoint=...}. See
 * {@link DynamoDbSettings} for the options. Thread-safe.
 */
public final class DynamoDbProviderFactory implements WalStorageProviderFactory {

    /** Creates the factory (ServiceLoader needs a public no-argument constructor). */
    public DynamoDbProviderFactory() {
    }

    @Override
    public String scheme() {
        return "dynamodb";
    }

    @Override
    public String description() {
        return "Amazon DynamoDB (or a compatible server): dynamodb://<table>?region=...[&endpoint=...]"
                + "[&createTable=true] (credentials: SDK default chain or accessKeyId/secretAccessKey options)";
    }

    /**
     * Opens a provider with its own SDK client.
     *
     * @param uri {@code dynamodb://<table>?...}
     * @param options further options, winning over the URI's query (may hold static credentials)
     * @return the open provider
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the URI or an option is malformed or unknown
     * @throws dev.lattice.spi.ProviderUnavailableException if DynamoDB cannot be reached
     * @throws dev.lattice.spi.WalStorageException if the table is missing or has another key schema
     */
    @Override
    public WalStorageProvider open(URI uri, Map<String, String> options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        return DynamoDbWalStorageProvider.open(uri, options);
    }
}
