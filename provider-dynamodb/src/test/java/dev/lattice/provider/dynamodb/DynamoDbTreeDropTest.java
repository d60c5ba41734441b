package dev.lattice.provider.dynamodb;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.engine.Lattice;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;

/**
 * Issue 18: {@code Lattice.dropTree} on DynamoDB (dynalite) leaves nothing of the tree on the provider:
 * no log listed, no run, no checkpoint, no entry, durably; the other tree is kept.
 */
class DynamoDbTreeDropTest {

    private static ProviderUnderTest dynamoStorage() {
        DynamoTestBackend.Storage storage = DynamoTestBackend.newStorage("drop");
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

    @Test
    void dropTreeLeavesNothingOnTheProvider() throws Exception {
        dev.lattice.engine.TreeDropScenario.dropTreeLeavesNothingOnTheProvider(dynamoStorage());
    }
}
