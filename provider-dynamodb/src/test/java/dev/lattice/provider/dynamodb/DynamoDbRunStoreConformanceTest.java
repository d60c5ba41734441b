package dev.lattice.provider.dynamodb;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.RunStoreConformanceTest;
import dev.lattice.spi.WalStorageProvider;

/**
 * The run store spec against dynalite started by the test run (or a real endpoint, see {@link DynamoTestBackend}):
 * each test gets its own table; boundary reads cross the provider's {@value DynamoDbSettings#DEFAULT_RUN_CHUNK_BYTES}-byte chunk
 * items exactly, and every item passes {@link CheckingDynamoDbClient}'s 400 KB check.
 */
class DynamoDbRunStoreConformanceTest extends RunStoreConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        DynamoTestBackend.Storage storage = DynamoTestBackend.newStorage("runs");
        CheckingDynamoDbClient client = DynamoTestBackend.checkingClient();
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                return DynamoDbWalStorageProvider.open(client, storage.settings());
            }

            @Override
            public void close() {
                storage.drop();
            }
        };
    }

    @Override
    protected int chunkBytes() {
        return DynamoDbSettings.DEFAULT_RUN_CHUNK_BYTES;
    }
}
