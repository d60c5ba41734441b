package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recovery scan's decisions, on synthetic document sequences: which frames are committed, what is a torn tail
 * (discarded), and which committed offsets are corrupt (kept, so reads fail there instead of skipping them).
 */
class ScannerTest {

    private long nextIndex = 100;

    private static EncodedBatch batch(long first, int n) {
        List<byte[]> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add(new byte[]{(byte) (first + i), 1, 2});
        }
        return EncodedBatch.of(first, new BatchId(first, n), entries);
    }

    /** A frame of one batch {@code first..last} in group {@code g0..g1}. */
    private static byte[] frame(long epoch, long first, long last, long g0, long g1) {
        return Frames.assemble(epoch, g0, g1, List.of(batch(first, (int) (last - first + 1))));
    }

    private static byte[] damagedBody(byte[] frame) {
        byte[] d = frame.clone();
        d[d.length - 6] ^= 0x40; // a payload byte
        return d;
    }

    private static byte[] damagedHeader(byte[] frame) {
        byte[] d = frame.clone();
        d[30] ^= 0x01; // inside the first-offset field
        return d;
    }

    private FrameScanner scan(long watermark, byte[]... docs) {
        FrameScanner s = new FrameScanner(watermark);
        for (byte[] d : docs) {
            s.document(nextIndex++, d);
        }
        s.finish();
        return s;
    }

    /**
     * As {@link #scan}, but every document is copied into one reused buffer, larger than any document, whose bytes
     * after the document are left over from earlier ones or junk (as the recovery scan feeds the scanner).
     */
    private FrameScanner scanThroughBuffer(long watermark, byte[]... docs) {
        FrameScanner s = new FrameScanner(watermark);
        byte[] buf = new byte[4096];
        java.util.Arrays.fill(buf, (byte) 0x5A);
        for (byte[] d : docs) {
            System.arraycopy(d, 0, buf, 0, d.length);
            s.document(nextIndex++, buf, d.length);
        }
        s.finish();
        return s;
    }

    private static String items(FrameScanner s) {
        StringBuilder b = new StringBuilder();
        for (FrameScanner.Item it : s.accepted) {
            b.append(it.first()).append("..").append(it.last())
                    .append(it.index() == FrameIndex.CORRUPT ? "!" : "").append(' ');
        }
        return b.toString().trim();
    }

    @Test
    void aReusedBufferGivesTheVerdictsOfExactDocuments() {
        byte[][] docs = {frame(1, 0, 9, 0, 9), damagedBody(frame(1, 10, 19, 10, 19)), frame(1, 20, 24, 20, 29),
            frame(1, 25, 29, 20, 29), damagedHeader(frame(1, 30, 39, 30, 39)), frame(1, 40, 49, 40, 49)};
        FrameScanner exact = scan(4, docs);
        nextIndex = 100;
        FrameScanner buffered = scanThroughBuffer(4, docs);
        assertThat(items(buffered)).isEqualTo(items(exact)).isEqualTo("0..9 10..19! 20..24 25..29 30..39! 40..49");
        assertThat(buffered.accepted).isEqualTo(exact.accepted);
        assertThat(buffered.next).isEqualTo(exact.next);
        assertThat(buffered.leftovers).isEqualTo(exact.leftovers);
        assertThat(buffered.hiddenPayloadBytes).isEqualTo(exact.hiddenPayloadBytes).isEqualTo(15);

        // a document shorter than the buffer is judged by its own length: one byte cut off is damage
        byte[] whole = frame(1, 0, 9, 0, 9);
        byte[] buf = new byte[whole.length + 16];
        System.arraycopy(whole, 0, buf, 0, whole.length);
        FrameScanner cut = new FrameScanner(-1);
        assertThat(cut.document(1, buf, whole.length - 1)).isFalse();
        assertThat(new FrameScanner(-1).document(1, buf, whole.length)).isTrue();
        assertThat(Frames.checkBody(buf, whole.length, Frames.readHeader(buf, whole.length))).isNull();
        assertThat(Frames.checkBody(buf, buf.length, Frames.readHeader(buf, buf.length))).contains("frame length");
    }

    @Test
    void completeGroupsAreCommitted() {
        FrameScanner s = scan(-1, frame(1, 0, 9, 0, 9), frame(1, 10, 19, 10, 19));
        assertThat(items(s)).isEqualTo("0..9 10..19");
        assertThat(s.next - 1).isEqualTo(19);
        assertThat(s.leftovers).isZero();
    }

    @Test
    void multiFrameGroupIsCommittedOnlyWithItsLastFrame() {
        FrameScanner whole = scan(-1, frame(1, 0, 4, 0, 9), frame(1, 5, 9, 0, 9));
        assertThat(items(whole)).isEqualTo("0..4 5..9");
        assertThat(whole.next - 1).isEqualTo(9);

        FrameScanner torn = scan(-1, frame(1, 0, 9, 0, 9), frame(1, 10, 14, 10, 19));
        assertThat(items(torn)).isEqualTo("0..9");
        assertThat(torn.next - 1).isEqualTo(9);
        assertThat(torn.leftovers).isEqualTo(1);
    }

    @Test
    void abandonedGroupIsSupersededByTheRewrite() {
        FrameScanner s = scan(-1, frame(1, 0, 9, 0, 9), frame(1, 10, 14, 10, 19), frame(2, 10, 19, 10, 19));
        assertThat(items(s)).isEqualTo("0..9 10..19");
        assertThat(s.accepted.get(1).index()).isEqualTo(102);
        assertThat(s.leftovers).isEqualTo(1);
    }

    @Test
    void trailingDamagedFrameIsATornTail() {
        FrameScanner body = scan(-1, frame(1, 0, 9, 0, 9), damagedBody(frame(1, 10, 19, 10, 19)));
        assertThat(body.next - 1).isEqualTo(9);
        assertThat(items(body)).isEqualTo("0..9");
        assertThat(body.leftovers).isEqualTo(1);

        FrameScanner header = scan(-1, frame(1, 0, 9, 0, 9), damagedHeader(frame(1, 10, 19, 10, 19)));
        assertThat(header.next - 1).isEqualTo(9);
        assertThat(header.leftovers).isEqualTo(1);
    }

    @Test
    void damagedFrameFollowedByLaterFramesIsCorruptNotSkipped() {
        FrameScanner body = scan(-1, frame(1, 0, 9, 0, 9), damagedBody(frame(1, 10, 19, 10, 19)),
                frame(1, 20, 29, 20, 29));
        assertThat(items(body)).isEqualTo("0..9 10..19! 20..29");
        assertThat(body.next - 1).isEqualTo(29);

        FrameScanner header = scan(-1, frame(1, 0, 9, 0, 9), damagedHeader(frame(1, 10, 19, 10, 19)),
                frame(1, 20, 29, 20, 29));
        assertThat(items(header)).isEqualTo("0..9 10..19! 20..29");
    }

    @Test
    void damagedLeftoverRewrittenAtTheSameOffsetIsNotCorruption() {
        FrameScanner s = scan(-1, frame(1, 0, 9, 0, 9), damagedBody(frame(1, 10, 19, 10, 19)),
                frame(2, 10, 19, 10, 19));
        assertThat(items(s)).isEqualTo("0..9 10..19");
        assertThat(s.leftovers).isEqualTo(1);
    }

    @Test
    void damagedMiddleFrameOfAGroupIsCorruptOnceALaterGroupProvesTheCommit() {
        byte[] f1 = frame(1, 0, 4, 0, 14);
        byte[] f2 = damagedBody(frame(1, 5, 9, 0, 14));
        byte[] f3 = frame(1, 10, 14, 0, 14);
        FrameScanner proven = scan(-1, f1, f2, f3, frame(1, 15, 19, 15, 19));
        assertThat(items(proven)).isEqualTo("0..4 5..9! 10..14 15..19");

        FrameScanner unproven = scan(-1, f1, f2, f3);
        assertThat(unproven.next - 1).isEqualTo(-1);
        assertThat(unproven.accepted).isEmpty();
        assertThat(unproven.leftovers).isEqualTo(3);

        FrameScanner headerGone = scan(-1, f1, damagedHeader(frame(1, 5, 9, 0, 14)), f3,
                frame(1, 15, 19, 15, 19));
        assertThat(items(headerGone)).isEqualTo("0..4 5..9! 10..14 15..19");
    }

    @Test
    void framesAtOrBelowTheWatermarkAreIgnoredAndAStraddlingGroupIsKept() {
        FrameScanner s = scan(9, frame(1, 0, 9, 0, 9), frame(1, 10, 19, 10, 19));
        assertThat(items(s)).isEqualTo("10..19");

        // The group's first frame was in a deleted cycle file; its second frame straddles the watermark 12.
        FrameScanner straddle = scan(12, frame(1, 10, 14, 5, 19), frame(1, 15, 19, 5, 19));
        assertThat(items(straddle)).isEqualTo("10..14 15..19");
        assertThat(straddle.next - 1).isEqualTo(19);
        assertThat(straddle.hiddenPayloadBytes).isEqualTo(3 * 3);
    }

    @Test
    void missingOffsetsBeforeTheFirstFrameAreCorrupt() {
        FrameScanner s = scan(-1, frame(1, 10, 19, 10, 19));
        assertThat(items(s)).isEqualTo("0..9! 10..19");
    }

    @Test
    void staleFrameBelowTheCommittedPointIsALeftover() {
        FrameScanner s = scan(-1, frame(1, 0, 9, 0, 9), frame(1, 10, 19, 10, 19), frame(1, 5, 9, 5, 9));
        assertThat(items(s)).isEqualTo("0..9 10..19");
        assertThat(s.leftovers).isEqualTo(1);
    }
}
