package dev.lattice.provider.dynamodb;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.WalStorageProviderConformanceTest;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;

import java.util.Optional;

/**
 * The conformance suite against dynalite started by the test run (loopback, in memory), or against a real endpoint
 * with {@code -Dlattice.dynamodb.endpoint=...} ({@link DynamoTestBackend}). Each test gets its own table (or key
 * prefix); a reopen is a new provider instance over it, and two open instances behave like two processes. Every
 * instance runs through {@code LimitEnforcingProvider} with DynamoDB's real limits ({@link #serviceLimits()}), and
 * every item the provider sends passes {@link CheckingDynamoDbClient}'s 400 KB check.
 */
class DynamoDbConformanceTest extends WalStorageProviderConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        DynamoTestBackend.Storage storage = DynamoTestBackend.newStorage("conformance");
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
    protected Optional<ProviderLimits> serviceLimits() {
        return Optional.of(DynamoTestBackend.SERVICE_LIMITS);
    }
}
