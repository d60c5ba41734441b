package dev.lattice.provider.azure.tables;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.RunStoreConformanceTest;
import dev.lattice.testbackends.AzuriteExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The run store spec against Azurite, every request checked against the service's per-request limits by
 * {@link ServiceLimitCheckingGateway}; the boundary tests read across the chunk rows' edges
 * ({@link TablesRunStore#runLayout}).
 */
@ExtendWith(AzuriteExtension.class)
class AzureTablesRunStoreConformanceTest extends RunStoreConformanceTest {

    private final List<ServiceLimitCheckingGateway> checkers = new ArrayList<>();

    @Override
    protected ProviderUnderTest newStorage() {
        return AzureTablesConformanceTest.freshTable("runs", checkers);
    }

    @Override
    protected int chunkBytes() {
        return TablesRunStore.runLayout(Layout.DEFAULT).rowBytes();
    }

    @AfterEach
    void noServiceLimitWasBroken() {
        for (ServiceLimitCheckingGateway c : checkers) {
            assertThat(c.violations()).as("requests above the Azure Table service's limits").isEmpty();
        }
        assertThat(AzuriteTables.oversizedRequests()).as("request bodies above 4 MiB").isEmpty();
    }
}
