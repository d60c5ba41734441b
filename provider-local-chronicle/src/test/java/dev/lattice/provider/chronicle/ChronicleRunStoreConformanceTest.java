package dev.lattice.provider.chronicle;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.RunStoreConformanceTest;
import dev.lattice.spi.WalStorageProvider;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

/**
 * Runs the shared run store suite against the Chronicle provider's {@link ChronicleRunStore}, each test in a fresh
 * temporary directory opened through the {@code chronicle:} URI factory with the default options.
 */
class ChronicleRunStoreConformanceTest extends RunStoreConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        Path dir = TestDirs.create("chronicle-runs");
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

    /** @return the bytes the store copies per file write (a run file is not split into backend items) */
    @Override
    protected int chunkBytes() {
        return ChronicleRunStore.CHUNK_BYTES;
    }
}
