package dev.lattice.provider.azure.blob;

import com.azure.core.util.BinaryData;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.specialized.AppendBlobClient;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.testbackends.AzuriteExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Damage is corruption, never a torn tail. Every byte of a segment below its committed length was acknowledged
 * (the manifest upload that recorded the length came after the append), so a flipped byte anywhere (block header,
 * frame header, payload, checksum trailer), in a middle frame or in the last one, and a blob cut short in the middle
 * or at the end, is a {@link CorruptLogException} naming the first offset that cannot be read; the committed tail
 * stays where the manifest has it (reconcile of a fresh instance reports it unchanged). Only bytes past the committed
 * length (a crashed writer's last, unacknowledged append) are left out.
 *
 * <p>Layout used: 10 batches of 3 entries x 50 bytes, one block each ({@code inlineTailBytes = 0}): block {@code i}
 * holds offsets {@code 3i .. 3i+2}; the middle block is 4 (offsets 12..14), the last is 9 (27..29).
 */
@ExtendWith(AzuriteExtension.class)
class DamageTest extends BlobTestSupport {

    private static final int BATCHES = 10;
    private static final int PER_BATCH = 3;
    private static final int ENTRY_BYTES = 50;
    /** One block: block header + frame header + entries (length prefix + payload) + CRC. */
    private static final int BLOCK_BYTES = Frames.BLOCK_HEADER_BYTES + Frames.FRAME_HEADER_BYTES
            + PER_BATCH * (Frames.PER_ENTRY_BYTES + ENTRY_BYTES) + Frames.CRC_BYTES;
    private static final long TAIL = BATCHES * PER_BATCH - 1;

    private record Written(AzuriteBlobs.Storage storage, Manifest.SegmentRef segment, byte[] bytes,
                           List<EncodedBatch> batches) {
    }

    private Written write() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0));
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        List<EncodedBatch> batches = new ArrayList<>();
        for (int i = 0; i < BATCHES; i++) {
            EncodedBatch b = batch(SEED + i, (long) i * PER_BATCH, PER_BATCH, ENTRY_BYTES);
            a.append(LOG, f, b);
            batches.add(b);
        }
        Manifest m = manifest(s, LOG);
        assertThat(m.data().segments()).hasSize(1);
        Manifest.SegmentRef seg = m.data().segments().get(0);
        assertThat(seg.length()).isEqualTo((long) BATCHES * BLOCK_BYTES);
        byte[] bytes = blob(s, seg.name()).downloadContent().toBytes();
        assertThat(bytes).hasSize(BATCHES * BLOCK_BYTES);
        return new Written(s, seg, bytes, batches);
    }

    private static BlobClient blob(AzuriteBlobs.Storage s, String name) {
        return s.client.getBlobContainerClient(s.container).getBlobClient(name);
    }

    /** Replaces an append blob's content (Azurite cannot rewrite an append blob in place: delete and recreate). */
    private static void rewrite(AzuriteBlobs.Storage s, String name, byte[] bytes) {
        AppendBlobClient c = blob(s, name).getAppendBlobClient();
        c.delete();
        c.create();
        if (bytes.length > 0) {
            c.appendBlock(new ByteArrayInputStream(bytes), bytes.length);
        }
    }

    /** The damage is reported by read on a fresh instance, at the expected offset; reconcile keeps the tail. */
    private void assertCorruptAt(Written w, long expectedOffset, String messagePart) {
        AzureBlobWalStorageProvider b = open(w.storage());
        Fence g = b.claim(LOG);
        ReconcileResult r = b.reconcile(LOG, g);
        assertThat(r.committedTail()).as("the committed tail does not go back").isEqualTo(TAIL);
        CorruptLogException e = catchThrowableOfType(() -> readAll(b, LOG), CorruptLogException.class);
        assertThat(e).as("read reports the damage").isNotNull();
        assertThat(e.offset()).as(e.getMessage()).isEqualTo(expectedOffset);
        assertThat(e.getMessage()).contains(w.segment().name()).contains(messagePart);
        assertThat(e.log()).isEqualTo(LOG);
        // Reading from before the damage delivers the intact entries first, then fails at the same offset.
        List<LogEntry> before = new ArrayList<>();
        CorruptLogException again = catchThrowableOfType(() -> {
            long from = -1;
            while (true) {
                List<LogEntry> page = b.read(LOG, from, 1, 1 << 20).entries();
                before.addAll(page);
                from = page.get(page.size() - 1).offset();
            }
        }, CorruptLogException.class);
        assertThat(again.offset()).isEqualTo(expectedOffset);
        assertSameEntries(before, entriesOf(w.batches()).subList(0, (int) expectedOffset));
        assertThat(b.state(LOG).committedTail()).isEqualTo(TAIL);
    }

    /**
     * Block layout (218 bytes): 0-3 block magic, 4-7 block length, 8-11 frame magic, 12-15 frame length, 16-23
     * epoch, 24-39 batch id, 40-47 first offset, 48-51 entry count, then 3 x (4-byte length + 50-byte payload) at
     * 52-213, 214-217 CRC32C.
     */
    @ParameterizedTest(name = "{0} of block {1}, byte {2}")
    @CsvSource({
            // region, block, byte within the block, first offset that cannot be read
            "block header magic, 4, 0, 12",
            // a longer block swallows the next block's header, read as a frame: frame 4 itself is intact
            "block header length, 4, 6, 15",
            "frame header magic, 4, 8, 12",
            "frame header length, 4, 13, 12",
            "frame header epoch, 4, 19, 12",
            "frame header batch id, 4, 30, 12",
            "frame header first offset, 4, 43, 12",
            "frame header entry count, 4, 49, 12",
            "entry length, 4, 52, 12",
            "payload, 4, 100, 12",
            "checksum trailer, 4, 215, 12",
            "block header magic, 9, 1, 27",
            "frame header length, 9, 14, 27",
            "frame header first offset, 9, 40, 27",
            "payload, 9, 150, 27",
            "checksum trailer, 9, 217, 27"})
    void aFlippedByteIsCorruptionAtTheFirstOffsetThatCannotBeRead(String region, int block, int within,
                                                                 long expected) {
        assertThat(BLOCK_BYTES).isEqualTo(218);
        Written w = write();
        byte[] damaged = w.bytes().clone();
        damaged[block * BLOCK_BYTES + within] ^= 0x20;
        rewrite(w.storage(), w.segment().name(), damaged);
        assertCorruptAt(w, expected, "segment bytes at position ");
    }

    @ParameterizedTest(name = "cut at byte {0}")
    @CsvSource({
            "872, 12, before its committed length",   // exactly after block 3: the middle is gone
            "1000, 12, before its committed length",  // inside block 4
            "2100, 27, before its committed length",  // inside the last block
            "2179, 27, before its committed length",  // the last byte missing
            "0, 0, before its committed length"})     // nothing left
    void aSegmentCutShortIsCorruptionAtTheFirstLostOffset(int keep, long expected, String message) {
        Written w = write();
        rewrite(w.storage(), w.segment().name(), Arrays.copyOf(w.bytes(), keep));
        assertCorruptAt(w, expected, message);
    }

    @Test
    void aMissingSegmentIsCorruption() {
        Written w = write();
        blob(w.storage(), w.segment().name()).delete();
        assertCorruptAt(w, 0, "does not exist");
    }

    /** A crashed writer's last append (past the committed length, never acknowledged) is the only thing left out. */
    @Test
    void aTornAppendPastTheCommittedLengthIsLeftOut() {
        Written w = write();
        byte[] torn = Arrays.copyOf(w.bytes(), w.bytes().length + 100);
        System.arraycopy(w.bytes(), 0, torn, w.bytes().length, 100); // half a block, as a crash mid-append leaves it
        rewrite(w.storage(), w.segment().name(), torn);
        AzureBlobWalStorageProvider b = open(w.storage());
        Fence g = claimAndReconcile(b, LOG);
        assertSameEntries(readAll(b, LOG), entriesOf(w.batches()));
        EncodedBatch next = batch(SEED + 99, TAIL + 1, 2, 10);
        b.append(LOG, g, next);
        List<EncodedBatch> all = new ArrayList<>(w.batches());
        all.add(next);
        assertSameEntries(readAll(open(w.storage()), LOG), entriesOf(all));
    }

    /** A manifest whose checksum is valid but whose inline tail is damaged or short fails reconcile. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"damaged inline frame", "tail above the stored frames"})
    void aManifestThatDoesNotHoldItsTailFailsReconcile(String kind) {
        AzuriteBlobs.Storage s = storage(b -> b);
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        a.append(LOG, f, batch(SEED, 0, 4, 20));
        a.append(LOG, f, batch(SEED + 1, 4, 4, 20));
        Manifest m = manifest(s, LOG);
        Manifest.LogData d = m.data();
        assertThat(d.inlineBatches()).isEqualTo(2);
        Manifest.LogData bad;
        long expected;
        if (kind.startsWith("damaged")) {
            byte[] inline = d.inline().clone();
            int secondFrame = Frames.FRAME_HEADER_BYTES + 4 * (Frames.PER_ENTRY_BYTES + 20) + Frames.CRC_BYTES;
            inline[secondFrame + 60] ^= 0x01;
            bad = new Manifest.LogData(d.tail(), d.watermark(), d.segments(), inline, d.inlineBatches(),
                    d.inlinePayloadBytes());
            expected = 4;
        } else {
            bad = new Manifest.LogData(d.tail() + 5, d.watermark(), d.segments(), d.inline(), d.inlineBatches(),
                    d.inlinePayloadBytes());
            expected = 8;
        }
        blob(s, "t/0000/manifest").upload(BinaryData.fromBytes(m.withData(bad).nextWrite().encode()), true);
        AzureBlobWalStorageProvider b = open(s);
        Fence g = b.claim(LOG);
        CorruptLogException e = catchThrowableOfType(() -> b.reconcile(LOG, g), CorruptLogException.class);
        assertThat(e).isNotNull();
        assertThat(e.offset()).as(e.getMessage()).isEqualTo(expected);
        assertThat(catchThrowableOfType(() -> readAll(b, LOG), CorruptLogException.class).offset())
                .isEqualTo(expected);
    }

    /** A manifest replaced by an older copy (lower tail) under a running instance is corruption, not a new tail. */
    @Test
    void aCommittedTailThatGoesBackIsCorruption() {
        AzuriteBlobs.Storage s = storage(b -> b);
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        a.append(LOG, f, batch(SEED, 0, 4, 20));
        Manifest old = manifest(s, LOG);
        a.append(LOG, f, batch(SEED + 1, 4, 4, 20));
        assertThat(a.state(LOG).committedTail()).isEqualTo(7);
        // An older manifest (tail 3) put back with a higher generation, as a restore from a backup would.
        Manifest rolledBack = new Manifest(old.epoch(), old.generation() + 10, 1, 2, old.data(), old.checkpoints());
        blob(s, "t/0000/manifest").upload(BinaryData.fromBytes(rolledBack.encode()), true);
        CorruptLogException e = catchThrowableOfType(() -> a.state(LOG), CorruptLogException.class);
        assertThat(e).isNotNull();
        assertThat(e.offset()).isEqualTo(4);
        assertThat(e.getMessage()).contains("went back from 7 to 3");
        blob(s, "t/0000/manifest").delete();
        assertThat(catchThrowableOfType(() -> a.read(LOG, -1, 10, 1000), CorruptLogException.class)
                .getMessage()).contains("no longer exists");
    }

    /** Through the engine: a damaged middle block of a tree's log makes its open fail with the corruption. */
    @Test
    void theEnginesOpenFailsOnADamagedMiddleFrame() throws Exception {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0));
        Lattice writer = Lattice.open(LatticeConfig.builder().provider(s.open(), true).partitions(1).build());
        try {
            Tree t = writer.tree("eng");
            for (int i = 0; i < 30; i++) {
                t.put(String.format("k%03d", i), new byte[40]);
            }
            LogId log = new LogId("eng", 0);
            Manifest.SegmentRef seg = manifest(s, log).data().segments().get(0);
            byte[] bytes = blob(s, seg.name()).downloadContent().toBytes();
            assertThat(seg.blocks()).isGreaterThanOrEqualTo(20);
            byte[] damaged = bytes.clone();
            damaged[bytes.length / 2] ^= 0x04; // inside a middle block: a frame of the acknowledged puts
            rewrite(s, seg.name(), damaged);
            Lattice reader = Lattice.open(LatticeConfig.builder().provider(s.open(), true).partitions(1).build());
            try {
                Throwable e = org.assertj.core.api.Assertions.catchThrowable(() -> reader.tree("eng"));
                assertThat(e).as("opening the tree fails").isNotNull();
                System.out.println("engine open of the damaged tree failed: " + e);
                CorruptLogException c = null;
                for (Throwable x = e; x != null && c == null; x = x.getCause()) {
                    if (x instanceof CorruptLogException cle) {
                        c = cle;
                    }
                }
                assertThat(c).as("the cause chain names the corruption: " + e).isNotNull();
                assertThat(c.log()).isEqualTo(log);
                assertThat(c.offset()).isBetween(1L, 29L);
            } finally {
                reader.close();
            }
        } finally {
            try {
                writer.close(); // fenced by the reader's claim: its close may report that
            } catch (RuntimeException ignored) {
                // expected for a fenced owner
            }
        }
    }
}
