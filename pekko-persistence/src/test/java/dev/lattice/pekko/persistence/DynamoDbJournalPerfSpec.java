package dev.lattice.pekko.persistence;

/** {@code JournalPerfSpec} on the Lattice journal over the DynamoDb provider (only with {@code -Dlattice.pekko.perf}). */
public class DynamoDbJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Runs on a fresh storage object. */
    public DynamoDbJournalPerfSpec() {
        super(TestProviders.config(TestProviders.Kind.DYNAMODB, "perf"));
    }
}
