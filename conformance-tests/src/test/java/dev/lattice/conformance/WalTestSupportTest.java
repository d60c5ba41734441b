package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import dev.lattice.testkit.ForwardingProvider;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.payload;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.randomStream;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static dev.lattice.conformance.WalTestSupport.readFully;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The helpers are deterministic and the page checks catch broken pages. */
class WalTestSupportTest {

    private final LogId log = new LogId("t", 0);

    @Test
    void generatorsAreDeterministic() {
        assertThat(payload(1, 5, 100)).isEqualTo(payload(1, 5, 100)).isNotEqualTo(payload(1, 6, 100))
                .isNotEqualTo(payload(2, 5, 100));
        EncodedBatch a = batch(3, 10, 4, 20);
        EncodedBatch b = batch(3, 10, 4, 20);
        assertThat(b.batchId()).isEqualTo(a.batchId());
        assertSameEntries(entriesOf(b), entriesOf(a));
        assertThat(batch(3, 11, 4, 20).batchId()).isNotEqualTo(a.batchId());
        assertThat(payload(1, 1, 0)).isEmpty();
    }

    @Test
    void randomStreamEqualsRandomBytes() {
        for (int size : new int[] {0, 1, 7, 8, 9, 15, 16, 17, 1000, 4097}) {
            assertThat(readFully(randomStream(9, size))).as("size %d", size).isEqualTo(randomBytes(9, size));
        }
        var in = randomStream(9, 20);
        byte[] first = new byte[20];
        for (int i = 0; i < 20; i++) {
            first[i] = (byte) readByte(in);
        }
        assertThat(first).isEqualTo(randomBytes(9, 20));
    }

    private static int readByte(java.io.InputStream in) {
        try {
            return in.read();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void readAllPagesThroughTheLog() {
        InMemoryWalStorageProvider p = InMemoryWalStorageProvider.fresh();
        Fence f = p.claim(log);
        List<EncodedBatch> bs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            EncodedBatch b = batch(4, i * 3L, 3, 10);
            p.append(log, f, b);
            bs.add(b);
        }
        assertSameEntries(readAll(p, log), entriesOf(bs));
        assertSameEntries(readAll(p, log, 4, 2, 15), entriesOf(bs).subList(5, 15));
    }

    @Test
    void readAllCatchesAGapBetweenPages() {
        InMemoryWalStorageProvider real = InMemoryWalStorageProvider.fresh();
        Fence f = real.claim(log);
        real.append(log, f, batch(4, 0, 6, 10));
        WalStorageProvider skipping = new ForwardingProvider(real) {
            @Override
            public ReadPage read(LogId l, long fromExclusive, int maxEntries, long maxBytes) {
                return super.read(l, fromExclusive == 1 ? 2 : fromExclusive, maxEntries, maxBytes);
            }
        };
        assertThatThrownBy(() -> readAll(skipping, log, -1, 2, Long.MAX_VALUE)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("without gaps");
    }

    @Test
    void checkPageCatchesBrokenPages() {
        byte[] x = new byte[10];
        ReadPage tooMany = new ReadPage(List.of(new LogEntry(0, x), new LogEntry(1, x)), 1);
        assertThatThrownBy(() -> WalTestSupport.checkPage(tooMany, -1, 1, 100)).isInstanceOf(AssertionError.class);
        assertThatThrownBy(() -> WalTestSupport.checkPage(tooMany, -1, 5, 15)).isInstanceOf(AssertionError.class);
        WalTestSupport.checkPage(new ReadPage(List.of(new LogEntry(0, new byte[50])), 0), -1, 5, 15);
        ReadPage hole = new ReadPage(List.of(new LogEntry(0, x), new LogEntry(2, x)), 2);
        assertThatThrownBy(() -> WalTestSupport.checkPage(hole, -1, 5, 100)).isInstanceOf(AssertionError.class);
        ReadPage aboveTail = new ReadPage(List.of(new LogEntry(0, x)), -1);
        assertThatThrownBy(() -> WalTestSupport.checkPage(aboveTail, -1, 5, 100)).isInstanceOf(AssertionError.class);
        ReadPage belowBound = new ReadPage(List.of(new LogEntry(0, x)), 0);
        assertThatThrownBy(() -> WalTestSupport.checkPage(belowBound, 0, 5, 100)).isInstanceOf(AssertionError.class);
    }

    @Test
    void assertSameEntriesNamesTheDifference() {
        List<LogEntry> a = List.of(new LogEntry(0, new byte[] {1, 2}), new LogEntry(1, new byte[] {3}));
        List<LogEntry> b = List.of(new LogEntry(0, new byte[] {1, 9}), new LogEntry(1, new byte[] {3}));
        assertThatThrownBy(() -> assertSameEntries(a, b)).hasMessageContaining("offset 0")
                .hasMessageContaining("byte 1");
        assertThatThrownBy(() -> assertSameEntries(a, a.subList(0, 1))).hasMessageContaining("first extra at offset 1");
        assertThatThrownBy(() -> assertSameEntries(a.subList(0, 1), a)).hasMessageContaining("first missing at offset 1");
    }
}
