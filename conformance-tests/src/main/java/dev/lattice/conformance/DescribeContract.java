package dev.lattice.conformance;

import dev.lattice.testkit.LimitEnforcingProvider;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.RunStore;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The descriptor: present, constant, sane, available after close. */
public abstract class DescribeContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected DescribeContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** describe() returns a complete descriptor, the same on every call, also after close. */
    @Test
    void descriptorIsCompleteAndConstant() {
        ProviderDescriptor d = provider().describe();
        assertThat(d.name()).as("describe().name() must be set").isNotBlank();
        assertThat(d.version()).as("describe().version() must be set").isNotBlank();
        assertThat(d.limits().maxBatchBytes()).as("maxBatchBytes must be at least maxEntryBytes %d",
                d.limits().maxEntryBytes()).isGreaterThanOrEqualTo(d.limits().maxEntryBytes());
        assertThat(provider().describe()).as("describe() must return the same descriptor on every call")
                .isEqualTo(d);
        provider().close();
        assertThat(provider().describe()).as("describe() must work after close and return the same descriptor")
                .isEqualTo(d);
    }

    /**
     * The declared limits leave room for the suite's ordinary tests (entries up to {@link #MIN_ENTRY_BYTES} bytes,
     * batches up to {@link #MIN_ENTRIES_PER_BATCH} entries and {@link #MIN_BATCH_BYTES} bytes, checkpoints up
     * to {@link #MIN_CHECKPOINT_BYTES} bytes).
     */
    @Test
    void declaredLimitsFitTheSuite() {
        ProviderLimits l = limits();
        assertThat(l.maxEntryBytes()).as("declared maxEntryBytes must leave room for the suite's ordinary tests")
                .isGreaterThanOrEqualTo(MIN_ENTRY_BYTES);
        assertThat(l.maxBatchBytes()).as("declared maxBatchBytes must leave room for the suite's ordinary tests")
                .isGreaterThanOrEqualTo(MIN_BATCH_BYTES);
        assertThat(l.maxEntriesPerBatch())
                .as("declared maxEntriesPerBatch must leave room for the suite's ordinary tests")
                .isGreaterThanOrEqualTo(MIN_ENTRIES_PER_BATCH);
        assertThat(l.maxCheckpointBytes())
                .as("declared maxCheckpointBytes must leave room for the suite's ordinary tests")
                .isGreaterThanOrEqualTo(MIN_CHECKPOINT_BYTES);
    }

    /** The declared limits are within what the suite can test, so every boundary below is really exercised. */
    @Test
    void declaredLimitsAreTestable() {
        ProviderLimits l = limits();
        assertThat(l.maxEntryBytes()).as("declared maxEntryBytes (declare the real limit)")
                .isLessThanOrEqualTo(MAX_TESTABLE_ENTRY_BYTES);
        assertThat(Math.min(l.maxBatchBytes(), (long) l.maxEntryBytes() * l.maxEntriesPerBatch()))
                .as("largest batch that fits the declared limits (declare the real limit)")
                .isLessThanOrEqualTo(MAX_TESTABLE_BATCH_BYTES);
        assertThat(l.maxEntriesPerBatch()).as("declared maxEntriesPerBatch (declare the real limit)")
                .isLessThanOrEqualTo(MAX_TESTABLE_ENTRIES_PER_BATCH);
        fixture().serviceLimits().ifPresent(service -> LimitEnforcingProvider.assertWithin(l, service));
    }

    /**
     * A provider that declares {@link ProviderFeature#RUNS} serves its run store from {@code runs()}: the engine
     * flushes through it as soon as it sees the feature (a provider that forwards {@code describe()} to a delegate
     * but not {@code runs()} fails here). Run {@link RunStoreConformanceTest} on that store too.
     */
    @Test
    void aDeclaredRunStoreIsServed() {
        ProviderDescriptor d = provider().describe();
        Assumptions.assumeTrue(d.has(ProviderFeature.RUNS), "variant for providers that declare RUNS; this one "
                + "declares " + d.features());
        RunStore[] runs = new RunStore[1];
        Throwable t = catchThrowable(() -> runs[0] = provider().runs());
        assertThat(t).as("describe() declares RUNS, so runs() must return the run store").isNull();
        assertThat(runs[0]).as("describe() declares RUNS, so runs() must return the run store").isNotNull();
    }
}
