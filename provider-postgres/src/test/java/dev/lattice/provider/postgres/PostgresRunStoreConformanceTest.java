package dev.lattice.provider.postgres;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.RunStoreConformanceTest;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.extension.ExtendWith;

import java.sql.SQLException;

/**
 * The run store spec against a real PostgreSQL ({@link PostgresTestServer}); each test gets a fresh schema, a reopen
 * is a new provider instance (new pool) over the same schema. Boundary tests read across
 * {@link PostgresRunStore#CHUNK_BYTES} multiples.
 */
@ExtendWith(PostgresTestServer.class)
class PostgresRunStoreConformanceTest extends RunStoreConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        String schema = PostgresTestServer.newSchema();
        PostgresTestServer.Server server = PostgresTestServer.server();
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                return PostgresWalStorageProvider.open(server.providerUri(schema), server.options());
            }

            @Override
            public boolean supportsConcurrentInstances() {
                return true;
            }

            @Override
            public void close() throws SQLException {
                PostgresTestServer.dropSchema(schema);
            }
        };
    }

    @Override
    protected int chunkBytes() {
        return PostgresRunStore.CHUNK_BYTES;
    }
}
