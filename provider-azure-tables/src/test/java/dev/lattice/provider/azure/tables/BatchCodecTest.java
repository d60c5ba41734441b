package dev.lattice.provider.azure.tables;

import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.data.tables.models.TableEntity;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.LogId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The batch row codec on its own: deterministic splitting, byte-exact reassembly, corruption detection. */
class BatchCodecTest {
    private static final LogId LOG = new LogId("codec", 0);

    private static EncodedBatch varied() {
        List<byte[]> entries = new ArrayList<>();
        for (int len : new int[] {0, 1, 127, 128, 16383, 16384, 65535, 65536, 70000, 0, 3}) {
            entries.add(randomBytes(len, len));
        }
        return EncodedBatch.of(40, BatchId.random(), entries);
    }

    private static Records.CommittedBatch described(EncodedBatch b, BatchCodec.Encoded e, long epoch) {
        return new Records.CommittedBatch(b.firstOffset(), b.lastOffset(), b.batchId(), epoch, b.payloadBytes(),
                e.rows().size());
    }

    @Test
    void splitIsDeterministicAndReassemblesByteExactUnderEveryLayout() {
        EncodedBatch b = varied();
        for (Layout layout : List.of(Layout.DEFAULT, new Layout(1024, 1), new Layout(1000, 3), new Layout(65536, 1))) {
            BatchCodec.Encoded one = BatchCodec.encode("pk", 7, b, layout);
            BatchCodec.Encoded two = BatchCodec.encode("pk", 7, b, layout);
            assertThat(two.rows()).hasSameSizeAs(one.rows());
            for (int i = 0; i < one.rows().size(); i++) {
                assertThat(two.rows().get(i).getRowKey()).isEqualTo(one.rows().get(i).getRowKey());
                assertThat(two.rows().get(i).getProperties().keySet())
                        .isEqualTo(one.rows().get(i).getProperties().keySet());
                Rows.checkEntity(one.rows().get(i));
            }
            List<byte[]> back = BatchCodec.decode(LOG, described(b, one, 7), one.rows());
            assertThat(back).hasSize(b.size());
            for (int i = 0; i < b.size(); i++) {
                assertThat(back.get(i)).isEqualTo(b.entries().get(i));
            }
        }
    }

    @Test
    void aFlippedByteAMissingRowOrAForeignRowIsCorruption() {
        EncodedBatch b = varied();
        BatchCodec.Encoded e = BatchCodec.encode("pk", 7, b, new Layout(4096, 2));
        Records.CommittedBatch d = described(b, e, 7);

        List<TableEntity> flipped = new ArrayList<>(e.rows());
        byte[] p = ((byte[]) flipped.get(3).getProperty("P01")).clone();
        p[17] ^= 1;
        flipped.get(3).addProperty("P01", p);
        assertThatThrownBy(() -> BatchCodec.decode(LOG, d, flipped)).isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("SHA-256");

        BatchCodec.Encoded fresh = BatchCodec.encode("pk", 7, b, new Layout(4096, 2));
        List<TableEntity> missing = new ArrayList<>(fresh.rows());
        missing.remove(2);
        assertThatThrownBy(() -> BatchCodec.decode(LOG, d, missing)).isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("data rows");

        EncodedBatch other = EncodedBatch.of(40, BatchId.random(), b.entries());
        List<TableEntity> mixed = new ArrayList<>(fresh.rows());
        mixed.set(1, BatchCodec.encode("pk", 7, other, new Layout(4096, 2)).rows().get(1));
        assertThatThrownBy(() -> BatchCodec.decode(LOG, d, mixed)).isInstanceOf(CorruptLogException.class);
    }

    @Test
    void headerRowCarriesCountsAndEveryRowCarriesTheHash() {
        EncodedBatch b = varied();
        BatchCodec.Encoded e = BatchCodec.encode("pk", 9, b, new Layout(65536, 2));
        TableEntity header = e.rows().get(0);
        assertThat(header.getRowKey()).isEqualTo(Keys.dataRow(40, b.batchId(), 9, 0));
        assertThat(header.getProperty("N")).isEqualTo(e.rows().size());
        assertThat(header.getProperty("B")).isEqualTo(b.payloadBytes());
        for (TableEntity row : e.rows()) {
            assertThat((byte[]) row.getProperty("H")).isEqualTo(e.hash());
            assertThat(row.getProperty("E")).isEqualTo(9L);
        }
        Records.StagedHeader h = Records.StagedHeader.fromEntity(header);
        assertThat(h.id()).isEqualTo(b.batchId());
        assertThat(h.first()).isEqualTo(40);
        assertThat(h.last()).isEqualTo(50);
    }
}
