package dev.lattice.provider.azure.tables;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.data.tables.TableServiceClient;
import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.WalStorageProviderConformanceTest;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;

/**
 * The conformance suite against a real Azure Storage account. Opt-in: not part of {@code mvn verify} (the name ends
 * in {@code IT}); run it with
 * <pre>
 * mvn -B -o -pl provider-azure-tables verify -Dtest='RealAccountConformanceIT*' \
 *     -Dlattice.azure.tables.connectionString='DefaultEndpointsProtocol=https;AccountName=...;AccountKey=...'
 * </pre>
 * Each test creates (and deletes) its own table {@code latticeit<random>}. Without the property every test fails
 * and says what to set (it never skips).
 */
class RealAccountConformanceIT extends WalStorageProviderConformanceTest {
    /** System property holding the account's connection string. */
    static final String PROPERTY = "lattice.azure.tables.connectionString";

    private static TableServiceClient client;
    private final List<ServiceLimitCheckingGateway> checkers = new ArrayList<>();

    private static synchronized TableServiceClient client() {
        if (client == null) {
            String cs = System.getProperty(PROPERTY);
            if (cs == null || cs.isBlank()) {
                throw new IllegalStateException("set -D" + PROPERTY + "=<storage account connection string> to run"
                        + " the suite against a real account");
            }
            client = AzuriteTables.build(cs);
        }
        return client;
    }

    @Override
    protected ProviderUnderTest newStorage() {
        TableServiceClient c = client();
        String table = "latticeit" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                ServiceLimitCheckingGateway checked = new ServiceLimitCheckingGateway(new SdkTableGateway(c, table));
                checkers.add(checked);
                return new AzureTablesWalStorageProvider(checked, table, Layout.DEFAULT, true);
            }

            @Override
            public void close() {
                c.deleteTable(table);
            }
        };
    }

    @Override
    protected Optional<ProviderLimits> serviceLimits() {
        return Optional.of(AzureTablesWalStorageProvider.LIMITS);
    }

    @AfterEach
    void noServiceLimitWasBroken() {
        for (ServiceLimitCheckingGateway c : checkers) {
            assertThat(c.violations()).isEmpty();
        }
        assertThat(AzuriteTables.oversizedRequests()).isEmpty();
    }
}
