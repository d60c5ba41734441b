package dev.lattice.provider.azure.blob;

import com.azure.storage.blob.specialized.AppendBlobClient;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.RepairReport;
import dev.lattice.testbackends.AzuriteExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@code repair} truncates a damaged log at the first offset that cannot be read and reports exactly the lost
 * offsets: afterwards the log reads the intact prefix byte for byte on a fresh instance, takes appends at the new
 * tail, and a second repair finds nothing. 10 batches of 3 entries x 50 bytes (offsets 0..29), frames of 210 bytes.
 */
@ExtendWith(AzuriteExtension.class)
class RepairTest extends BlobTestSupport {

    private static final int FRAME = Frames.FRAME_HEADER_BYTES + 3 * (Frames.PER_ENTRY_BYTES + 50) + Frames.CRC_BYTES;

    private record Log(AzuriteBlobs.Storage storage, Manifest.SegmentRef segment, byte[] bytes,
                       List<EncodedBatch> batches) {
    }

    private Log write(UnaryOperator<AzureBlobConfig.Builder> tune) {
        AzuriteBlobs.Storage s = storage(tune);
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        List<EncodedBatch> batches = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            EncodedBatch b = batch(SEED + i, i * 3L, 3, 50);
            a.append(LOG, f, b);
            batches.add(b);
        }
        List<Manifest.SegmentRef> segs = manifest(s, LOG).data().segments();
        Manifest.SegmentRef seg = segs.isEmpty() ? null : segs.get(0);
        byte[] bytes = seg == null ? new byte[0] : s.client.getBlobContainerClient(s.container)
                .getBlobClient(seg.name()).downloadContent().toBytes();
        return new Log(s, seg, bytes, batches);
    }

    private static void rewrite(Log w, byte[] bytes) {
        AppendBlobClient c = w.storage().client.getBlobContainerClient(w.storage().container)
                .getBlobClient(w.segment().name()).getAppendBlobClient();
        c.delete();
        c.create();
        if (bytes.length > 0) {
            c.appendBlock(new ByteArrayInputStream(bytes), bytes.length);
        }
    }

    /** Repairs on a fresh instance and checks the report, the surviving entries and that the log takes writes. */
    private RepairReport repairAndCheck(Log w, long expectedTail, long firstLost) {
        AzureBlobWalStorageProvider b = open(w.storage());
        assertThat(b.describe().features()).contains(ProviderFeature.REPAIR);
        Fence g = b.claim(LOG);
        b.reconcile(LOG, g);
        assertThat(catchThrowableOfType(() -> readAll(b, LOG), CorruptLogException.class).offset())
                .isEqualTo(firstLost);
        RepairReport r = b.repair(LOG, g);
        System.out.println("repair: " + r);
        assertThat(r.tailBefore()).isEqualTo(29);
        assertThat(r.tailAfter()).isEqualTo(expectedTail);
        assertThat(r.firstLostOffset()).isEqualTo(expectedTail + 1);
        assertThat(r.lastLostOffset()).isEqualTo(29);
        assertThat(r.lostEntries()).isEqualTo(29 - expectedTail);
        assertThat(r.detail()).contains("offset " + firstLost);
        // A fresh instance reads exactly the intact prefix (entries above the checkpoint when one covered it).
        AzureBlobWalStorageProvider c = open(w.storage());
        Fence h = c.claim(LOG);
        assertThat(c.reconcile(LOG, h).committedTail()).isEqualTo(expectedTail);
        long watermark = c.state(LOG).trimWatermark();
        List<dev.lattice.spi.LogEntry> expected = new ArrayList<>(entriesOf(w.batches()).subList(
                (int) (watermark + 1), (int) expectedTail + 1));
        assertSameEntries(readAll(c, LOG), expected);
        EncodedBatch more = batch(SEED + 77, expectedTail + 1, 4, 30);
        c.append(LOG, h, more);
        expected.addAll(entriesOf(more));
        assertSameEntries(readAll(open(w.storage()), LOG), expected);
        assertThat(c.repair(LOG, h).isClean()).isTrue();
        return r;
    }

    @Test
    void aDamagedMiddleFrameIsCutAwayWithEverythingAfterIt() {
        Log w = write(b -> b.inlineTailBytes(0)); // one frame per block
        byte[] d = w.bytes().clone();
        d[4 * (Frames.BLOCK_HEADER_BYTES + FRAME) + 100] ^= 0x01; // payload of block 4 (offsets 12..14)
        rewrite(w, d);
        repairAndCheck(w, 11, 12);
    }

    @Test
    void intactFramesOfTheDamagedBlockAreKept() {
        // inline tail of 4 batches: every 5th commit flushes one block of 5 frames: block 0 = 0..14, block 1 = 15..29
        Log w = write(b -> b.inlineTailBatches(4));
        assertThat(w.bytes()).hasSize(2 * (Frames.BLOCK_HEADER_BYTES + 5 * FRAME));
        byte[] d = w.bytes().clone();
        int block1 = Frames.BLOCK_HEADER_BYTES + 5 * FRAME;
        d[block1 + Frames.BLOCK_HEADER_BYTES + 2 * FRAME + 120] ^= 0x01; // third frame of block 1 (21..23)
        rewrite(w, d);
        repairAndCheck(w, 20, 21);
        Manifest.LogData after = manifest(w.storage(), LOG).data();
        assertThat(after.segments()).hasSizeGreaterThanOrEqualTo(2);
        assertThat(after.segments().get(0).length()).as("cut at the damaged block").isEqualTo(block1);
    }

    @Test
    void aSegmentCutShortAtTheEndLosesOnlyTheCutFrame() {
        Log w = write(b -> b.inlineTailBytes(0));
        rewrite(w, Arrays.copyOf(w.bytes(), w.bytes().length - 5));
        repairAndCheck(w, 26, 27);
    }

    @Test
    void damageBelowTheLatestCheckpointIsTrimmedThroughIt() {
        Log w = write(b -> b.inlineTailBytes(0));
        AzureBlobWalStorageProvider a = open(w.storage());
        Fence f = claimAndReconcile(a, LOG);
        a.checkpoints().publish(LOG, f, 20, 1, new ByteArrayInputStream(randomBytes(SEED, 500)));
        byte[] d = w.bytes().clone();
        d[4 * (Frames.BLOCK_HEADER_BYTES + FRAME) + 100] ^= 0x01; // offsets 12..14, below the checkpoint
        rewrite(w, d);
        RepairReport r = repairAndCheck(w, 20, 12);
        assertThat(r.detail()).contains("checkpoint");
    }

    @Test
    void aWholeLogIsReportedClean() {
        Log w = write(b -> b.inlineTailBatches(4)); // two segment blocks, nothing inline
        AzureBlobWalStorageProvider b = open(w.storage());
        Fence g = claimAndReconcile(b, LOG);
        RepairReport r = b.repair(LOG, g);
        assertThat(r.isClean()).isTrue();
        assertThat(r.tailAfter()).isEqualTo(29);
        assertSameEntries(readAll(b, LOG), entriesOf(w.batches()));
    }
}
