package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderFeature;
import org.junit.jupiter.api.Test;

import static dev.lattice.conformance.WalTestSupport.randomStream;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * State accounting: retained counters exact through appends, trims, checkpoints and reopen; physical bytes known
 * and including checkpoints when {@link ProviderFeature#PHYSICAL_BYTES} is declared (a variant, skipped with the
 * reason for a provider that does not declare it).
 */
public abstract class AccountingContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected AccountingContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** retainedEntries and retainedPayloadBytes are exact through appends and trims; physicalBytes is sane. */
    @Test
    void countersAreExact() throws Exception {
        LogId log = log(0);
        assertThat(provider().state(log).physicalBytes()).as("physicalBytes of a never-written log").isZero();
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch a = variedBatch(SEED, 0, 20, 500);    // 0 + 500 + ... + 9500 = 95,000 bytes
        provider().append(log, f, a);
        LogState s = provider().state(log);
        assertThat(s.retainedEntries()).as("retained entries after appending 0..19").isEqualTo(20);
        assertThat(s.retainedPayloadBytes()).as("retained payload bytes after appending 95,000 bytes")
                .isEqualTo(95_000);
        assertThat(s.physicalBytes()).as("physicalBytes after an append: known (>= 0) or -1 (unknown)")
                .isGreaterThanOrEqualTo(-1);
        provider().trim(log, f, 9);
        s = provider().state(log);
        assertThat(s.retainedEntries()).as("retained entries after trim(9) of 0..19").isEqualTo(10);
        assertThat(s.retainedPayloadBytes()).as("retained payload bytes of 10..19 after trim(9)").isEqualTo(72_500);
        provider().checkpoints().publish(log, f, 19, 0, randomStream(SEED, 300_000));
        assertThat(provider().state(log).retainedPayloadBytes())
                .as("retained payload bytes must not count a checkpoint").isEqualTo(72_500);
        assertDurable(log, () -> {
            assertThat(provider().state(log).retainedEntries()).as("retained entries of 10..19").isEqualTo(10);
            assertThat(provider().state(log).retainedPayloadBytes()).as("retained payload bytes of 10..19")
                    .isEqualTo(72_500);
        });
    }

    /**
     * Variant for providers that declare {@link ProviderFeature#PHYSICAL_BYTES}: physicalBytes is positive once
     * entries are stored and includes checkpoints.
     */
    @Test
    void physicalBytesAreKnownAndIncludeCheckpoints() {
        assumeDeclared(ProviderFeature.PHYSICAL_BYTES, "its physicalBytes may be -1 (unknown), checked to be >= -1"
                + " in countersAreExact");
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        provider().append(log, f, variedBatch(SEED, 0, 20, 500));
        assertThat(provider().state(log).physicalBytes())
                .as("physicalBytes with PHYSICAL_BYTES declared, after appending 95,000 bytes").isGreaterThan(0);
        provider().trim(log, f, 9);
        provider().checkpoints().publish(log, f, 19, 0, randomStream(SEED, 300_000));
        assertThat(provider().state(log).physicalBytes())
                .as("physicalBytes with PHYSICAL_BYTES declared must include a 300,000-byte checkpoint")
                .isGreaterThanOrEqualTo(300_000);
    }

    /** A claimed, never-written log reports EMPTY with its epoch (physical bytes aside). */
    @Test
    void claimedEmptyLogState() {
        LogId log = log(0);
        Fence f = provider().claim(log);
        LogState s = provider().state(log);
        assertThat(new LogState(s.lowestOffset(), s.committedTail(), s.trimWatermark(), s.epoch(),
                s.retainedEntries(), s.retainedPayloadBytes(), 0))
                .as("state of a claimed, never-written log (physicalBytes aside) must be EMPTY with the claim's epoch")
                .isEqualTo(new LogState(0, -1, -1, f.epoch(), 0, 0, 0));
        assertThat(s.physicalBytes()).as("physicalBytes of a claimed, never-written log: >= 0 or -1")
                .isGreaterThanOrEqualTo(-1);
    }
}
