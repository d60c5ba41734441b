package dev.lattice.pekko.persistence;

/**
 * {@code JournalPerfSpec} on the Lattice journal over the DynamoDb provider (only with {@code -Dlattice.pekko.perf}),
 * on a dynalite process of its own (started with the spec, stopped after it), so the figures do not depend on what
 * other specs of the JVM left in a shared emulator.
 */
public class DynamoDbJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Runs on a fresh storage object of its own emulator. */
    public DynamoDbJournalPerfSpec() {
        this(TestProviders.privateEmulator(TestProviders.Kind.DYNAMODB));
    }

    private DynamoDbJournalPerfSpec(AutoCloseable emulator) {
        super(TestProviders.config(TestProviders.fresh(TestProviders.Kind.DYNAMODB, "perf", emulator)), emulator);
    }
}
