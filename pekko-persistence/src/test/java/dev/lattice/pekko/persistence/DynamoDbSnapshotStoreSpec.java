package dev.lattice.pekko.persistence;

/** Pekko's snapshot store TCK on the Lattice snapshot store over the DynamoDb provider. */
public class DynamoDbSnapshotStoreSpec extends AbstractLatticeSnapshotStoreTck {
    /** Runs on a fresh storage object. */
    public DynamoDbSnapshotStoreSpec() {
        super(TestProviders.config(TestProviders.Kind.DYNAMODB, "snapshots"));
    }
}
