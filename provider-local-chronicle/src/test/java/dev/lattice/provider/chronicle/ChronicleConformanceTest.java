package dev.lattice.provider.chronicle;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.WalStorageProviderConformanceTest;
import dev.lattice.spi.WalStorageProvider;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

/**
 * Runs the shared conformance suite against the Chronicle provider, each test in a fresh temporary directory opened
 * through the {@code chronicle:} URI factory with the default options.
 */
class ChronicleConformanceTest extends WalStorageProviderConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        return freshDirectory("chronicle-conformance");
    }

    /** A fresh temporary directory opened with the default options; closing it deletes the directory. */
    static ProviderUnderTest freshDirectory(String prefix) {
        Path dir = TestDirs.create(prefix);
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                return new ChronicleProviderFactory().open(URI.create("chronicle:" + dir), Map.of());
            }

            @Override
            public boolean supportsConcurrentInstances() {
                return false; // the provider locks its directory exclusively
            }

            @Override
            public void close() {
                TestDirs.delete(dir);
            }
        };
    }
}
