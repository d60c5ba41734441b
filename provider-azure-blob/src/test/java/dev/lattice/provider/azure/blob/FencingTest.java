package dev.lattice.provider.azure.blob;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Fencing with two provider instances over one container, like two processes sharing an account. */
class FencingTest extends BlobTestSupport {

    /**
     * After B claims, every fenced call of A fails on both commit paths (inline tail and segment flush) and changes
     * nothing; A's flushed bytes stay orphans that B rolls past.
     */
    @Test
    void aReplacedWriterIsFencedOnEveryPath() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(2048));
        AzureBlobWalStorageProvider a = open(s);
        AzureBlobWalStorageProvider b = open(s);
        Fence fa = claimAndReconcile(a, LOG);
        EncodedBatch a0 = batch(SEED, 0, 2, 100);
        a.append(LOG, fa, a0);
        a.checkpoints().publish(LOG, fa, 1, 1, new ByteArrayInputStream(new byte[10]));
        Fence fb = claimAndReconcile(b, LOG);

        EncodedBatch small = batch(SEED + 1, 2, 1, 10);             // fits the inline tail
        EncodedBatch big = batch(SEED + 2, 2, 4, 1000);             // forces a flush to a segment
        assertThatThrownBy(() -> a.append(LOG, fa, small)).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> a.append(LOG, fa, big)).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> a.trim(LOG, fa, 0)).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> a.reconcile(LOG, fa)).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> a.checkpoints().publish(LOG, fa, 1, 2, new ByteArrayInputStream(new byte[3])))
                .isInstanceOf(FencedException.class);
        FencedException e = (FencedException) org.assertj.core.api.Assertions.catchThrowable(
                () -> a.commit(LOG, fa, 5));
        assertThat(e.staleEpoch()).isEqualTo(fa.epoch());
        assertThat(e.currentEpoch()).isIn(-1L, fb.epoch());

        assertSameEntries(readAll(b, LOG), entriesOf(a0));
        assertThat(b.checkpoints().latest(LOG).orElseThrow().formatVersion()).isEqualTo(1);
        EncodedBatch b1 = batch(SEED + 3, 2, 4, 1000);
        b.append(LOG, fb, b1);
        assertSameEntries(readAll(a, LOG), entriesOf(a0, b1));
        assertThat(a.state(LOG).epoch()).isEqualTo(fb.epoch());
    }

    /** Claims from two instances and several threads each get distinct epochs; the highest is the log's. */
    @Test
    void concurrentClaimsAcrossInstancesGetDistinctEpochs() throws Exception {
        AzuriteBlobs.Storage s = storage(b -> b);
        List<AzureBlobWalStorageProvider> ps = List.of(open(s), open(s));
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<Long>> fs = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                WalStorageProvider p = ps.get(i % 2);
                fs.add(pool.submit(() -> p.claim(LOG).epoch()));
            }
            Set<Long> epochs = new HashSet<>();
            long max = 0;
            for (Future<Long> f : fs) {
                long e = f.get(120, TimeUnit.SECONDS);
                assertThat(epochs.add(e)).as("epoch %d handed out twice", e).isTrue();
                max = Math.max(max, e);
            }
            assertThat(ps.get(0).state(LOG).epoch()).isEqualTo(max);
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * Two writers on two instances keep taking the log from each other (claim, reconcile, append until fenced).
     * Every acknowledged batch is in the log at its offsets, and every entry of the log belongs to an acknowledged
     * batch: no interleaving, no loss.
     */
    @Test
    void twoWritersTakingTurnsNeverInterleave() throws Exception {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(1024).maxBlocksPerSegment(4));
        List<AzureBlobWalStorageProvider> ps = List.of(open(s), open(s));
        Map<Long, EncodedBatch> acked = new TreeMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Integer>> fs = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int writer = w;
                AzureBlobWalStorageProvider p = ps.get(w);
                fs.add(pool.submit(() -> {
                    int fenced = 0;
                    for (int round = 0; round < 12; round++) {
                        Fence f;
                        try {
                            f = p.claim(LOG);
                            p.reconcile(LOG, f);
                        } catch (FencedException e) {
                            fenced++; // the other writer claimed between our claim and reconcile
                            continue;
                        }
                        for (int i = 0; i < 4; i++) {
                            long next = p.state(LOG).nextOffset();
                            EncodedBatch b = batch(SEED * 31 + writer * 1000 + round * 10 + i, next, 1 + i % 3,
                                    60 + 200 * (i % 2));
                            try {
                                p.append(LOG, f, b);
                                synchronized (acked) {
                                    acked.put(b.firstOffset(), b);
                                }
                            } catch (FencedException | OffsetConflictException e) {
                                fenced++;
                                break;
                            }
                        }
                    }
                    return fenced;
                }));
            }
            for (Future<Integer> f : fs) {
                f.get(300, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        }
        List<LogEntry> expected = entriesOf(new ArrayList<>(acked.values()));
        assertThat(expected).isNotEmpty();
        for (int i = 0; i < expected.size(); i++) {
            assertThat(expected.get(i).offset()).as("acknowledged batches are dense").isEqualTo(i);
        }
        assertSameEntries(readAll(open(s), LOG), expected);
    }
}
