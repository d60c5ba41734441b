package dev.lattice.conformance;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.BatchTooLargeException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.EntryTooLargeException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderLimits;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The declared size limits ({@link ProviderLimits}): an entry or batch of exactly the limit round-trips; one byte or
 * one entry more is refused with {@link EntryTooLargeException} / {@link BatchTooLargeException} naming the limit,
 * before any I/O, and the log is unchanged.
 */
public abstract class LimitsContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected LimitsContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** An entry of exactly maxEntryBytes round-trips; one byte more is refused before any I/O. */
    @Test
    void entryAtMaxEntryBytesRoundTripsAndOneMoreByteIsRefused() throws Exception {
        ProviderLimits l = limits();
        assertThat(l.maxEntryBytes()).as("declared maxEntryBytes must be testable (declare the real limit)")
                .isLessThanOrEqualTo(MAX_TESTABLE_ENTRY_BYTES);
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        provider().append(log, f, batch(SEED, 0, 2, SMALL));
        LogSnapshot before = snapshot(provider(), log);

        EncodedBatch tooBig = EncodedBatch.of(2, BatchId.random(), List.of(randomBytes(SEED, l.maxEntryBytes() + 1)));
        Throwable t = catchThrowable(() -> provider().append(log, f, tooBig));
        assertThat(t).as("append of an entry of maxEntryBytes + 1 = %d bytes", l.maxEntryBytes() + 1L)
                .isInstanceOf(EntryTooLargeException.class);
        EntryTooLargeException e = (EntryTooLargeException) t;
        assertThat(e.limitBytes()).as("EntryTooLargeException.limitBytes() must be the declared maxEntryBytes")
                .isEqualTo(l.maxEntryBytes());
        assertThat(e.sizeBytes()).as("EntryTooLargeException.sizeBytes() must be the refused entry's size")
                .isEqualTo(l.maxEntryBytes() + 1L);
        assertThat(e).as("EntryTooLargeException's message must name the limit %d", l.maxEntryBytes())
                .hasMessageContaining(String.valueOf(l.maxEntryBytes()));
        assertUnchanged("after a refused oversized entry at offset 2", before, snapshot(provider(), log));

        EncodedBatch atMax = EncodedBatch.of(2, BatchId.random(), List.of(randomBytes(SEED + 1, l.maxEntryBytes())));
        provider().append(log, f, atMax);
        List<LogEntry> expected = new ArrayList<>(before.entries());
        expected.addAll(entriesOf(atMax));
        assertDurable(log, () -> assertLogHolds(provider(), log, expected, 2));
    }

    /** A batch of exactly maxEntriesPerBatch entries round-trips; one entry more is refused before any I/O. */
    @Test
    void batchAtMaxEntriesRoundTripsAndOneMoreEntryIsRefused() {
        ProviderLimits l = limits();
        assertThat(l.maxEntriesPerBatch()).as("declared maxEntriesPerBatch must be testable (declare the real limit)")
                .isLessThanOrEqualTo(MAX_TESTABLE_ENTRIES_PER_BATCH);
        int n = l.maxEntriesPerBatch();
        int size = (int) Math.min(8, Math.min(l.maxEntryBytes(), l.maxBatchBytes() / (n + 1L)));
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        LogSnapshot before = snapshot(provider(), log);

        EncodedBatch tooMany = batch(SEED, 0, n + 1, size);
        assertThatThrownBy(() -> provider().append(log, f, tooMany))
                .as("append of maxEntriesPerBatch + 1 = %d entries must throw BatchTooLargeException naming %d",
                        n + 1, n)
                .isInstanceOf(BatchTooLargeException.class)
                .hasMessageContaining(String.valueOf(n));
        assertUnchanged("after a refused batch of " + (n + 1) + " entries", before, snapshot(provider(), log));

        EncodedBatch full = batch(SEED + 1, 0, n, size);
        provider().append(log, f, full);
        assertLogHolds(provider(), log, entriesOf(full), n - 1);
    }

    /** A batch of exactly the largest reachable size (maxBatchBytes, or less when other limits cap it) round-trips. */
    @Test
    void batchAtMaxBatchBytesRoundTrips() {
        long reachable = reachableBatchBytes();
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch b = EncodedBatch.of(0, BatchId.random(), payloadsOf(reachable));
        assertThat(b.payloadBytes()).as("payload bytes of the batch built at the largest reachable size")
                .isEqualTo(reachable);
        provider().append(log, f, b);
        assertLogHolds(provider(), log, entriesOf(b), b.lastOffset());
    }

    /**
     * Variant for providers whose maxBatchBytes is reachable within the other limits: a batch of maxBatchBytes + 1
     * bytes that breaks no other limit is refused with BatchTooLargeException naming the limit, before any I/O.
     */
    @Test
    void batchOfOneByteMoreThanMaxBatchBytesIsRefused() {
        ProviderLimits l = limits();
        long reachable = reachableBatchBytes();
        Assumptions.assumeTrue(reachable == l.maxBatchBytes(), () -> "variant for a reachable maxBatchBytes; "
                + "maxEntryBytes x maxEntriesPerBatch = " + reachable + " is below maxBatchBytes " + l.maxBatchBytes()
                + ", so no batch can be one byte too large without breaking another limit");
        List<byte[]> over = payloadsOf(reachable);
        int lastIndex = over.size() - 1;
        if (over.get(lastIndex).length < l.maxEntryBytes()) {
            over.set(lastIndex, randomBytes(SEED + 99, over.get(lastIndex).length + 1));
        } else {
            over.add(new byte[] {1});
        }
        Assumptions.assumeTrue(over.size() <= l.maxEntriesPerBatch(), () -> "variant for a reachable maxBatchBytes; "
                + "one byte more than maxBatchBytes " + l.maxBatchBytes() + " needs " + over.size()
                + " entries, above maxEntriesPerBatch " + l.maxEntriesPerBatch());
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        LogSnapshot before = snapshot(provider(), log);
        EncodedBatch tooBig = EncodedBatch.of(0, BatchId.random(), over);
        assertThat(tooBig.payloadBytes()).as("payload bytes of the batch built one byte above maxBatchBytes")
                .isEqualTo(l.maxBatchBytes() + 1);
        assertThatThrownBy(() -> provider().append(log, f, tooBig))
                .as("append of maxBatchBytes + 1 = %d bytes must throw BatchTooLargeException naming %d",
                        l.maxBatchBytes() + 1, l.maxBatchBytes())
                .isInstanceOf(BatchTooLargeException.class)
                .hasMessageContaining(String.valueOf(l.maxBatchBytes()));
        assertUnchanged("after a refused batch of maxBatchBytes + 1 bytes", before, snapshot(provider(), log));
    }

    /**
     * Limits are checked before any I/O: an oversized batch is refused with the size exception even with a stale
     * fence or at an offset that would conflict, and a refused stage leaves nothing to commit.
     */
    @Test
    void limitsAreCheckedBeforeFenceAndOffsets() {
        ProviderLimits l = limits();
        assertThat(l.maxEntryBytes()).as("declared maxEntryBytes must be testable (declare the real limit)")
                .isLessThanOrEqualTo(MAX_TESTABLE_ENTRY_BYTES);
        LogId log = log(0);
        Fence stale = claimAndReconcile(provider(), log);
        Fence f = claimAndReconcile(provider(), log);
        provider().append(log, f, batch(SEED, 0, 3, SMALL));
        LogSnapshot before = snapshot(provider(), log);
        EncodedBatch tooBig = EncodedBatch.of(3, BatchId.random(), List.of(new byte[l.maxEntryBytes() + 1]));
        EncodedBatch tooBigWithGap = EncodedBatch.of(10, BatchId.random(), List.of(new byte[l.maxEntryBytes() + 1]));
        EncodedBatch tooBigOverlap = EncodedBatch.of(1, BatchId.random(), List.of(new byte[l.maxEntryBytes() + 1]));
        assertThatThrownBy(() -> provider().stage(log, stale, tooBig))
                .as("stage of an oversized entry with a stale fence must throw EntryTooLargeException, not Fenced")
                .isInstanceOf(EntryTooLargeException.class);
        assertThatThrownBy(() -> provider().stage(log, f, tooBigWithGap))
                .as("stage of an oversized entry at offset 10 (a gap) must throw EntryTooLargeException, not a"
                        + " conflict").isInstanceOf(EntryTooLargeException.class);
        assertThatThrownBy(() -> provider().stage(log, f, tooBigOverlap))
                .as("stage of an oversized entry at committed offset 1 must throw EntryTooLargeException, not a"
                        + " conflict").isInstanceOf(EntryTooLargeException.class);
        assertThatThrownBy(() -> provider().stage(log, f, tooBig))
                .as("stage of an oversized entry at offset 3 (the next offset) must throw EntryTooLargeException")
                .isInstanceOf(EntryTooLargeException.class);
        assertConflict("commit(3) after only refused stages at offset 3", () -> provider().commit(log, f, 3));
        assertUnchanged("after refused oversized stages", before, snapshot(provider(), log));
    }

    /** The largest batch the declared limits allow, checked to be testable. */
    private long reachableBatchBytes() {
        ProviderLimits l = limits();
        long reachable = Math.min(l.maxBatchBytes(), (long) l.maxEntryBytes() * l.maxEntriesPerBatch());
        assertThat(reachable).as("largest batch the declared limits allow must be testable (declare the real limits)")
                .isLessThanOrEqualTo(MAX_TESTABLE_BATCH_BYTES);
        return reachable;
    }

    /** Payloads of {@code total} bytes in pieces of at most maxEntryBytes (random, reproducible). */
    private List<byte[]> payloadsOf(long total) {
        int maxEntry = limits().maxEntryBytes();
        List<byte[]> out = new ArrayList<>();
        long left = total;
        int piece = 0;
        while (left > 0) {
            int len = (int) Math.min(left, maxEntry);
            out.add(randomBytes(SEED + ++piece, len));
            left -= len;
        }
        return out;
    }
}
