package dev.lattice.conformance;

import dev.lattice.spi.ProviderLimits;
import dev.lattice.testkit.LimitEnforcingProvider;

import java.util.Optional;

/**
 * Runs the suite with {@link #serviceLimits()} set: the in-memory provider configured with small limits (as a
 * provider for a strict cloud service would declare them) behind a {@link LimitEnforcingProvider} holding it to the
 * same "service" limits. Proves that the hook wraps every instance and that the boundary tests then run at the
 * service's limits.
 */
class ServiceLimitsHookTest extends WalStorageProviderConformanceTest {

    private static final ProviderLimits SERVICE = new ProviderLimits(64 << 10, 1 << 20, 500, 8 << 20);

    @Override
    protected Optional<ProviderLimits> serviceLimits() {
        return Optional.of(SERVICE);
    }

    @Override
    protected ProviderUnderTest newStorage() {
        return InMemoryConformanceTest.inMemoryStorage(SERVICE);
    }
}
