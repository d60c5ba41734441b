package dev.lattice.provider.azure.blob;

import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.common.policy.RequestRetryOptions;
import com.azure.storage.common.policy.RetryPolicyType;
import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.testbackends.AzuriteServer;

import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * Test plumbing: service clients for the shared Azurite server (or a real account, see {@link #realAccount()})
 * with a {@link RequestLedger}, and one fresh container per storage. Not thread-safe.
 */
final class AzuriteBlobs {

    /** System property naming a real storage account's connection string (opt-in real-account mode). */
    static final String REAL_ACCOUNT_PROPERTY = "lattice.azure.blob.connectionString";

    private AzuriteBlobs() {
    }

    /** @return the real account's connection string, or null when the tests run on Azurite */
    static String realAccount() {
        String cs = System.getProperty(REAL_ACCOUNT_PROPERTY);
        return cs == null || cs.isBlank() ? null : cs;
    }

    /** @return the connection string of the backend under test (Azurite unless a real account is given) */
    static String connectionString() {
        String real = realAccount();
        return real != null ? real : AzuriteServer.shared().connectionString();
    }

    /**
     * A client whose every request passes the ledger.
     *
     * @param ledger counts and checks requests
     * @return the client
     */
    static BlobServiceClient client(RequestLedger ledger) {
        return new BlobServiceClientBuilder().connectionString(connectionString()).addPolicy(ledger)
                .retryOptions(new RequestRetryOptions(RetryPolicyType.EXPONENTIAL, 3, Duration.ofSeconds(30),
                        Duration.ofMillis(50), Duration.ofSeconds(1), null))
                .buildClient();
    }

    /** @return a ledger with the real service's limits (4 MiB blocks, 50,000 blocks per append blob) */
    static RequestLedger serviceLedger() {
        return new RequestLedger(AzureBlobConfig.SERVICE_MAX_BLOCK_BYTES_OLD,
                AzureBlobConfig.SERVICE_MAX_BLOCKS_PER_APPEND_BLOB);
    }

    /**
     * One fresh container; providers opened over it share it like processes sharing an account.
     */
    static final class Storage implements ProviderUnderTest {
        final BlobServiceClient client;
        final String container;
        private final UnaryOperator<AzureBlobConfig.Builder> tune;

        /**
         * @param client the service client
         * @param hint readable part of the container name
         * @param tune adjusts the configuration of every provider opened
         */
        Storage(BlobServiceClient client, String hint, UnaryOperator<AzureBlobConfig.Builder> tune) {
            this.client = client;
            this.container = AzuriteServer.uniqueContainerName(hint);
            this.tune = tune;
        }

        /** @return the configuration providers over this storage use */
        AzureBlobConfig config() {
            return tune.apply(AzureBlobConfig.builder(container)).build();
        }

        @Override
        public AzureBlobWalStorageProvider open() {
            return AzureBlobWalStorageProvider.open(client, config());
        }

        @Override
        public void close() {
            client.getBlobContainerClient(container).deleteIfExists();
        }
    }
}
