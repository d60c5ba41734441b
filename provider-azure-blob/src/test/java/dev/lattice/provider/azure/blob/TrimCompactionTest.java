package dev.lattice.provider.azure.blob;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogState;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Trim drops whole segments below the watermark and compacts the segment it cuts: retained frames move into the
 * inline tail when they fit, are copied into a fresh one-block segment when they span several blocks and fit one,
 * and otherwise the segment stays with a later start position so readers skip the trimmed blocks.
 */
class TrimCompactionTest extends BlobTestSupport {

    private static List<EncodedBatch> write(AzureBlobWalStorageProvider p, Fence f, int n, int entries, int size) {
        List<EncodedBatch> out = new ArrayList<>();
        long next = p.state(LOG).nextOffset();
        for (int i = 0; i < n; i++) {
            EncodedBatch b = batch(SEED + next, next, entries, size);
            p.append(LOG, f, b);
            out.add(b);
            next = b.lastOffset() + 1;
        }
        return out;
    }

    private static void assertState(AzureBlobWalStorageProvider p, List<LogEntry> retained, long tail) {
        LogState st = p.state(LOG);
        assertThat(st.committedTail()).isEqualTo(tail);
        assertThat(st.retainedEntries()).isEqualTo(retained.size());
        assertThat(st.retainedPayloadBytes()).isEqualTo(retained.stream().mapToLong(e -> e.payload().length).sum());
        assertSameEntries(readAll(p, LOG), retained);
    }

    /** The cut segment's retained frames move into the inline tail; every segment blob goes. */
    @Test
    void retainedFramesMoveIntoTheInlineTail() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(4096));
        AzureBlobWalStorageProvider p = open(s);
        Fence f = claimAndReconcile(p, LOG);
        List<LogEntry> all = entriesOf(write(p, f, 40, 2, 150));
        Manifest before = manifest(s, LOG);
        assertThat(before.data().segments()).hasSize(1);
        Manifest.SegmentRef seg = before.data().segments().get(0);
        long cut = seg.lastOffset() - 4;
        p.trim(LOG, f, cut);
        Manifest after = manifest(s, LOG);
        assertThat(after.data().segments()).isEmpty();
        assertThat(after.data().watermark()).isEqualTo(cut);
        assertThat(blobsOf(s, LOG)).hasSize(1);
        assertThat(p.stats().snapshot().compactions()).isEqualTo(1);
        List<LogEntry> retained = all.subList((int) cut + 1, all.size());
        assertState(p, retained, all.size() - 1);
        AzureBlobWalStorageProvider cold = open(s);
        assertState(cold, retained, all.size() - 1);
        assertThat(cold.stats().snapshot().segmentBlocksRead()).isZero();
    }

    /** Many one-batch blocks after the cut are copied into a fresh segment as one block. */
    @Test
    void aManyBlockTailIsCopiedIntoOneBlock() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0));
        AzureBlobWalStorageProvider p = open(s);
        Fence f = claimAndReconcile(p, LOG);
        List<LogEntry> all = entriesOf(write(p, f, 20, 3, 40));
        p.trim(LOG, f, 28); // inside batch 9 (27..29)
        Manifest m = manifest(s, LOG);
        assertThat(m.data().segments()).hasSize(1);
        assertThat(m.data().segments().get(0).blocks()).isEqualTo(1);
        assertThat(m.data().segments().get(0).firstOffset()).isEqualTo(29);
        assertThat(blobsOf(s, LOG)).hasSize(2);
        List<LogEntry> retained = all.subList(29, all.size());
        assertState(p, retained, 59);
        AzureBlobWalStorageProvider cold = open(s);
        assertState(cold, retained, 59);
        assertThat(cold.stats().snapshot().segmentBlocksRead()).isEqualTo(1);
        // the log goes on after the compacted segment
        EncodedBatch next = batch(SEED + 500, 60, 2, 40);
        p.append(LOG, f, next);
        List<LogEntry> more = new ArrayList<>(retained);
        more.addAll(entriesOf(next));
        assertState(open(s), more, 61);
    }

    /** A tail larger than one block stays in place; readers start at the first block holding retained entries. */
    @Test
    void aLargeTailStaysAndReadersSkipTrimmedBlocks() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0).maxBlockBytes(64 << 10));
        AzureBlobWalStorageProvider p = open(s);
        Fence f = claimAndReconcile(p, LOG);
        List<LogEntry> all = entriesOf(write(p, f, 30, 2, 4000));   // 30 blocks of ~8 KB
        p.trim(LOG, f, 20);                                         // inside batch 10 (20..21)
        Manifest m = manifest(s, LOG);
        Manifest.SegmentRef seg = m.data().segments().get(0);
        assertThat(seg.blocks()).isEqualTo(30);
        assertThat(seg.startPos()).isPositive();
        assertThat(p.stats().snapshot().compactions()).isZero();
        List<LogEntry> retained = all.subList(21, all.size());
        AzureBlobWalStorageProvider cold = open(s);
        assertState(cold, retained, 59);
        assertThat(cold.stats().snapshot().segmentBlocksRead()).as("blocks 10..29 only").isEqualTo(20);
        assertThat(cold.stats().snapshot().bytesDownloaded()).isLessThan(seg.length());
    }

    /** Trims in every shape keep the counters exact and survive reopen; whole segments below the cut go. */
    @Test
    void repeatedTrimsAcrossSegmentsKeepCountersExact() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(1024).maxBlocksPerSegment(2));
        AzureBlobWalStorageProvider p = open(s);
        Fence f = claimAndReconcile(p, LOG);
        List<LogEntry> all = new ArrayList<>(entriesOf(write(p, f, 60, 2, 90)));
        long[] cuts = {3, 4, 30, 31, 77, 100};
        for (long cut : cuts) {
            p.trim(LOG, f, cut);
            assertState(p, all.subList((int) cut + 1, all.size()), all.size() - 1);
            all.addAll(entriesOf(write(p, f, 5, 2, 90)));
            assertState(open(s), all.subList((int) cut + 1, all.size()), all.size() - 1);
            Manifest m = manifest(s, LOG);
            assertThat(blobsOf(s, LOG)).as("no blob outlives its reference").hasSize(1 + m.data().segments().size());
        }
    }
}
