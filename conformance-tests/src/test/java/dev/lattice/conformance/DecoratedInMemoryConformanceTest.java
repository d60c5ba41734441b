package dev.lattice.conformance;

import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.CountingProvider;
import dev.lattice.testkit.LimitEnforcingProvider;

/**
 * Runs the whole conformance suite through the three decorators stacked over the in-memory provider (counting, then
 * fault injection with no rules armed, then limit enforcement with the provider's own limits): proves they are
 * transparent when idle, so engine tests can keep them in place.
 */
class DecoratedInMemoryConformanceTest extends WalStorageProviderConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        InMemoryStorage storage = new InMemoryStorage();
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                WalStorageProvider base = new InMemoryWalStorageProvider(storage);
                return new CountingProvider(new FaultInjectingProvider(
                        new LimitEnforcingProvider(base, InMemoryWalStorageProvider.DEFAULT_LIMITS), 1));
            }

            @Override
            public void close() {
                // nothing to delete
            }
        };
    }
}
