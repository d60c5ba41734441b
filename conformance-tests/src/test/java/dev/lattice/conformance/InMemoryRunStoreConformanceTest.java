package dev.lattice.conformance;

import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;

/** The run store spec on the in-memory provider. */
class InMemoryRunStoreConformanceTest extends RunStoreConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        InMemoryStorage storage = new InMemoryStorage();
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                return new InMemoryWalStorageProvider(storage);
            }

            @Override
            public void close() {
            }
        };
    }
}
