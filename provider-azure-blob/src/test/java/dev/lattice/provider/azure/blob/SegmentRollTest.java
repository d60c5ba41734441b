package dev.lattice.provider.azure.blob;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Segment rolls at a lowered block limit (the service's limit is 50,000 blocks per append blob; the provider rolls
 * at its own, lower limit), checked by the request ledger configured with that same limit, and rolls racing with a
 * second writer.
 */
class SegmentRollTest extends BlobTestSupport {

    private static final int BLOCK_LIMIT = 100;

    /** 350 appends with one block each at a 100-block limit: four segments, everything back in order. */
    @Test
    void appendsPastSeveralRollsReplayCompleteAndInOrder() {
        ledger = new RequestLedger(AzureBlobConfig.SERVICE_MAX_BLOCK_BYTES_OLD, BLOCK_LIMIT);
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0).maxBlocksPerSegment(BLOCK_LIMIT));
        AzureBlobWalStorageProvider p = open(s);
        Fence f = claimAndReconcile(p, LOG);
        List<EncodedBatch> written = new ArrayList<>();
        long next = 0;
        for (int i = 0; i < 350; i++) {
            EncodedBatch b = batch(SEED + i, next, 1 + i % 3, 20 + i % 50);
            p.append(LOG, f, b);
            written.add(b);
            next = b.lastOffset() + 1;
        }
        Manifest m = manifest(s, LOG);
        assertThat(m.data().segments()).hasSize(4);
        assertThat(m.data().segments()).allSatisfy(seg -> assertThat(seg.blocks()).isLessThanOrEqualTo(BLOCK_LIMIT));
        assertThat(m.data().segments().get(0).blocks()).isEqualTo(BLOCK_LIMIT);
        assertThat(p.stats().snapshot().segmentRolls()).isEqualTo(4);
        List<LogEntry> expected = entriesOf(written);
        assertSameEntries(readAll(p, LOG), expected);

        AzureBlobWalStorageProvider cold = open(s);
        assertSameEntries(readAll(cold, LOG), expected);
        assertThat(cold.stats().snapshot().segmentBlocksRead()).isEqualTo(350);
        assertThat(cold.state(LOG).committedTail()).isEqualTo(next - 1);
    }

    /** With the inline tail on, flushes of many batches roll too; small flush threshold so it happens quickly. */
    @Test
    void inlineFlushesRollToo() {
        ledger = new RequestLedger(AzureBlobConfig.SERVICE_MAX_BLOCK_BYTES_OLD, 3);
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(2048).maxBlocksPerSegment(3));
        AzureBlobWalStorageProvider p = open(s);
        Fence f = claimAndReconcile(p, LOG);
        List<EncodedBatch> written = new ArrayList<>();
        long next = 0;
        for (int i = 0; i < 120; i++) {
            EncodedBatch b = batch(SEED + i, next, 2, 100);
            p.append(LOG, f, b);
            written.add(b);
            next = b.lastOffset() + 1;
        }
        Manifest m = manifest(s, LOG);
        assertThat(m.data().segments().size()).isGreaterThan(3);
        assertThat(m.data().inline().length).isPositive();
        AzureBlobWalStorageProvider cold = open(s);
        assertSameEntries(readAll(cold, LOG), entriesOf(written));
        // about 120 batches of ~250 bytes in blocks of > 2 KiB: far fewer blocks than batches
        assertThat(cold.stats().snapshot().segmentBlocksRead()).isLessThan(20);
    }

    /**
     * Writer A fills its segment and rolls; while it is between creating its new segment and appending to it,
     * writer B (another provider instance) claims the log, appends, and rolls itself. A's commit is fenced, B's data
     * is the log, nothing of A's is visible, and B's trim sweeps A's orphan segment away.
     */
    @Test
    void aRollRacingWithASecondWriterLeavesOneWinner() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0).maxBlocksPerSegment(3));
        AzureBlobWalStorageProvider pa = open(s);
        AzureBlobWalStorageProvider pb = open(s);
        Fence fa = claimAndReconcile(pa, LOG);
        List<EncodedBatch> base = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            EncodedBatch b = batch(SEED + i, i * 2L, 2, 30);
            pa.append(LOG, fa, b);
            base.add(b);
        }
        List<EncodedBatch> bWrites = new ArrayList<>();
        Fence[] fb = new Fence[1];
        AtomicBoolean raced = new AtomicBoolean();
        pa.stepHook((step, log) -> {
            if (step == AzureBlobWalStorageProvider.Step.SEGMENT_CREATED && raced.compareAndSet(false, true)) {
                fb[0] = claimAndReconcile(pb, LOG);
                for (int i = 0; i < 2; i++) {
                    EncodedBatch b = batch(SEED + 100 + i, 6 + i * 2L, 2, 40);
                    pb.append(LOG, fb[0], b);
                    bWrites.add(b);
                }
            }
        });
        EncodedBatch aNext = batch(SEED + 50, 6, 3, 50);
        assertThatThrownBy(() -> pa.append(LOG, fa, aNext)).isInstanceOf(FencedException.class);
        assertThat(raced).isTrue();
        List<EncodedBatch> expectedBatches = new ArrayList<>(base);
        expectedBatches.addAll(bWrites);
        List<LogEntry> expected = entriesOf(expectedBatches);
        assertSameEntries(readAll(pa, LOG), expected);
        assertSameEntries(readAll(pb, LOG), expected);
        Manifest m = manifest(s, LOG);
        assertThat(m.epoch()).isEqualTo(fb[0].epoch());
        assertThat(m.data().segments()).hasSize(2);
        assertThat(m.data().segments()).allSatisfy(seg -> assertThat(seg.creatorEpoch()).isIn(fa.epoch(), fb[0].epoch()));
        assertThat(blobsOf(s, LOG)).as("manifest, A's first segment, B's segment and A's orphan").hasSize(4);

        // B continues densely, then trims: A's orphan segment (older epoch, unreferenced) is swept.
        EncodedBatch bMore = batch(SEED + 200, 10, 2, 10);
        pb.append(LOG, fb[0], bMore);
        pb.trim(LOG, fb[0], 1);
        assertThat(blobsOf(s, LOG)).extracting(i -> i.getName())
                .containsExactlyInAnyOrderElementsOf(names(manifest(s, LOG)));
        expectedBatches.add(bMore);
        assertSameEntries(readAll(open(s), LOG), entriesOf(expectedBatches).subList(2, 12));
    }

    /**
     * Writer A's append lands in the shared active segment; before A records it in the manifest, writer B claims and
     * appends: B's append finds A's bytes past the committed length (append position not met, not B's frames), so B
     * rolls past them. A's manifest update is fenced; A's bytes are never read.
     */
    @Test
    void twoWritersAppendingToOneSegmentDoNotInterleave() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0));
        AzureBlobWalStorageProvider pa = open(s);
        AzureBlobWalStorageProvider pb = open(s);
        Fence fa = claimAndReconcile(pa, LOG);
        EncodedBatch first = batch(SEED, 0, 3, 30);
        pa.append(LOG, fa, first);
        Fence[] fb = new Fence[1];
        EncodedBatch bBatch = batch(SEED + 2, 3, 4, 25);
        AtomicBoolean raced = new AtomicBoolean();
        pa.stepHook((step, log) -> {
            if (step == AzureBlobWalStorageProvider.Step.BLOCK_APPENDED && raced.compareAndSet(false, true)) {
                fb[0] = claimAndReconcile(pb, LOG);
                pb.append(LOG, fb[0], bBatch);
            }
        });
        EncodedBatch aBatch = batch(SEED + 1, 3, 2, 30);
        assertThatThrownBy(() -> pa.append(LOG, fa, aBatch)).isInstanceOf(FencedException.class);
        assertThat(pb.stats().snapshot().foreignBytesSkipped()).isEqualTo(1);
        assertThat(pb.stats().snapshot().segmentRolls()).isEqualTo(1);
        List<LogEntry> expected = entriesOf(first, bBatch);
        assertSameEntries(readAll(pa, LOG), expected);
        assertSameEntries(readAll(open(s), LOG), expected);
        Manifest m = manifest(s, LOG);
        Manifest.SegmentRef shared = m.data().segments().get(0);
        assertThat(blobLength(s, shared.name())).as("A's orphan bytes are there, past the committed length")
                .isGreaterThan(shared.length());
    }

    private static List<String> names(Manifest m) {
        List<String> out = new ArrayList<>();
        out.add("t/0000/manifest");
        m.data().segments().forEach(seg -> out.add(seg.name()));
        m.checkpoints().forEach(c -> out.add(c.name()));
        return out;
    }
}
