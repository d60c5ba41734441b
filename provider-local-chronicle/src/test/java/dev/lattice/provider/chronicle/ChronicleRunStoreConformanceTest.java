package dev.lattice.provider.chronicle;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.conformance.RunStoreConformanceTest;

/**
 * Runs the shared run store suite against the Chronicle provider's {@link ChronicleRunStore}, each test in a fresh
 * temporary directory opened through the {@code chronicle:} URI factory with the default options.
 */
class ChronicleRunStoreConformanceTest extends RunStoreConformanceTest {

    @Override
    protected ProviderUnderTest newStorage() {
        return ChronicleConformanceTest.freshDirectory("chronicle-runs");
    }

    /** @return the bytes the store copies per file write (a run file is not split into backend items) */
    @Override
    protected int chunkBytes() {
        return ChronicleRunStore.CHUNK_BYTES;
    }
}
