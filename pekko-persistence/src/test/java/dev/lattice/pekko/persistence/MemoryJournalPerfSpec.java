package dev.lattice.pekko.persistence;

/** {@code JournalPerfSpec} on the Lattice journal over the Memory provider (only with {@code -Dlattice.pekko.perf}). */
public class MemoryJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Runs on a fresh storage object. */
    public MemoryJournalPerfSpec() {
        super(TestProviders.config(TestProviders.Kind.MEMORY, "perf"));
    }
}
