package dev.lattice.conformance;

import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;

/**
 * Runs the conformance suite against the in-memory reference provider. Each test gets a fresh
 * {@link InMemoryStorage}; a reopen is a new {@link InMemoryWalStorageProvider} over the same storage object.
 */
class InMemoryConformanceTest extends WalStorageProviderConformanceTest {

    /**
     * A reopenable in-memory storage.
     *
     * @param limits the limits the provider declares and enforces
     * @return the storage
     */
    static ProviderUnderTest inMemoryStorage(ProviderLimits limits) {
        InMemoryStorage storage = new InMemoryStorage();
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                return new InMemoryWalStorageProvider(storage, limits);
            }

            @Override
            public void close() {
                // Dropping the last reference to the storage deletes it.
            }
        };
    }

    @Override
    protected ProviderUnderTest newStorage() {
        return inMemoryStorage(InMemoryWalStorageProvider.DEFAULT_LIMITS);
    }
}
