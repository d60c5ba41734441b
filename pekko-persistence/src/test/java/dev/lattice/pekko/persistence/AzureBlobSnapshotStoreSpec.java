package dev.lattice.pekko.persistence;

/** Pekko's snapshot store TCK on the Lattice snapshot store over the AzureBlob provider. */
public class AzureBlobSnapshotStoreSpec extends AbstractLatticeSnapshotStoreTck {
    /** Runs on a fresh storage object. */
    public AzureBlobSnapshotStoreSpec() {
        super(TestProviders.config(TestProviders.Kind.AZURE_BLOB, "snapshots"));
    }
}
