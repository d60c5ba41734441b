package dev.lattice.pekko.persistence;

/** {@code JournalPerfSpec} on the Lattice journal over the Chronicle provider (only with {@code -Dlattice.pekko.perf}). */
public class ChronicleJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Runs on a fresh storage object. */
    public ChronicleJournalPerfSpec() {
        super(TestProviders.config(TestProviders.Kind.CHRONICLE, "perf"));
    }
}
