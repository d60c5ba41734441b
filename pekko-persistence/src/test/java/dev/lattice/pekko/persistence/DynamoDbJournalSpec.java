package dev.lattice.pekko.persistence;

/** Pekko's journal TCK on the Lattice journal over the DynamoDb provider. */
public class DynamoDbJournalSpec extends AbstractLatticeJournalTck {
    /** Runs on a fresh storage object. */
    public DynamoDbJournalSpec() {
        super(TestProviders.config(TestProviders.Kind.DYNAMODB, "journal"));
    }
}
