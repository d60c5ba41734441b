package dev.lattice.provider.postgres;

import dev.lattice.conformance.WalTestSupport;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The batch frame codec: round trips, the documented overhead, and every way a damaged frame is caught. */
class BatchFrameTest {

    private static final LogId LOG = new LogId("frame", 0);

    /** Empty entries and lengths needing 1, 2 and 3 varint bytes round-trip byte-exact, as fresh arrays. */
    @Test
    void roundTripsEveryLengthClass() {
        List<byte[]> entries = new ArrayList<>();
        for (int len : new int[] {0, 1, 127, 128, 300, 16_383, 16_384, 70_000, 0}) {
            entries.add(WalTestSupport.randomBytes(len, len));
        }
        byte[] frame = BatchFrame.encode(42, entries);
        long payload = entries.stream().mapToLong(e -> e.length).sum();
        assertThat(frame.length).isEqualTo(payload + BatchFrame.FIXED_OVERHEAD
                + (1 + 1 + 1 + 2 + 2 + 2 + 3 + 3 + 1));
        List<byte[]> back = BatchFrame.decode(LOG, 42, entries.size(), frame);
        assertThat(back).hasSize(entries.size());
        for (int i = 0; i < entries.size(); i++) {
            assertThat(back.get(i)).isEqualTo(entries.get(i)).isNotSameAs(entries.get(i));
        }
    }

    /** A flipped bit anywhere, another first offset, a wrong count or a truncated frame is CorruptLogException. */
    @Test
    void damageIsDetected() {
        List<byte[]> entries = List.of(new byte[] {1, 2, 3}, new byte[] {4}, new byte[0]);
        byte[] frame = BatchFrame.encode(7, entries);
        for (int i = 0; i < frame.length; i++) {
            byte[] bad = frame.clone();
            bad[i] ^= 0x10;
            assertThatThrownBy(() -> BatchFrame.decode(LOG, 7, 3, bad)).isInstanceOf(CorruptLogException.class);
        }
        assertThatThrownBy(() -> BatchFrame.decode(LOG, 8, 3, frame)).isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("CRC32C");
        assertThatThrownBy(() -> BatchFrame.decode(LOG, 7, 2, frame)).isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("holds 3 entries");
        assertThatThrownBy(() -> BatchFrame.decode(LOG, 7, 3, Arrays.copyOf(frame, 4)))
                .isInstanceOf(CorruptLogException.class).hasMessageContaining("too short");
        CorruptLogException e = org.assertj.core.api.Assertions.catchThrowableOfType(CorruptLogException.class,
                () -> BatchFrame.decode(LOG, 7, 3, Arrays.copyOf(frame, frame.length - 1)));
        assertThat(e.offset()).isEqualTo(7);
        assertThat(e.log()).isEqualTo(LOG);
    }
}
