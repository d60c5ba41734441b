package dev.lattice.pekko.persistence;

/** Pekko's snapshot store TCK on the Lattice snapshot store over the Memory provider. */
public class MemorySnapshotStoreSpec extends AbstractLatticeSnapshotStoreTck {
    /** Runs on a fresh storage object. */
    public MemorySnapshotStoreSpec() {
        super(TestProviders.config(TestProviders.Kind.MEMORY, "snapshots"));
    }
}
