package dev.lattice.conformance;

import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;

/**
 * Runs the conformance suite against the in-memory reference provider. Each test gets a fresh
 * {@link InMemoryStorage}; a reopen is a new {@link InMemoryWalStorageProvider} over the same storage object.
 */
class InMemoryConformanceTest extends WalStorageProviderConformanceTest {

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
                // Dropping the last reference to the storage deletes it.
            }
        };
    }
}
