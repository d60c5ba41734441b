package dev.lattice.pekko.persistence;

/** Pekko's journal TCK on the Lattice journal over the Postgres provider. */
public class PostgresJournalSpec extends AbstractLatticeJournalTck {
    /** Runs on a fresh storage object. */
    public PostgresJournalSpec() {
        super(TestProviders.config(TestProviders.Kind.POSTGRES, "journal"));
    }
}
