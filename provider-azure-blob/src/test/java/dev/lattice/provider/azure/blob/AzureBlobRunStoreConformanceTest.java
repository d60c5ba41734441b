package dev.lattice.provider.azure.blob;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.RunStoreConformanceTest;
import org.junit.jupiter.api.AfterEach;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The run store spec against Azurite with 1 MiB blocks (so the boundary tests cross block edges of a run) and an
 * 8 MiB run limit (so the at-the-limit case runs), every request checked against the real service's limits.
 */
class AzureBlobRunStoreConformanceTest extends RunStoreConformanceTest {

    static final int BLOCK = 1 << 20;

    private final RequestLedger ledger = AzuriteBlobs.serviceLedger();

    @Override
    protected ProviderUnderTest newStorage() {
        return new AzuriteBlobs.Storage(AzuriteBlobs.client(ledger), "runs",
                b -> b.maxBlockBytes(BLOCK).maxCheckpointBytes(8L << 20));
    }

    @Override
    protected int chunkBytes() {
        return BLOCK;
    }

    @AfterEach
    void noRequestBrokeAServiceLimit() {
        assertThat(ledger.violations()).as("requests above the real service's limits").isEmpty();
    }
}
