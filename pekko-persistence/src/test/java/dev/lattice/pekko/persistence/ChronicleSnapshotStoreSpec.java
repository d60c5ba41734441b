package dev.lattice.pekko.persistence;

/** Pekko's snapshot store TCK on the Lattice snapshot store over the Chronicle provider. */
public class ChronicleSnapshotStoreSpec extends AbstractLatticeSnapshotStoreTck {
    /** Runs on a fresh storage object. */
    public ChronicleSnapshotStoreSpec() {
        super(TestProviders.config(TestProviders.Kind.CHRONICLE, "snapshots"));
    }
}
