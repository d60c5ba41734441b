package dev.lattice.provider.azure.blob;

import com.azure.core.util.BinaryData;
import com.azure.storage.blob.BlobClient;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReconcileResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static dev.lattice.conformance.WalTestSupport.readFully;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Crashes between the steps of the protocol, injected with the provider's step hook: the writer's instance stops
 * at that point (its exception propagates, it is never used again) and a new instance recovers. Acknowledged
 * batches are never lost, bytes that were appended but never committed are never read, and the next append is dense.
 * Also lost responses (the request landed, the answer did not) and corrupted blobs.
 */
class CrashRecoveryTest extends BlobTestSupport {

    /** The exception a simulated crash throws. */
    static final class SimulatedCrash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SimulatedCrash(String where) {
            super("simulated crash " + where);
        }
    }

    /**
     * Crash after a block was appended and before the manifest recorded it (inline tail off: every commit appends;
     * on: a flush). The new writer sees exactly the acknowledged batches, its next append is dense and lands in a new
     * segment past the orphan bytes, and the orphan bytes are still in the old segment but never read.
     */
    @ParameterizedTest(name = "inlineTailBytes={0}")
    @ValueSource(ints = {0, 1024})
    void crashBetweenAppendAndManifestUpdate(int inline) {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(inline));
        AzureBlobWalStorageProvider a = open(s);
        Fence fa = claimAndReconcile(a, LOG);
        List<EncodedBatch> acked = new ArrayList<>();
        long next = 0;
        for (int i = 0; i < 10; i++) {
            EncodedBatch b = batch(SEED + i, next, 2, 120);
            a.append(LOG, fa, b);
            acked.add(b);
            next = b.lastOffset() + 1;
        }
        AtomicBoolean appended = new AtomicBoolean();
        a.stepHook((step, log) -> {
            if (step == AzureBlobWalStorageProvider.Step.BLOCK_APPENDED) {
                appended.set(true);
            }
            if (step == AzureBlobWalStorageProvider.Step.BEFORE_MANIFEST_WRITE && appended.get()) {
                throw new SimulatedCrash("between append and manifest update");
            }
        });
        long crashAt = next;
        // with the inline tail on, keep writing until a commit flushes (and crashes)
        assertThatThrownBy(() -> {
            long n = crashAt;
            for (int i = 0; i < 100; i++) {
                EncodedBatch b = batch(SEED + 100 + i, n, 2, 120);
                a.append(LOG, fa, b);
                acked.add(b);
                n = b.lastOffset() + 1;
            }
        }).isInstanceOf(SimulatedCrash.class);
        assertThat(appended).isTrue();
        Manifest before = manifest(s, LOG);
        Manifest.SegmentRef active = before.data().active();
        assertThat(blobLength(s, active.name())).as("orphan bytes past the committed length")
                .isGreaterThan(active.length());

        AzureBlobWalStorageProvider b = open(s);
        Fence fb = claimAndReconcile(b, LOG);
        List<LogEntry> expected = entriesOf(acked);
        assertSameEntries(readAll(b, LOG), expected);
        long tail = b.state(LOG).committedTail();
        assertThat(tail).isEqualTo(expected.get(expected.size() - 1).offset());
        // next append is dense; force it to reach a segment by turning it into a flush when the inline tail is on
        EncodedBatch dense = batch(SEED + 999, tail + 1, 3, inline == 0 ? 50 : 400);
        b.append(LOG, fb, dense);
        List<EncodedBatch> all = new ArrayList<>(acked);
        all.add(dense);
        for (int i = 0; i < 5; i++) {
            EncodedBatch more = batch(SEED + 2000 + i, all.get(all.size() - 1).lastOffset() + 1, 2, 300);
            b.append(LOG, fb, more);
            all.add(more);
        }
        assertThat(b.stats().snapshot().foreignBytesSkipped()).as("rolled past the orphan bytes").isEqualTo(1);
        assertSameEntries(readAll(b, LOG), entriesOf(all));
        assertSameEntries(readAll(open(s), LOG), entriesOf(all));
    }

    /** Crash right after a new segment blob was created: the empty orphan is ignored, and swept by a later trim. */
    @Test
    void crashAfterSegmentCreation() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0).maxBlocksPerSegment(2));
        AzureBlobWalStorageProvider a = open(s);
        Fence fa = claimAndReconcile(a, LOG);
        EncodedBatch b0 = batch(SEED, 0, 2, 10);
        EncodedBatch b1 = batch(SEED + 1, 2, 2, 10);
        a.append(LOG, fa, b0);
        a.append(LOG, fa, b1);
        a.stepHook((step, log) -> {
            if (step == AzureBlobWalStorageProvider.Step.SEGMENT_CREATED) {
                throw new SimulatedCrash("after creating a segment");
            }
        });
        assertThatThrownBy(() -> a.append(LOG, fa, batch(SEED + 2, 4, 2, 10))).isInstanceOf(SimulatedCrash.class);
        assertThat(blobsOf(s, LOG)).hasSize(3);
        AzureBlobWalStorageProvider b = open(s);
        Fence fb = claimAndReconcile(b, LOG);
        assertSameEntries(readAll(b, LOG), entriesOf(b0, b1));
        EncodedBatch b2 = batch(SEED + 3, 4, 2, 10);
        b.append(LOG, fb, b2);
        b.trim(LOG, fb, 1);
        assertThat(blobsOf(s, LOG)).as("manifest + the live segments only").hasSize(1 + manifest(s, LOG).data()
                .segments().size());
        assertSameEntries(readAll(open(s), LOG), entriesOf(b1, b2));
    }

    /**
     * An append whose response is lost (it landed): the same writer's retry finds "append position not met", sees its
     * own frames there, and counts them as landed: stored once, no second block.
     */
    @Test
    void lostAppendResponseIsRecognisedOnRetry() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0));
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        EncodedBatch b0 = batch(SEED, 0, 2, 10);
        a.append(LOG, f, b0);
        AtomicInteger fired = new AtomicInteger();
        a.stepHook((step, log) -> {
            if (step == AzureBlobWalStorageProvider.Step.BLOCK_APPENDED && fired.getAndIncrement() == 0) {
                throw new ProviderUnavailableException(log, "injected: append response lost", null);
            }
        });
        EncodedBatch b1 = batch(SEED + 1, 2, 3, 10);
        a.stage(LOG, f, b1);
        assertThatThrownBy(() -> a.commit(LOG, f, 4)).isInstanceOf(ProviderUnavailableException.class);
        a.stage(LOG, f, b1);
        a.commit(LOG, f, 4);
        assertThat(a.stats().snapshot().retriedAppendsFoundLanded()).isEqualTo(1);
        Manifest m = manifest(s, LOG);
        assertThat(m.data().segments()).hasSize(1);
        assertThat(m.data().segments().get(0).blocks()).isEqualTo(2);
        assertThat(blobLength(s, m.data().segments().get(0).name())).isEqualTo(m.data().segments().get(0).length());
        assertSameEntries(readAll(open(s), LOG), entriesOf(b0, b1));
    }

    /**
     * A manifest upload whose response is lost (it landed): the retried commit finds the tail already there and
     * does nothing more; the batch is stored once.
     */
    @ParameterizedTest(name = "inlineTailBytes={0}")
    @ValueSource(ints = {0, 65536})
    void lostManifestResponseIsRecognisedOnRetry(int inline) {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(inline));
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        EncodedBatch b0 = batch(SEED, 0, 2, 10);
        a.append(LOG, f, b0);
        AtomicInteger fired = new AtomicInteger();
        a.stepHook((step, log) -> {
            if (step == AzureBlobWalStorageProvider.Step.MANIFEST_WRITTEN && fired.getAndIncrement() == 0) {
                throw new ProviderUnavailableException(log, "injected: manifest response lost", null);
            }
        });
        EncodedBatch b1 = batch(SEED + 1, 2, 3, 10);
        a.stage(LOG, f, b1);
        assertThatThrownBy(() -> a.commit(LOG, f, 4)).isInstanceOf(ProviderUnavailableException.class);
        a.commit(LOG, f, 4);
        EncodedBatch b2 = batch(SEED + 2, 5, 1, 10);
        a.append(LOG, f, b2);
        assertSameEntries(readAll(open(s), LOG), entriesOf(b0, b1, b2));
        if (inline == 0) {
            assertThat(manifest(s, LOG).data().segments().get(0).blocks()).isEqualTo(3);
        }
    }

    /** Crash after a checkpoint blob was uploaded but before the manifest named it: the old one stays latest. */
    @Test
    void crashBeforeACheckpointIsPublished() {
        AzuriteBlobs.Storage s = storage(b -> b);
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        a.append(LOG, f, batch(SEED, 0, 4, 10));
        byte[] first = randomBytes(SEED, 5000);
        CheckpointInfo i1 = a.checkpoints().publish(LOG, f, 1, 1, new ByteArrayInputStream(first));
        a.stepHook((step, log) -> {
            if (step == AzureBlobWalStorageProvider.Step.CHECKPOINT_UPLOADED) {
                throw new SimulatedCrash("after uploading a checkpoint");
            }
        });
        assertThatThrownBy(() -> a.checkpoints().publish(LOG, f, 3, 1,
                new ByteArrayInputStream(randomBytes(SEED + 1, 7000)))).isInstanceOf(SimulatedCrash.class);
        AzureBlobWalStorageProvider b = open(s);
        Fence g = claimAndReconcile(b, LOG);
        assertThat(b.checkpoints().latest(LOG)).contains(i1);
        assertThat(readFully(b.checkpoints().open(LOG, i1))).isEqualTo(first);
        b.trim(LOG, g, 0);
        assertThat(blobsOf(s, LOG)).as("the unpublished checkpoint blob was swept").hasSize(2);
    }

    /** A segment whose bytes were altered is reported as corrupt, never skipped. */
    @Test
    void aCorruptSegmentIsReported() {
        AzuriteBlobs.Storage s = storage(b -> b.inlineTailBytes(0));
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        a.append(LOG, f, batch(SEED, 0, 4, 100));
        a.append(LOG, f, batch(SEED + 1, 4, 4, 100));
        Manifest.SegmentRef seg = manifest(s, LOG).data().segments().get(0);
        BlobClient blob = s.client.getBlobContainerClient(s.container).getBlobClient(seg.name());
        byte[] bytes = blob.downloadContent().toBytes();
        bytes[bytes.length - 60] ^= 0x01;
        blob.delete();
        blob.getAppendBlobClient().create();
        blob.getAppendBlobClient().appendBlock(new ByteArrayInputStream(bytes), bytes.length);
        AzureBlobWalStorageProvider b = open(s);
        assertThatThrownBy(() -> readAll(b, LOG)).isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("CRC32C");
    }

    /** A manifest whose bytes were altered is reported as corrupt by every call that reads it. */
    @Test
    void aCorruptManifestIsReported() {
        AzuriteBlobs.Storage s = storage(b -> b);
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        a.append(LOG, f, batch(SEED, 0, 4, 100));
        BlobClient blob = s.client.getBlobContainerClient(s.container).getBlobClient("t/0000/manifest");
        byte[] bytes = blob.downloadContent().toBytes();
        bytes[40] ^= 0x10;
        blob.upload(BinaryData.fromBytes(bytes), true);
        AzureBlobWalStorageProvider b = open(s);
        assertThatThrownBy(() -> b.state(LOG)).isInstanceOf(CorruptLogException.class);
        assertThatThrownBy(() -> b.read(LOG, -1, 10, 1000)).isInstanceOf(CorruptLogException.class);
        assertThatThrownBy(() -> b.claim(LOG)).isInstanceOf(CorruptLogException.class);
    }

    /** A checkpoint whose bytes were altered (same length) fails its checksum when read to the end. */
    @Test
    void aCorruptCheckpointIsReported() throws Exception {
        AzuriteBlobs.Storage s = storage(b -> b);
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        a.append(LOG, f, batch(SEED, 0, 4, 100));
        byte[] data = randomBytes(SEED, 3000);
        CheckpointInfo info = a.checkpoints().publish(LOG, f, 3, 1, new ByteArrayInputStream(data));
        String name = manifest(s, LOG).latestCheckpoint().name();
        data[1234] ^= 0x01;
        s.client.getBlobContainerClient(s.container).getBlobClient(name).upload(BinaryData.fromBytes(data), true);
        AzureBlobWalStorageProvider b = open(s);
        try (InputStream in = b.checkpoints().open(LOG, info)) {
            assertThatThrownBy(() -> in.readAllBytes()).isInstanceOf(CorruptLogException.class);
        }
    }

    /** Reconcile after a crash with staged batches reports them rolled back and leaves the tail alone. */
    @Test
    void reconcileRollsBackStagedBatches() {
        AzuriteBlobs.Storage s = storage(b -> b);
        AzureBlobWalStorageProvider a = open(s);
        Fence f = claimAndReconcile(a, LOG);
        a.append(LOG, f, batch(SEED, 0, 2, 10));
        a.stage(LOG, f, batch(SEED + 1, 2, 2, 10));
        a.stage(LOG, f, batch(SEED + 2, 4, 2, 10));
        ReconcileResult r = a.reconcile(LOG, f);
        assertThat(r.rolledBackBatches()).isEqualTo(2);
        assertThat(r.committedTail()).isEqualTo(1);
        assertThat(a.state(LOG).committedTail()).isEqualTo(1);
    }
}
