package dev.lattice.conformance;

import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.InjectedFaultException;
import dev.lattice.testkit.LimitEnforcingProvider;
import dev.lattice.testkit.SpiOperation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;

import java.util.Optional;

/**
 * The Lattice provider conformance suite (TCK). A provider's test extends this class and supplies
 * {@link #newStorage()}; every test then runs against a fresh, isolated storage of that provider:
 *
 * <pre>{@code
 * class MyProviderConformanceTest extends WalStorageProviderConformanceTest {
 *     protected ProviderUnderTest newStorage() { return new MyStorage(tempDir()); }
 * }
 * }</pre>
 *
 * <p>The tests live in one file per part of the contract of {@link WalStorageProvider} and {@link CheckpointStore}
 * (the {@code *Contract} classes of this package, e.g. {@link TwoPhaseContract}); this class runs each of them as a
 * {@link Nested} group named after the contract ({@code WalStorageProviderConformanceTest$TwoPhase}), all sharing
 * one {@link ConformanceFixture}. Each test opens a provider with {@link ProviderUnderTest#open()}, may reopen it
 * (close, then open again over the same storage) to check durability, and closes everything at the end. No test
 * depends on timing; waits on other threads are bounded by {@link ConformanceContract#HANG_GUARD_SECONDS} only to
 * turn a deadlock into a failure.
 *
 * <p>Where the SPI Javadoc allows two behaviours (a stale stage refused at once or at commit; a staged batch lost on
 * close under {@link ProviderFeature#DEFERRED_STAGE}; an uncommitted batch rolled back or rolled forward), the suite
 * accepts exactly those and nothing else (never a part of a batch). Behaviour that depends on a declared feature or
 * on the declared limits is tested by named variants; a variant that does not apply to the provider is reported as
 * skipped with the reason. Where the Javadoc is ambiguous the suite takes the strict reading; docs/conformance.md
 * lists those choices.
 *
 * <p>Sizes are bounded so the whole suite takes seconds on the in-memory provider and a few minutes on a remote one;
 * limit tests use the provider's declared limits as long as they are within
 * {@link ConformanceContract#MAX_TESTABLE_ENTRY_BYTES}, {@link ConformanceContract#MAX_TESTABLE_BATCH_BYTES} and
 * {@link ConformanceContract#MAX_TESTABLE_ENTRIES_PER_BATCH}, and fail with a clear message above them (declare the
 * real limits).
 *
 * <p>Not thread-safe (JUnit creates one instance per test).
 */
public abstract class WalStorageProviderConformanceTest {

    private final ConformanceFixture fixture = new ConformanceFixture(this::newStorage, this::serviceLimits);

    /**
     * Creates a fresh, empty, isolated storage for the provider under test. Called once per test, before it runs;
     * the suite closes it after the test.
     *
     * @return the storage
     * @throws Exception when it cannot be created (the test fails)
     */
    protected abstract ProviderUnderTest newStorage() throws Exception;

    /**
     * The limits of the real service behind the provider, when they are stricter than what the test backend (an
     * emulator) enforces. When present, every provider instance the suite opens is wrapped in a
     * {@link LimitEnforcingProvider} with these limits, so a call the real service would refuse fails the test
     * instead of passing on a lenient emulator, and {@code Describe.declaredLimitsAreTestable} also checks that the
     * declared limits do not exceed them.
     *
     * @return the service limits; empty (the default) to run the provider undecorated
     */
    protected Optional<ProviderLimits> serviceLimits() {
        return Optional.empty();
    }

    /**
     * The fixture every group of this test instance works through.
     *
     * @return the fixture; its storage is open only while a test runs
     */
    protected final ConformanceFixture fixture() {
        return fixture;
    }

    /**
     * The storage of the running test.
     *
     * @return the storage {@link #newStorage()} returned for this test
     */
    protected final ProviderUnderTest storage() {
        return fixture.storage();
    }

    @BeforeEach
    void openStorageAndProvider() throws Exception {
        fixture.open();
    }

    @AfterEach
    void closeProvidersAndStorage() throws Exception {
        fixture.close();
    }

    /** Runs {@link DescribeContract}. */
    @Nested
    class Describe extends DescribeContract {
        Describe() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link RoundTripContract}. */
    @Nested
    class RoundTrip extends RoundTripContract {
        RoundTrip() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link LimitsContract}. */
    @Nested
    class Limits extends LimitsContract {
        Limits() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link DensityContract}. */
    @Nested
    class Density extends DensityContract {
        Density() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link TwoPhaseContract}. */
    @Nested
    class TwoPhase extends TwoPhaseContract {
        TwoPhase() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link IdempotentRetryContract}. */
    @Nested
    class IdempotentRetry extends IdempotentRetryContract {
        IdempotentRetry() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link FencingContract}. */
    @Nested
    class Fencing extends FencingContract {
        Fencing() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link TailMonotonicityContract}. */
    @Nested
    class TailMonotonicity extends TailMonotonicityContract {
        TailMonotonicity() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link ReadSemanticsContract}. */
    @Nested
    class ReadSemantics extends ReadSemanticsContract {
        ReadSemantics() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link TrimContract}. */
    @Nested
    class Trim extends TrimContract {
        Trim() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link TrimUnderLoadContract}. */
    @Nested
    class TrimUnderLoad extends TrimUnderLoadContract {
        TrimUnderLoad() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link OffsetLimitsContract}. */
    @Nested
    class OffsetLimits extends OffsetLimitsContract {
        OffsetLimits() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link CheckpointStoreContract}. */
    @Nested
    class Checkpoints extends CheckpointStoreContract {
        Checkpoints() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link IsolationContract}. */
    @Nested
    class Isolation extends IsolationContract {
        Isolation() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link AccountingContract}. */
    @Nested
    class Accounting extends AccountingContract {
        Accounting() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link ArgumentValidationContract}. */
    @Nested
    class ArgumentValidation extends ArgumentValidationContract {
        ArgumentValidation() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link ClosedProviderContract}. */
    @Nested
    class ClosedProvider extends ClosedProviderContract {
        ClosedProvider() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link ConcurrencyContract}. */
    @Nested
    class Concurrency extends ConcurrencyContract {
        Concurrency() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link DropContract}. */
    @Nested
    class Drop extends DropContract {
        Drop() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }

    /** Runs {@link FaultsContract}. */
    @Nested
    class Faults extends FaultsContract {
        Faults() {
            super(WalStorageProviderConformanceTest.this.fixture());
        }
    }
}
