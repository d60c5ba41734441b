package dev.lattice.bench.ycsb;

import org.junit.jupiter.api.Test;
import site.ycsb.ByteIterator;
import site.ycsb.StringByteIterator;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FieldCodecTest {

    @Test
    void roundTripsAllFieldsAndSubsets() {
        Map<String, ByteIterator> in = new LinkedHashMap<>();
        in.put("field1", new StringByteIterator("b".repeat(200)));
        in.put("field0", new StringByteIterator("a"));
        in.put("f\u00e9", new StringByteIterator(""));
        byte[] rec = FieldCodec.encode(in);

        Map<String, byte[]> all = new TreeMap<>();
        FieldCodec.decodeBytes(rec, null, all);
        assertThat(all).containsOnlyKeys("field0", "field1", "f\u00e9");
        assertThat(new String(all.get("field1"), StandardCharsets.UTF_8)).isEqualTo("b".repeat(200));
        assertThat(all.get("f\u00e9")).isEmpty();

        Map<String, ByteIterator> some = new HashMap<>();
        FieldCodec.decode(rec, Set.of("field0", "absent"), some);
        assertThat(some).containsOnlyKeys("field0");
        assertThat(some.get("field0").toString()).isEqualTo("a");
    }

    @Test
    void defaultYcsbRecordHasEightBytesOfOverheadPerField() {
        Map<String, byte[]> rec = new TreeMap<>();
        for (int i = 0; i < 10; i++) {
            rec.put("field" + i, new byte[100]);
        }
        assertThat(FieldCodec.encodeBytes(rec)).hasSize(1 + 10 * (1 + 6 + 1 + 100));
    }

    @Test
    void encodingIsIndependentOfMapOrder() {
        Map<String, byte[]> a = new LinkedHashMap<>();
        a.put("x", new byte[] {1});
        a.put("a", new byte[] {2});
        Map<String, byte[]> b = new LinkedHashMap<>();
        b.put("a", new byte[] {2});
        b.put("x", new byte[] {1});
        assertThat(FieldCodec.encodeBytes(a)).isEqualTo(FieldCodec.encodeBytes(b));
    }

    @Test
    void rejectsTruncatedAndTrailingBytes() {
        byte[] rec = FieldCodec.encodeBytes(Map.of("field0", new byte[10]));
        byte[] cut = java.util.Arrays.copyOf(rec, rec.length - 1);
        assertThatThrownBy(() -> FieldCodec.decodeBytes(cut, null, new HashMap<>()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("truncated");
        byte[] extra = java.util.Arrays.copyOf(rec, rec.length + 1);
        assertThatThrownBy(() -> FieldCodec.decodeBytes(extra, null, new HashMap<>()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trailing");
        assertThatThrownBy(() -> FieldCodec.decodeBytes(new byte[] {(byte) 0x80}, null, new HashMap<>()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
