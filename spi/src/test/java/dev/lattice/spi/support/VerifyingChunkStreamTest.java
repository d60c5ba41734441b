package dev.lattice.spi.support;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class VerifyingChunkStreamTest {

    private static final LogId LOG = new LogId("t", 1);
    private static final byte[][] CHUNKS = {{1, 2, 3}, {4}, {5, 6}};

    private static byte[] drain(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[2];
        int n;
        while ((n = in.read(buf, 0, buf.length)) >= 0) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    private static int crc(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return (int) c.getValue();
    }

    @Test
    void deliversTheChunksInOrderAndChecksTheSize() throws IOException {
        CheckpointInfo info = new CheckpointInfo(41, 1, 6, 1);
        assertThat(drain(VerifyingChunkStream.checkpoint(LOG, info, 3, i -> CHUNKS[i])))
                .containsExactly(1, 2, 3, 4, 5, 6);
        CheckpointInfo longer = new CheckpointInfo(41, 1, 7, 1);
        assertThatThrownBy(() -> drain(VerifyingChunkStream.checkpoint(LOG, longer, 3, i -> CHUNKS[i])))
                .isInstanceOf(CorruptLogException.class).hasMessageContaining("holds 6 bytes, its record says 7");
        CheckpointInfo shorter = new CheckpointInfo(41, 1, 5, 1);
        assertThatThrownBy(() -> drain(VerifyingChunkStream.checkpoint(LOG, shorter, 3, i -> CHUNKS[i])))
                .isInstanceOf(CorruptLogException.class).hasMessageContaining("more than its recorded 5 bytes");
    }

    @Test
    void checksTheWholeCrcAndReportsAVanishedChunk() throws IOException {
        byte[] all = {1, 2, 3, 4, 5, 6};
        assertThat(drain(VerifyingChunkStream.withCrc32c(LOG, 9, "run r", 6, 3, crc(all), i -> CHUNKS[i])))
                .isEqualTo(all);
        assertThatThrownBy(() -> drain(VerifyingChunkStream.withCrc32c(LOG, 9, "run r", 6, 3, crc(all) ^ 1,
                i -> CHUNKS[i]))).isInstanceOf(CorruptLogException.class).hasMessageContaining("run r fails its CRC32C");
        assertThatThrownBy(() -> drain(VerifyingChunkStream.checkpoint(LOG, new CheckpointInfo(9, 1, 6, 1), 3,
                i -> i == 1 ? null : CHUNKS[i]))).isInstanceOf(IOException.class).hasMessageContaining("lost chunk 1 of 3");
        byte[] bad = Arrays.copyOf(CHUNKS[0], 3);
        assertThatThrownBy(() -> VerifyingChunkStream.checkCrc32c(LOG, 9, "checkpoint", 0, bad, crc(bad) + 1))
                .isInstanceOf(CorruptLogException.class).hasMessageContaining("chunk 0 fails its CRC32C");
        InputStream in = VerifyingChunkStream.checkpoint(LOG, new CheckpointInfo(9, 1, 6, 1), 3, i -> CHUNKS[i]);
        assertThat(in.read()).isEqualTo(1);
        in.close();
        assertThatThrownBy(in::read).isInstanceOf(IOException.class).hasMessageContaining("closed");
    }
}
