package dev.lattice.conformance;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.checkPage;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.payload;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;

/** read: bounds, limits, paging, past the tail, never-written logs, the trim watermark. */
public abstract class ReadSemanticsContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected ReadSemanticsContract(ConformanceFixture fixture) {
        super(fixture);
    }

    private LogId log;
    private List<LogEntry> all;

    /** 20 entries of 100 bytes (0..19), then one entry of 1,000 bytes (20). */
    @BeforeEach
    void writeLog() {
        log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        List<EncodedBatch> bs = appendBatches(provider(), f, 4, 5, 100);
        EncodedBatch big = EncodedBatch.of(20, BatchId.random(), List.of(payload(SEED, 20, 1000)));
        provider().append(log, f, big);
        bs.add(big);
        all = entriesOf(bs);
    }

    /** The lower bound is exclusive, from every position. */
    @Test
    void lowerBoundIsExclusive() {
        for (long from = -1; from <= 20; from++) {
            ReadPage p = provider().read(log, from, 1, Long.MAX_VALUE);
            if (from == 20) {
                assertThat(p.entries()).as("read after tail 20 (exclusive bound) must be empty").isEmpty();
            } else {
                assertThat(p.entries()).as("read(after %d, maxEntries 1) of 0..20", from).hasSize(1);
                assertEntries("read after " + from + " must start at " + (from + 1) + " (exclusive bound)",
                        p.entries(), all.subList((int) from + 1, (int) from + 2));
            }
            assertThat(p.committedTail()).as("ReadPage.committedTail of read after %d", from).isEqualTo(20);
        }
    }

    /** At most maxEntries entries, at least one, consecutive from the bound. */
    @Test
    void maxEntriesBoundsThePage() {
        for (int max : new int[] {1, 2, 5, 19, 21, 1000}) {
            ReadPage p = provider().read(log, -1, max, Long.MAX_VALUE);
            checkPage(p, -1, max, Long.MAX_VALUE);
            assertThat(p.entries()).as("read(after -1, maxEntries %d) of 0..20: at least one, at most %d entries",
                    max, max).isNotEmpty().hasSizeLessThanOrEqualTo(max);
            assertEntries("read(after -1, maxEntries " + max + ")", p.entries(), all.subList(0, p.entries().size()));
        }
    }

    /** At most maxBytes payload bytes per page, but always at least one entry, even one larger than maxBytes. */
    @Test
    void maxBytesBoundsThePageButOneEntryAlwaysComes() {
        for (long max : new long[] {1, 99, 100, 250, 300, 2000}) {
            ReadPage p = provider().read(log, -1, 1000, max);
            checkPage(p, -1, 1000, max);
            assertThat(p.entries()).as("read(after -1, maxBytes %d) must return at least one entry", max)
                    .isNotEmpty();
            assertThat(p.entries().size() == 1 || p.payloadBytes() <= max)
                    .as("read(after -1, maxBytes %d) returned %d entries of %d bytes: more than one entry must fit"
                            + " maxBytes", max, p.entries().size(), p.payloadBytes()).isTrue();
            assertEntries("read(after -1, maxBytes " + max + ")", p.entries(), all.subList(0, p.entries().size()));
        }
        ReadPage big = provider().read(log, 19, 10, 10);
        assertThat(big.entries()).as("read(after 19, maxBytes 10) must return the 1,000-byte entry 20 alone")
                .hasSize(1);
        assertEntries("read(after 19, maxBytes 10)", big.entries(), all.subList(20, 21));
        ReadPage one = provider().read(log, 4, 10, 1);
        assertThat(one.entries()).as("read(after 4, maxBytes 1) must return one entry").hasSize(1);
        assertThat(one.entries().get(0).offset()).as("offset of read(after 4, maxBytes 1)").isEqualTo(5);
    }

    /** Paging by the last offset read visits every entry exactly once, whatever the page limits. */
    @Test
    void pagingVisitsEveryEntryOnce() {
        int[][] limits = {{1, Integer.MAX_VALUE}, {3, Integer.MAX_VALUE}, {7, 250}, {1000, 1}, {1000, 150},
                {1000, Integer.MAX_VALUE}};
        for (int[] l : limits) {
            List<LogEntry> read = readAll(provider(), log, -1, l[0], l[1]);
            assertEntries("paging with maxEntries " + l[0] + ", maxBytes " + l[1], read, all);
            Set<Long> offsets = new HashSet<>();
            read.forEach(e -> assertThat(offsets.add(e.offset()))
                    .as("paging with maxEntries %d, maxBytes %d returned offset %d twice", l[0], l[1], e.offset())
                    .isTrue());
        }
        assertEntries("paging after 9 with maxEntries 4, maxBytes 300", readAll(provider(), log, 9, 4, 300),
                all.subList(10, 21));
    }

    /** Reads at or past the tail are empty and report the tail. */
    @Test
    void readsPastTheTailAreEmpty() {
        for (long from : new long[] {20, 21, 1000, Long.MAX_VALUE - 1, Long.MAX_VALUE}) {
            ReadPage p = provider().read(log, from, 10, 1000);
            assertThat(p.entries()).as("read after %d, at or past tail 20, must be empty", from).isEmpty();
            assertThat(p.committedTail()).as("ReadPage.committedTail of read after %d past tail 20", from)
                    .isEqualTo(20);
            assertThat(p.nextFromExclusive(from)).as("nextFromExclusive(%d) of an empty page must stay %d", from,
                    from).isEqualTo(from);
        }
    }

    /** A log never written reads empty with tail -1, and its state is LogState.EMPTY. */
    @Test
    void neverWrittenLogsAreEmpty() {
        LogId other = log(1);
        ReadPage p = provider().read(other, -1, 10, 1000);
        assertThat(p.entries()).as("read of never-written %s", other).isEmpty();
        assertThat(p.committedTail()).as("ReadPage.committedTail of never-written %s", other).isEqualTo(-1);
        assertThat(provider().read(other, 5, 10, 1000).entries()).as("read after 5 of never-written %s", other)
                .isEmpty();
        assertThat(provider().state(other)).as("state of never-written %s must be LogState.EMPTY", other)
                .isEqualTo(LogState.EMPTY);
        LogId otherTree = new LogId("never-written", 0);
        assertThat(provider().read(otherTree, -1, 10, 1000).entries()).as("read of never-written %s", otherTree)
                .isEmpty();
        assertThat(provider().state(otherTree)).as("state of never-written %s must be LogState.EMPTY", otherTree)
                .isEqualTo(LogState.EMPTY);
    }

    /** Nothing at or below the trim watermark is returned, from any bound. */
    @Test
    void nothingAtOrBelowTheWatermarkIsReturned() throws Exception {
        Fence f = provider().claim(log);
        provider().trim(log, f, 9);
        for (long from = -1; from <= 9; from++) {
            ReadPage p = provider().read(log, from, 3, Long.MAX_VALUE);
            assertThat(p.entries()).as("read after %d of a log trimmed through 9", from).isNotEmpty();
            assertThat(p.entries().get(0).offset())
                    .as("first offset read after %d of a log trimmed through 9 must be 10", from).isEqualTo(10);
        }
        assertDurableAcrossReopen(() -> assertEntries("entries of a log trimmed through 9", readAll(provider(), log),
                all.subList(10, 21)));
        assertThat(provider().read(log, 5, 1, 1).entries().get(0).offset())
                .as("after reopen: first offset read after 5 of a log trimmed through 9").isEqualTo(10);
    }

    /** ReadPage.committedTail is the log's tail, whether the page reaches it or not. */
    @Test
    void pageReportsTheCommittedTail() {
        assertThat(provider().read(log, -1, 1, 1).committedTail()).as("ReadPage.committedTail of a one-entry page")
                .isEqualTo(20);
        assertThat(provider().read(log, 10, 1000, Long.MAX_VALUE).committedTail())
                .as("ReadPage.committedTail of a page reaching the tail").isEqualTo(20);
        Fence f = provider().claim(log);
        provider().stage(log, f, batch(SEED, 21, 2, SMALL));
        assertThat(provider().read(log, -1, 1, 1).committedTail())
                .as("ReadPage.committedTail with 21..22 staged, not committed").isEqualTo(20);
        provider().commit(log, f, 22);
        assertThat(provider().read(log, -1, 1, 1).committedTail()).as("ReadPage.committedTail after commit(22)")
                .isEqualTo(22);
    }

    /** Payload arrays returned by read belong to the caller: changing them changes nothing stored. */
    @Test
    void returnedPayloadsAreTheCallersOwn() {
        ReadPage p = provider().read(log, -1, 2, Long.MAX_VALUE);
        Arrays.fill(p.entries().get(0).payload(), (byte) 0x55);
        assertEntries("entries after the caller overwrote a payload array read returned", readAll(provider(), log),
                all);
    }

    /** Payload arrays passed to stage are not kept: changing them after the call changes nothing stored. */
    @Test
    void stagedPayloadsAreCopied() {
        Fence f = provider().claim(log);
        byte[] mine = payload(SEED, 21, 64);
        byte[] copy = mine.clone();
        provider().append(log, f, EncodedBatch.of(21, BatchId.random(), List.of(mine)));
        Arrays.fill(mine, (byte) 0x33);
        ReadPage p = provider().read(log, 20, 1, Long.MAX_VALUE);
        assertSameBytes("payload of entry 21 after the caller overwrote the array it appended",
                p.entries().get(0).payload(), copy);
    }

    /**
     * A batch with {@link EncodedBatch#payloadsImmutable()} may be kept without a copy, and reads still hand out
     * the caller's own arrays: overwriting what a read returned changes neither the stored entry nor the array
     * that was staged.
     */
    @Test
    void immutablePayloadsReadBackAndReadsStayTheCallersOwn() {
        Fence f = provider().claim(log);
        byte[] staged = payload(SEED, 21, 64);
        byte[] copy = staged.clone();
        provider().append(log, f, EncodedBatch.ofImmutable(21, BatchId.random(), List.of(staged)));
        ReadPage first = provider().read(log, 20, 1, Long.MAX_VALUE);
        assertSameBytes("payload of entry 21 appended as immutable", first.entries().get(0).payload(), copy);
        Arrays.fill(first.entries().get(0).payload(), (byte) 0x44);
        assertSameBytes("payload of entry 21 after the caller overwrote the array a read returned",
                provider().read(log, 20, 1, Long.MAX_VALUE).entries().get(0).payload(), copy);
        assertSameBytes("the array staged as immutable after a read's array was overwritten", staged, copy);
    }
}
