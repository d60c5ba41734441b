package dev.lattice.pekko.persistence;

/** {@code JournalPerfSpec} on the Lattice journal over the Postgres provider (only with {@code -Dlattice.pekko.perf}). */
public class PostgresJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Runs on a fresh storage object. */
    public PostgresJournalPerfSpec() {
        super(TestProviders.config(TestProviders.Kind.POSTGRES, "perf"));
    }
}
