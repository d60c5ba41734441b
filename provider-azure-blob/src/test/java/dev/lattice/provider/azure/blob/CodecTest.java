package dev.lattice.provider.azure.blob;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.payloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The byte formats: frames, blocks, the incremental block parser and the manifest. No backend needed. */
class CodecTest {

    private static final LogId LOG = new LogId("codec", 3);

    private static Frames.Frame frame(long first, int count, int size) {
        return Frames.encode(7, BatchId.random(), first, payloads(11, first, count, size));
    }

    /** A frame round-trips its entries, epoch, id and offsets; its length is the documented formula. */
    @Test
    void frameRoundTrip() {
        List<byte[]> ps = new ArrayList<>(payloads(5, 10, 4, 33));
        ps.add(new byte[0]);
        BatchId id = BatchId.random();
        Frames.Frame f = Frames.encode(9, id, 10, ps);
        assertThat(f.bytes()).hasSize((int) Frames.frameLength(5, 4 * 33));
        Frames.Frame back = Frames.parseFrame(LOG, f.bytes(), 0, f.bytes().length, 123);
        assertThat(back.epoch()).isEqualTo(9);
        assertThat(back.id()).isEqualTo(id);
        assertThat(back.firstOffset()).isEqualTo(10);
        assertThat(back.lastOffset()).isEqualTo(14);
        assertThat(back.payloadBytes()).isEqualTo(132);
        assertThat(back.blockPos()).isEqualTo(123);
        assertThat(back.payloads(10)).usingElementComparator(Arrays::compare).containsExactlyElementsOf(ps);
        assertThat(back.payloads(13)).hasSize(2);
        assertThat(back.payloadBytesThrough(11)).isEqualTo(66);
        Frames.Frame tail = back.after(12);
        assertThat(tail.firstOffset()).isEqualTo(13);
        assertThat(tail.id()).isEqualTo(id);
        assertThat(tail.payloads(13)).usingElementComparator(Arrays::compare).containsExactlyElementsOf(ps.subList(3, 5));
    }

    /** Any single flipped bit of a frame is detected. */
    @Test
    void everyFlippedByteOfAFrameIsDetected() {
        Frames.Frame f = frame(0, 3, 20);
        for (int i = 0; i < f.bytes().length; i++) {
            byte[] copy = f.bytes().clone();
            copy[i] ^= 0x04;
            int at = i;
            assertThatThrownBy(() -> Frames.parseFrame(LOG, copy, 0, copy.length, -1))
                    .as("flip at byte %d", at).isInstanceOf(CorruptLogException.class);
        }
    }

    /** Blocks fed to the parser split at every possible byte position give the same frames and block count. */
    @Test
    void blockParserHandlesEverySplit() {
        List<Frames.Frame> b1 = List.of(frame(0, 2, 10), frame(2, 1, 0), frame(3, 3, 7));
        List<Frames.Frame> b2 = List.of(frame(6, 1, 50));
        byte[] a = Frames.block(b1);
        byte[] b = Frames.block(b2);
        byte[] all = new byte[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        for (int split = 0; split <= all.length; split++) {
            BlockParser p = new BlockParser(LOG, 1000);
            List<Frames.Frame> out = new ArrayList<>(p.feed(Arrays.copyOfRange(all, 0, split)));
            out.addAll(p.feed(Arrays.copyOfRange(all, split, all.length)));
            assertThat(out).hasSize(4);
            assertThat(p.blocks()).isEqualTo(2);
            assertThat(p.atBoundary()).isTrue();
            assertThat(p.position()).isEqualTo(1000 + all.length);
            assertThat(out.get(0).blockPos()).isEqualTo(1000);
            assertThat(out.get(3).blockPos()).isEqualTo(1000 + a.length);
            for (int i = 0; i < 3; i++) {
                assertThat(out.get(i).sameBytes(b1.get(i))).isTrue();
            }
        }
        BlockParser cut = new BlockParser(LOG, 0);
        cut.feed(Arrays.copyOf(all, all.length - 3));
        assertThat(cut.atBoundary()).isFalse();
        byte[] badMagic = all.clone();
        badMagic[0] ^= 1;
        assertThatThrownBy(() -> new BlockParser(LOG, 0).feed(badMagic)).isInstanceOf(CorruptLogException.class);
    }

    /** The manifest round-trips every field and rejects any damage. */
    @Test
    void manifestRoundTripAndDamage() {
        byte[] inline = Frames.concat(List.of(frame(30, 2, 5), frame(32, 1, 9)));
        Manifest m = new Manifest(4, 17, 1, 2, new Manifest.LogData(32, 5,
                List.of(new Manifest.SegmentRef("t/0003/seg-x", 3, 4, 29, 100, 5000, 12, 777)), inline, 2, 19),
                List.of(new Manifest.CheckpointRef("t/0003/ckpt-y", 5, 2, 1234, 3, 99, 1))).nextWrite();
        byte[] bytes = m.encode();
        Manifest back = Manifest.decode(LOG, bytes);
        assertThat(back.epoch()).isEqualTo(4);
        assertThat(back.generation()).isEqualTo(18);
        assertThat(back.sameWrite(m)).isTrue();
        assertThat(back.data()).isEqualTo(m.data());
        assertThat(back.checkpoints()).isEqualTo(m.checkpoints());
        assertThat(back.data().inlineFrames(LOG)).hasSize(2);
        assertThat(back.data().retainedPayloadBytes()).isEqualTo(777 + 19);
        for (int i = 0; i < bytes.length; i += 7) {
            byte[] copy = bytes.clone();
            copy[i] ^= 0x20;
            assertThatThrownBy(() -> Manifest.decode(LOG, copy)).isInstanceOf(CorruptLogException.class);
        }
        assertThatThrownBy(() -> Manifest.decode(LOG, Arrays.copyOf(bytes, bytes.length - 1)))
                .isInstanceOf(CorruptLogException.class);
    }

    /** Blob names carry the creator's epoch, which the sweep reads. */
    @Test
    void epochsAreReadFromBlobNames() {
        assertThat(AzureBlobWalStorageProvider.epochOfName("p/t/0001/seg-0000000000000000012-e0000000000000000007-"
                + "0a1b2c3d")).isEqualTo(7);
        assertThat(AzureBlobWalStorageProvider.epochOfName("t/0001/ckpt-0000000000000000000-e0000000000000000003-"
                + "ffffffff")).isEqualTo(3);
        assertThat(AzureBlobWalStorageProvider.epochOfName("t/0001/manifest")).isEqualTo(-1);
        assertThat(AzureBlobWalStorageProvider.epochOfName("t/0001/seg-x")).isEqualTo(-1);
    }
}
