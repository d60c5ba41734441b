package dev.lattice.conformance;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.payload;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Append and read back: batches appended one after another, empty payloads and varied lengths read back byte-exact,
 * with the state's counters matching, also after reopen. The size limits are {@link LimitsContract}'s.
 */
public abstract class RoundTripContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected RoundTripContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** Batches appended one after another read back byte-exact, with the state's counters matching. */
    @Test
    void appendedBatchesReadBackByteExact() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> batches = appendBatches(provider(), f, 3, 5, 100);
        EncodedBatch varied = variedBatch(SEED, 15, 12, 37);
        provider().append(log, f, varied);
        batches.add(varied);
        List<LogEntry> expected = entriesOf(batches);
        assertThat(provider().state(log).trimWatermark()).as("trim watermark of a never-trimmed log").isEqualTo(-1);
        assertDurable(log, () -> assertLogHolds(provider(), log, expected, 26));
    }

    /** Empty payloads are entries like any other: stored, counted, read back empty. */
    @Test
    void emptyPayloadsRoundTrip() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch empties = EncodedBatch.of(0, BatchId.random(), List.of(new byte[0], new byte[0], new byte[0]));
        EncodedBatch mixed = EncodedBatch.of(3, BatchId.random(), List.of(new byte[0], payload(SEED, 4, 5),
                new byte[0]));
        provider().append(log, f, empties);
        provider().append(log, f, mixed);
        assertLogHolds(provider(), log, entriesOf(empties, mixed), 5);
        assertThat(provider().state(log).retainedPayloadBytes())
                .as("retained payload bytes of 5 empty entries and one of 5 bytes").isEqualTo(5);
        ReadPage one = provider().read(log, 0, 1, 1);
        assertThat(one.entries()).as("read(after 0, maxEntries 1) of a log of empty entries").hasSize(1);
        assertThat(one.entries().get(0).offset()).as("offset of the entry read after offset 0").isEqualTo(1);
        assertThat(one.entries().get(0).payload()).as("payload of the empty entry at offset 1").isEmpty();
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(empties, mixed), 5));
    }
}
