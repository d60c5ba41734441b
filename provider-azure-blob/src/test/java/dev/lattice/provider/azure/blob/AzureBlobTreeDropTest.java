package dev.lattice.provider.azure.blob;

import dev.lattice.engine.Lattice;
import dev.lattice.testbackends.AzuriteExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 18: {@code Lattice.dropTree} on Azure Blob (Azurite) leaves nothing of the tree on the provider:
 * no log listed, no run, no checkpoint, no entry, durably; the other tree is kept.
 */
@ExtendWith(AzuriteExtension.class)
class AzureBlobTreeDropTest {

    @Test
    void dropTreeLeavesNothingOnTheProvider() throws Exception {
        dev.lattice.engine.TreeDropScenario.dropTreeLeavesNothingOnTheProvider(new AzuriteBlobs.Storage(AzuriteBlobs.client(AzuriteBlobs.serviceLedger()), "drop", b -> b));
    }
}
