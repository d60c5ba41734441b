package dev.lattice.provider.postgres;

import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.WalStorageProviderFactory;

import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * ServiceLoader factory for scheme {@code postgres}: {@code postgres://host[:port]/database?user=...&schema=...};
 * {@code postgresql://...} and JDBC URLs {@code jdbc:postgresql://...} are accepted too.
 * See {@link PostgresWalStorageProvider#open(URI, Map)} for the options. Thread-safe.
 */
public final class PostgresProviderFactory implements WalStorageProviderFactory {

    /** Creates the factory (ServiceLoader needs a public no-argument constructor). */
    public PostgresProviderFactory() {
    }

    @Override
    public String scheme() {
        return "postgres";
    }

    /** @return {@code postgresql}, so {@code postgresql://} and {@code jdbc:postgresql://} URIs open this provider */
    @Override
    public Set<String> aliases() {
        return Set.of("postgresql");
    }

    @Override
    public String description() {
        return "PostgreSQL via Jdbi + pgjdbc: postgres://host[:port]/database?user=...&schema=... "
                + "(also postgresql:// and jdbc:postgresql://; password: option 'password' or PGPASSWORD)";
    }

    /**
     * Opens a provider with its own connection pool.
     *
     * @param uri {@code postgres://host[:port]/database?...}
     * @param options further options, winning over the URI's query (may hold {@code password})
     * @return the open provider
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the URI or an option is malformed or unknown
     * @throws dev.lattice.spi.ProviderUnavailableException if the server cannot be reached
     * @throws dev.lattice.spi.WalStorageException on any other failure to open
     */
    @Override
    public WalStorageProvider open(URI uri, Map<String, String> options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        return PostgresWalStorageProvider.open(uri, options);
    }
}
