package dev.lattice.pekko.persistence;

/** {@code JournalPerfSpec} on the Lattice journal over the AzureBlob provider (only with {@code -Dlattice.pekko.perf}). */
public class AzureBlobJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Runs on a fresh storage object. */
    public AzureBlobJournalPerfSpec() {
        super(TestProviders.config(TestProviders.Kind.AZURE_BLOB, "perf"));
    }
}
