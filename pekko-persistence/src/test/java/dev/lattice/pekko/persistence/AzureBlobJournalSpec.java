package dev.lattice.pekko.persistence;

/** Pekko's journal TCK on the Lattice journal over the AzureBlob provider. */
public class AzureBlobJournalSpec extends AbstractLatticeJournalTck {
    /** Runs on a fresh storage object. */
    public AzureBlobJournalSpec() {
        super(TestProviders.config(TestProviders.Kind.AZURE_BLOB, "journal"));
    }
}
