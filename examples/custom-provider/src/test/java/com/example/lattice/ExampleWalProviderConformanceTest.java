package com.example.lattice;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.WalStorageProviderConformanceTest;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;

/** Runs Lattice's whole conformance suite on {@link ExampleWalProvider}. */
class ExampleWalProviderConformanceTest extends WalStorageProviderConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        InMemoryStorage storage = new InMemoryStorage();      // fresh and isolated for every test
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                return new ExampleWalProvider(storage);       // called again after close() = "reopen"
            }

            @Override
            public boolean supportsConcurrentInstances() {
                return true;                                  // false e.g. if the provider takes an exclusive lock
            }

            @Override
            public void close() {
                // nothing to delete: the storage goes with the object (a disk provider deletes its temp dir here)
            }
        };
    }
}
