package dev.lattice.pekko.persistence;

/**
 * {@code JournalPerfSpec} on the Lattice journal over the AzureBlob provider (only with {@code -Dlattice.pekko.perf}),
 * on an Azurite process of its own (started with the spec, stopped after it), so the figures do not depend on what
 * other specs of the JVM left in a shared emulator.
 */
public class AzureBlobJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Runs on a fresh storage object of its own emulator. */
    public AzureBlobJournalPerfSpec() {
        this(TestProviders.privateEmulator(TestProviders.Kind.AZURE_BLOB));
    }

    private AzureBlobJournalPerfSpec(AutoCloseable emulator) {
        super(TestProviders.config(TestProviders.fresh(TestProviders.Kind.AZURE_BLOB, "perf", emulator)), emulator);
    }
}
