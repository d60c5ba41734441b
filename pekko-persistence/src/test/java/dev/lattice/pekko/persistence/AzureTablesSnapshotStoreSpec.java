package dev.lattice.pekko.persistence;

/** Pekko's snapshot store TCK on the Lattice snapshot store over the AzureTables provider. */
public class AzureTablesSnapshotStoreSpec extends AbstractLatticeSnapshotStoreTck {
    /** Runs on a fresh storage object. */
    public AzureTablesSnapshotStoreSpec() {
        super(TestProviders.config(TestProviders.Kind.AZURE_TABLES, "snapshots"));
    }
}
