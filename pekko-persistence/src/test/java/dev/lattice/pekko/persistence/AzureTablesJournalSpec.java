package dev.lattice.pekko.persistence;

/** Pekko's journal TCK on the Lattice journal over the AzureTables provider. */
public class AzureTablesJournalSpec extends AbstractLatticeJournalTck {
    /** Runs on a fresh storage object. */
    public AzureTablesJournalSpec() {
        super(TestProviders.config(TestProviders.Kind.AZURE_TABLES, "journal"));
    }
}
