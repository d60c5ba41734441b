package dev.lattice.engine;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.provider.chronicle.ChronicleProviderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18: {@code Lattice.dropTree} on Chronicle leaves nothing of the tree on the provider:
 * no log listed, no run, no checkpoint, no entry, durably; the other tree is kept.
 */
class ChronicleTreeDropTest {

    @TempDir
    java.nio.file.Path dir;

    private ProviderUnderTest chronicleStorage() {
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                return new ChronicleProviderFactory().open(java.net.URI.create("chronicle:" + dir.resolve("data")),
                        java.util.Map.of());
            }

            @Override
            public void close() {
            }
        };
    }

    @Test
    void dropTreeLeavesNothingOnTheProvider() throws Exception {
        TreeDropScenario.dropTreeLeavesNothingOnTheProvider(chronicleStorage());
    }
}
