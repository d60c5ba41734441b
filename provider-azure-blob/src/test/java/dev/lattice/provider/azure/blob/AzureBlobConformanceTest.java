package dev.lattice.provider.azure.blob;

import dev.lattice.testkit.LimitEnforcingProvider;
import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.WalStorageProviderConformanceTest;
import dev.lattice.spi.ProviderLimits;
import org.junit.jupiter.api.AfterEach;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The full conformance suite against Azurite (or a real account with {@code -Dlattice.azure.blob.connectionString}),
 * with the default configuration (inline tail on), every provider wrapped in a {@link LimitEnforcingProvider} with
 * the real service's limits, and every HTTP request checked against them by a {@link RequestLedger}.
 */
class AzureBlobConformanceTest extends WalStorageProviderConformanceTest {

    /** The service's limits at the SPI level: a batch must fit one 4 MiB append block; 50,000 blocks per blob. */
    static final ProviderLimits SERVICE_LIMITS = LimitEnforcingProvider.serviceLimits()
            .maxEntryBytes(AzureBlobConfig.SERVICE_MAX_BLOCK_BYTES_OLD)
            .maxBatchBytes(AzureBlobConfig.SERVICE_MAX_BLOCK_BYTES_OLD)
            .maxCheckpointBytes((long) AzureBlobConfig.SERVICE_MAX_BLOCKS_PER_APPEND_BLOB
                    * AzureBlobConfig.SERVICE_MAX_BLOCK_BYTES_OLD)
            .build();

    private final RequestLedger ledger = AzuriteBlobs.serviceLedger();

    @Override
    protected ProviderUnderTest newStorage() {
        return new AzuriteBlobs.Storage(AzuriteBlobs.client(ledger), "conf", b -> b);
    }

    @Override
    protected Optional<ProviderLimits> serviceLimits() {
        return Optional.of(SERVICE_LIMITS);
    }

    @AfterEach
    void noRequestBrokeAServiceLimit() {
        assertThat(ledger.violations()).as("requests above the real service's limits").isEmpty();
    }
}
