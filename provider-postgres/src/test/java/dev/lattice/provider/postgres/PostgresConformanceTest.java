package dev.lattice.provider.postgres;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.WalStorageProviderConformanceTest;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.extension.ExtendWith;

import java.sql.SQLException;

/**
 * The conformance suite against a real PostgreSQL ({@link PostgresTestServer}: embedded by default, or the server
 * named by {@code -Dlattice.postgres.url}). Each test gets a fresh schema; a reopen is a new provider instance (new
 * pool) over the same schema, and two open instances behave like two processes.
 */
@ExtendWith(PostgresTestServer.class)
class PostgresConformanceTest extends WalStorageProviderConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        return freshSchema();
    }

    /** A fresh schema on the test server; closing it drops the schema. Shared with the run store spec. */
    static ProviderUnderTest freshSchema() {
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
}
