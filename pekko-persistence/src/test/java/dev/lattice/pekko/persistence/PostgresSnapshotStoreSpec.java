package dev.lattice.pekko.persistence;

/** Pekko's snapshot store TCK on the Lattice snapshot store over the Postgres provider. */
public class PostgresSnapshotStoreSpec extends AbstractLatticeSnapshotStoreTck {
    /** Runs on a fresh storage object. */
    public PostgresSnapshotStoreSpec() {
        super(TestProviders.config(TestProviders.Kind.POSTGRES, "snapshots"));
    }
}
