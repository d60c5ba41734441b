package dev.lattice.pekko.persistence;

/** Pekko's journal TCK on the Lattice journal over the Chronicle provider. */
public class ChronicleJournalSpec extends AbstractLatticeJournalTck {
    /** Runs on a fresh storage object. */
    public ChronicleJournalSpec() {
        super(TestProviders.config(TestProviders.Kind.CHRONICLE, "journal"));
    }
}
