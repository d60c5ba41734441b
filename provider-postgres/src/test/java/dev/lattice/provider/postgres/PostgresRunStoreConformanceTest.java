package dev.lattice.provider.postgres;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.RunStoreConformanceTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The run store spec against a real PostgreSQL ({@link PostgresTestServer}); each test gets a fresh schema, a reopen
 * is a new provider instance (new pool) over the same schema. Boundary tests read across
 * {@link PostgresRunStore#CHUNK_BYTES} multiples.
 */
@ExtendWith(PostgresTestServer.class)
class PostgresRunStoreConformanceTest extends RunStoreConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        return PostgresConformanceTest.freshSchema();
    }

    @Override
    protected int chunkBytes() {
        return PostgresRunStore.CHUNK_BYTES;
    }
}
