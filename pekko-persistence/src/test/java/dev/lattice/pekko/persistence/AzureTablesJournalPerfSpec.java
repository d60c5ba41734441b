package dev.lattice.pekko.persistence;

/** {@code JournalPerfSpec} on the Lattice journal over the AzureTables provider (only with {@code -Dlattice.pekko.perf}). */
public class AzureTablesJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Runs on a fresh storage object. */
    public AzureTablesJournalPerfSpec() {
        super(TestProviders.config(TestProviders.Kind.AZURE_TABLES, "perf"));
    }
}
