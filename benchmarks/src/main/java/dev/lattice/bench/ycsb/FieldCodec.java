package dev.lattice.bench.ycsb;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The value encoding of one YCSB record (a set of named fields) in one store value, shared by the Lattice and the
 * RocksDB bindings so that both store the same bytes.
 *
 * <pre>
 * record := count:varint  field*count          (fields in ascending name order, names unique)
 * field  := nameLength:varint  name:UTF-8  valueLength:varint  value:bytes
 * varint := unsigned LEB128 (7 bits per byte, low group first, high bit = more), at most 5 bytes
 * </pre>
 *
 * A default YCSB record (10 fields {@code field0..field9} of 100 bytes) encodes to 1,081 bytes: 1 + 10 x (1 + 6 + 1 +
 * 100), 8 bytes of overhead per field. Decoding with a field subset skips the other fields without copying them.
 * Stateless and thread-safe.
 */
public final class FieldCodec {

    private FieldCodec() {
    }

    /**
     * Encodes a record. The iterators of {@code fields} are consumed (YCSB's {@link ByteIterator} is one-shot).
     *
     * @param fields field name to value
     * @return the encoded record
     * @throws NullPointerException if the map, a name or a value is null
     */
    public static byte[] encode(Map<String, ByteIterator> fields) {
        TreeMap<String, byte[]> sorted = new TreeMap<>();
        for (Map.Entry<String, ByteIterator> e : fields.entrySet()) {
            sorted.put(e.getKey(), e.getValue().toArray());
        }
        return encodeBytes(sorted);
    }

    /**
     * Encodes a record whose values are already bytes.
     *
     * @param fields field name to value (any order; encoded in ascending name order)
     * @return the encoded record
     * @throws NullPointerException if the map, a name or a value is null
     */
    public static byte[] encodeBytes(Map<String, byte[]> fields) {
        Map<String, byte[]> sorted = fields instanceof TreeMap<String, byte[]> t && t.comparator() == null
                ? fields : new TreeMap<>(fields);
        int size = 5;
        for (Map.Entry<String, byte[]> e : sorted.entrySet()) {
            size += 10 + e.getKey().length() * 3 + e.getValue().length;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(size);
        writeVarint(out, sorted.size());
        for (Map.Entry<String, byte[]> e : sorted.entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            writeVarint(out, name.length);
            out.write(name, 0, name.length);
            byte[] v = e.getValue();
            writeVarint(out, v.length);
            out.write(v, 0, v.length);
        }
        return out.toByteArray();
    }

    /**
     * Decodes a record into {@code result} as YCSB iterators.
     *
     * @param record the encoded record
     * @param wanted the fields to return, or null for all
     * @param result receives the decoded fields
     * @throws IllegalArgumentException if the bytes are not a record of this encoding (truncated, bad varint)
     */
    public static void decode(byte[] record, Set<String> wanted, Map<String, ByteIterator> result) {
        // straight into the result over the record's bytes, as YCSB's RocksDB binding does (no copy per field)
        walk(record, wanted, (name, off, len) -> result.put(name, new ByteArrayByteIterator(record, off, len)));
    }

    /**
     * Decodes a record into {@code result} as byte arrays.
     *
     * @param record the encoded record
     * @param wanted the fields to return, or null for all
     * @param result receives the decoded fields
     * @throws IllegalArgumentException if the bytes are not a record of this encoding (truncated, bad varint)
     */
    public static void decodeBytes(byte[] record, Set<String> wanted, Map<String, byte[]> result) {
        walk(record, wanted, (name, off, len) -> result.put(name, java.util.Arrays.copyOfRange(record, off, off + len)));
    }

    /** Receives one wanted field: its name and where its value lies in the record. */
    private interface FieldSink {
        void field(String name, int off, int len);
    }

    private static void walk(byte[] record, Set<String> wanted, FieldSink sink) {
        int[] pos = {0};
        int count = readVarint(record, pos);
        for (int i = 0; i < count; i++) {
            int nameLen = readVarint(record, pos);
            check(record, pos[0], nameLen);
            String name = new String(record, pos[0], nameLen, StandardCharsets.UTF_8);
            pos[0] += nameLen;
            int valueLen = readVarint(record, pos);
            check(record, pos[0], valueLen);
            if (wanted == null || wanted.contains(name)) {
                sink.field(name, pos[0], valueLen);
            }
            pos[0] += valueLen;
        }
        if (pos[0] != record.length) {
            throw new IllegalArgumentException("record has " + (record.length - pos[0]) + " trailing bytes after "
                    + count + " fields");
        }
    }

    private static void check(byte[] record, int at, int len) {
        if (len < 0 || at + len > record.length) {
            throw new IllegalArgumentException("record truncated: needs " + len + " bytes at " + at + ", has "
                    + (record.length - at));
        }
    }

    private static void writeVarint(ByteArrayOutputStream out, int v) {
        while ((v & ~0x7F) != 0) {
            out.write((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out.write(v);
    }

    private static int readVarint(byte[] b, int[] pos) {
        int result = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            if (pos[0] >= b.length) {
                throw new IllegalArgumentException("record truncated inside a varint at " + pos[0]);
            }
            int x = b[pos[0]++];
            result |= (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                if (result < 0) {
                    throw new IllegalArgumentException("varint out of range at " + (pos[0] - 1));
                }
                return result;
            }
        }
        throw new IllegalArgumentException("varint longer than 5 bytes at " + pos[0]);
    }
}
