package dev.lattice.testkit;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.lattice.testkit.TestData.batch;
import static dev.lattice.testkit.TestData.readAll;
import static dev.lattice.testkit.TestData.readFully;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The counting decorator counts calls, failures, entries and bytes exactly. */
class CountingProviderTest {

    private final LogId log = new LogId("t", 0);

    @Test
    void countsCallsEntriesAndBytes() {
        try (CountingProvider p = new CountingProvider(InMemoryWalStorageProvider.fresh())) {
            Fence f = p.claim(log);
            p.append(log, f, batch(1, 0, 3, 10));
            p.append(log, f, batch(1, 3, 2, 100));
            assertThatThrownBy(() -> p.append(log, f, batch(1, 9, 1, 5))).isInstanceOf(OffsetConflictException.class);
            assertThat(readAll(p, log)).hasSize(5);
            var info = p.checkpoints().publish(log, f, 4, 0, new ByteArrayInputStream(new byte[1000]));
            assertThat(readFully(p.checkpoints().open(log, info))).hasSize(1000);
            CountingProvider.Counts c = p.snapshot();
            assertThat(c.calls(SpiOperation.CLAIM)).isEqualTo(1);
            assertThat(c.calls(SpiOperation.STAGE)).isEqualTo(3);
            assertThat(c.calls(SpiOperation.COMMIT)).isEqualTo(3);
            assertThat(c.failures(SpiOperation.COMMIT)).isEqualTo(1);
            assertThat(c.calls(SpiOperation.ABORT)).isEqualTo(1);
            assertThat(c.calls(SpiOperation.READ)).isEqualTo(2); // one page with data, one empty page
            assertThat(c.entriesWritten()).isEqualTo(6);         // the refused batch was staged, then aborted
            assertThat(c.payloadBytesWritten()).isEqualTo(235);
            assertThat(c.entriesRead()).isEqualTo(5);
            assertThat(c.payloadBytesRead()).isEqualTo(230);
            assertThat(c.checkpointBytesWritten()).isEqualTo(1000);
            assertThat(c.checkpointBytesRead()).isEqualTo(1000);
            assertThat(c.calls(SpiOperation.CHECKPOINT_PUBLISH)).isEqualTo(1);
            assertThat(c.calls(SpiOperation.CHECKPOINT_OPEN)).isEqualTo(1);
            assertThat(c.totalCalls()).isEqualTo(1 + 3 + 3 + 1 + 2 + 2);

            p.state(log);
            CountingProvider.Counts d = p.snapshot().minus(c);
            assertThat(d.calls(SpiOperation.STATE)).isEqualTo(1);
            assertThat(d.totalCalls()).isEqualTo(1);
            assertThat(d.entriesWritten()).isZero();
            p.reset();
            assertThat(p.snapshot().totalCalls()).isZero();
            assertThat(p.snapshot().calls()).containsOnlyKeys(SpiOperation.values());
        }
    }

    @Test
    void countsExactlyUnderConcurrency() throws Exception {
        CountingProvider p = new CountingProvider(InMemoryWalStorageProvider.fresh());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                LogId l = new LogId("t", t);
                fs.add(pool.submit(() -> {
                    Fence f = p.claim(l);
                    for (int i = 0; i < 50; i++) {
                        p.append(l, f, batch(t(l), i * 2L, 2, 3));
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        CountingProvider.Counts c = p.snapshot();
        assertThat(c.calls(SpiOperation.STAGE)).isEqualTo(200);
        assertThat(c.calls(SpiOperation.COMMIT)).isEqualTo(200);
        assertThat(c.entriesWritten()).isEqualTo(400);
        assertThat(c.payloadBytesWritten()).isEqualTo(1200);
        p.close();
    }

    private static long t(LogId l) {
        return l.partition();
    }
}
