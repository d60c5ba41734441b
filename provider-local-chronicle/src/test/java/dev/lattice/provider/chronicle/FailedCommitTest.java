package dev.lattice.provider.chronicle;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A commit that fails while writing (injected between the frames of a three-frame commit group, 1 MiB blocks):
 * the provider reloads the log from disk before the next call, so it agrees with what a restart would see. Failed
 * after the first frame: nothing is committed and the partial group is a discarded leftover. Failed after the last
 * frame: the group is committed although the call failed, and the engine's retry with the same batch ids is
 * success.
 */
class FailedCommitTest {

    private static final LogId LOG = new LogId("failing", 0);
    private final java.nio.file.Path dir = TestDirs.create("chronicle-failed-commit");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open() {
        return ChronicleWalStorageProvider.open(ChronicleConfig.builder(dir).blockSize(1 << 20).build());
    }

    private static List<EncodedBatch> bigBatches(long first) {
        List<EncodedBatch> out = new ArrayList<>();
        for (int b = 0; b < 3; b++) {
            List<byte[]> entries = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                byte[] e = new byte[50_000];
                Arrays.fill(e, (byte) (first + b * 4L + i));
                entries.add(e);
            }
            out.add(EncodedBatch.of(first + b * 4L, dev.lattice.spi.BatchId.random(), entries));
        }
        return out;
    }

    private static void failAfterFrames(WalStorageProvider p, int frames) {
        int[] written = {0};
        ((ChronicleWalStorageProvider) p).inspect(LOG, s -> {
            s.afterFrameWritten = () -> {
                if (++written[0] == frames) {
                    throw new IllegalStateException("injected failure after frame " + frames);
                }
            };
            return null;
        });
    }

    @Test
    void failureAfterTheFirstFrameCommitsNothing() {
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            p.append(LOG, f, Payloads.smallBatch(0, 5));
            List<EncodedBatch> batches = bigBatches(5);
            batches.forEach(b -> p.stage(LOG, f, b));
            failAfterFrames(p, 1);
            assertThatThrownBy(() -> p.commit(LOG, f, 16)).isInstanceOf(WalStorageException.class)
                    .hasMessageContaining("outcome");
            assertThat(p.state(LOG).committedTail()).isEqualTo(4);
            assertThat(p.read(LOG, 4, 100, Long.MAX_VALUE).isEmpty()).isTrue();
            ReconcileResult r = p.reconcile(LOG, f);
            assertThat(r.rolledBackBatches()).isEqualTo(3);
            assertThat(r.removedLeftovers()).isEqualTo(1);
            ((ChronicleWalStorageProvider) p).inspect(LOG, s -> s.afterFrameWritten = null);
            for (EncodedBatch b : batches) {
                p.append(LOG, f, b);
            }
            assertThat(p.state(LOG).committedTail()).isEqualTo(16);
        }
        try (WalStorageProvider p = open()) {
            List<LogEntry> all = p.read(LOG, -1, 100, Long.MAX_VALUE).entries();
            assertThat(all).extracting(LogEntry::offset).hasSize(17).endsWith(16L);
            assertThat(all.get(5).payload()).hasSize(50_000).containsOnly((byte) 5);
        }
    }

    @Test
    void failureAfterTheLastFrameLeavesTheGroupCommittedAndTheRetryIsSuccess() {
        try (WalStorageProvider p = open()) {
            Fence f = p.claim(LOG);
            List<EncodedBatch> batches = bigBatches(0);
            batches.forEach(b -> p.stage(LOG, f, b));
            failAfterFrames(p, 3);
            assertThatThrownBy(() -> p.commit(LOG, f, 11)).isInstanceOf(WalStorageException.class);
            assertThat(p.state(LOG).committedTail()).as("the group landed").isEqualTo(11);
            ((ChronicleWalStorageProvider) p).inspect(LOG, s -> s.afterFrameWritten = null);
            // the engine's retry: same batches, same ids
            for (EncodedBatch b : batches) {
                p.stage(LOG, f, b);
            }
            p.commit(LOG, f, 11);
            assertThat(p.reconcile(LOG, f).isClean()).isTrue();
            assertThat(p.read(LOG, -1, 100, Long.MAX_VALUE).entries()).hasSize(12);
        }
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(11);
            assertThat(p.read(LOG, 10, 100, Long.MAX_VALUE).entries().get(0).payload()).containsOnly((byte) 11);
        }
    }
}
