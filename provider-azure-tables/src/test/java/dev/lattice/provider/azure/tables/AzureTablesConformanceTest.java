package dev.lattice.provider.azure.tables;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.WalStorageProviderConformanceTest;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testbackends.AzuriteExtension;
import dev.lattice.testbackends.AzuriteServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The full conformance suite against Azurite. Every table request goes through {@link ServiceLimitCheckingGateway}
 * (the real service's per-request limits, which Azurite does not all enforce) and every request body through the
 * 4 MiB check of {@link AzuriteTables}; each test gets its own table.
 */
@ExtendWith(AzuriteExtension.class)
class AzureTablesConformanceTest extends WalStorageProviderConformanceTest {

    private final List<ServiceLimitCheckingGateway> checkers = new ArrayList<>();

    @Override
    protected ProviderUnderTest newStorage() {
        return freshTable("conf", checkers);
    }

    /**
     * A fresh table on Azurite; every instance opened over it checks requests against the service's limits and adds
     * its checker to {@code checkers}; closing it drops the table. Shared with the run store spec.
     */
    static ProviderUnderTest freshTable(String prefix, List<ServiceLimitCheckingGateway> checkers) {
        String table = AzuriteServer.uniqueTableName(prefix);
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                AzuriteTables.Opened opened = AzuriteTables.open(table, Layout.DEFAULT);
                checkers.add(opened.checked());
                return opened.provider();
            }

            @Override
            public void close() {
                AzuriteTables.drop(table);
            }
        };
    }

    /**
     * At the SPI level the service bounds nothing this provider could exceed (a batch spans as many transactions as
     * it needs); the hook holds the provider to the limits it declares, derived from the service's: 4 MiB per entry,
     * 8 MiB per batch (at most three 4 MiB transactions), 1 GiB per checkpoint. The per-request limits are enforced
     * by {@link ServiceLimitCheckingGateway} on every call.
     */
    @Override
    protected Optional<ProviderLimits> serviceLimits() {
        return Optional.of(AzureTablesWalStorageProvider.LIMITS);
    }

    @AfterEach
    void noServiceLimitWasBroken() {
        for (ServiceLimitCheckingGateway c : checkers) {
            assertThat(c.violations()).as("requests above the Azure Table service's limits").isEmpty();
        }
        assertThat(AzuriteTables.oversizedRequests()).as("request bodies above 4 MiB").isEmpty();
    }
}
