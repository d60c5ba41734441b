package dev.lattice.pekko.persistence;

/** Pekko's journal TCK on the Lattice journal over the Memory provider. */
public class MemoryJournalSpec extends AbstractLatticeJournalTck {
    /** Runs on a fresh storage object. */
    public MemoryJournalSpec() {
        super(TestProviders.config(TestProviders.Kind.MEMORY, "journal"));
    }
}
