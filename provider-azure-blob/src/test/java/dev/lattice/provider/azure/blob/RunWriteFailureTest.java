package dev.lattice.provider.azure.blob;

import dev.lattice.spi.Fence;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayInputStream;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run write that dies at block k (after k blocks were staged) or right before its block-list commit leaves nothing
 * a reader or {@code list} can see, and a retry of the same id then stores the run byte-exact (Azurite).
 */
class RunWriteFailureTest extends BlobTestSupport {

    private static final int BLOCK = 64 << 10;
    private static final int BLOCKS = 5;

    private static byte[] data() {
        byte[] b = new byte[BLOCKS * BLOCK - 123];
        new Random(SEED).nextBytes(b);
        return b;
    }

    private AzureBlobWalStorageProvider provider() {
        return open(storage(b -> b.maxBlockBytes(BLOCK).inlineTailBytes(16 << 10)));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void aWriteDyingAfterBlockKLeavesNothingAndARetrySucceeds(int k) {
        check(provider(), AzureBlobWalStorageProvider.Step.RUN_BLOCK_STAGED, k);
    }

    @Test
    void aWriteDyingBeforeItsCommitLeavesNothingAndARetrySucceeds() {
        check(provider(), AzureBlobWalStorageProvider.Step.RUN_BEFORE_COMMIT, 1);
    }

    @Test
    void aOneBlockWriteDyingBeforeItsUploadLeavesNothing() {
        AzureBlobWalStorageProvider p = provider();
        Fence f = p.claim(LOG);
        p.stepHook((step, log) -> {
            if (step == AzureBlobWalStorageProvider.Step.RUN_BEFORE_COMMIT) {
                throw new IllegalStateException("injected crash");
            }
        });
        byte[] small = Arrays.copyOf(data(), 1000);
        RunId id = new RunId("small");
        assertThatThrownBy(() -> p.runs().write(LOG, f, id, new ByteArrayInputStream(small), small.length))
                .hasMessageContaining("injected crash");
        assertNothing(p, id);
    }

    private static void check(AzureBlobWalStorageProvider p, AzureBlobWalStorageProvider.Step at, int k) {
        Fence f = p.claim(LOG);
        byte[] data = data();
        RunId id = new RunId("run-k" + k);
        AtomicInteger seen = new AtomicInteger();
        p.stepHook((step, log) -> {
            if (step == at && seen.incrementAndGet() == k) {
                throw new IllegalStateException("injected crash at " + step + " #" + k);
            }
        });
        assertThatThrownBy(() -> p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length))
                .hasMessageContaining("injected crash");
        assertNothing(p, id);
        p.stepHook(AzureBlobWalStorageProvider.StepHook.NONE);
        RunInfo info = p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
        assertThat(info.complete()).isTrue();
        assertThat(info.lengthBytes()).isEqualTo(data.length);
        assertThat(p.runs().list(LOG)).containsExactly(info);
        byte[] back = new byte[data.length];
        int pos = 0;
        while (pos < back.length) {
            int n = p.runs().read(LOG, id, pos, back, pos, Math.min(100_000, back.length - pos));
            assertThat(n).isPositive();
            pos += n;
        }
        assertThat(back).isEqualTo(data);
        assertThat(p.runs().read(LOG, id, data.length, new byte[1], 0, 1)).isEqualTo(-1);
    }

    private static void assertNothing(WalStorageProvider p, RunId id) {
        assertThatThrownBy(() -> p.runs().read(LOG, id, 0, new byte[1], 0, 1))
                .isInstanceOf(RunNotFoundException.class);
        assertThat(p.runs().list(LOG)).isEmpty();
    }
}
