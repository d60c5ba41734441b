package dev.lattice.engine;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link WalRecord#decode}: every op reads back as written (the layout of docs/wal-format.md, built here byte by byte
 * with a {@link ByteBuffer}, independently of the encoder), and every kind of damage is a {@link CorruptLogException}
 * naming the entry's offset: checksum, magic, format, a mutation count or length that runs past the entry, an unknown
 * op, trailing bytes, a negative count.
 */
class WalRecordDecodeTest {

    private static final LogId LOG = new LogId("decode", 3);
    private static final long OFFSET = 41;

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** An entry of {@code kind} and {@code version} around the given mutation bytes, checksum included. */
    private static byte[] entry(byte kind, long version, int count, byte[] mutations) {
        ByteBuffer b = ByteBuffer.allocate(WalRecord.HEADER_BYTES + mutations.length + WalRecord.TRAILER_BYTES);
        b.put(WalRecord.MAGIC).put(WalRecord.FORMAT).put(kind).put((byte) 0).putLong(version).putInt(count)
                .put(mutations);
        return seal(b.array());
    }

    private static byte[] seal(byte[] e) {
        CRC32C crc = new CRC32C();
        crc.update(e, 0, e.length - WalRecord.TRAILER_BYTES);
        ByteBuffer.wrap(e).putInt(e.length - WalRecord.TRAILER_BYTES, (int) crc.getValue());
        return e;
    }

    /** op, [expected], key length, key, [value length, value], [expiry] */
    private static byte[] mutation(byte op, Long expected, String key, byte[] value, Long expiry) {
        byte[] k = utf8(key);
        ByteBuffer b = ByteBuffer.allocate(1 + 8 + 4 + k.length + 4 + (value == null ? 0 : value.length) + 8);
        b.put(op);
        if (expected != null) {
            b.putLong(expected);
        }
        b.putInt(k.length).put(k);
        if (value != null) {
            b.putInt(value.length).put(value);
        }
        if (expiry != null) {
            b.putLong(expiry);
        }
        byte[] out = new byte[b.position()];
        System.arraycopy(b.array(), 0, out, 0, out.length);
        return out;
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    @Test
    void everyOpReadsBackAsWritten() {
        byte[] value = new byte[1000];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) (i * 31);
        }
        byte[] mutations = concat(
                mutation(WalRecord.Mutation.PUT, null, "k\u00e9y-1", value, null),
                mutation(WalRecord.Mutation.DELETE, null, "gone", null, null),
                mutation(WalRecord.Mutation.PUT_IF_VERSION, 7L, "cond", utf8("v"), null),
                mutation(WalRecord.Mutation.EXPECT, 9L, "pre", null, null),
                mutation(WalRecord.Mutation.PUT_TTL, null, "ttl", utf8("t"), 1_700_000_000_000L),
                mutation(WalRecord.Mutation.DELETE_RANGE, null, "a", utf8("m"), null),
                mutation(WalRecord.Mutation.PUT, null, "", new byte[0], null));
        WalRecord.Decoded d = WalRecord.decode(LOG, OFFSET, entry(WalRecord.KIND_ATOMIC, 123_456_789_012L, 7,
                mutations));
        assertThat(d.kind()).isEqualTo(WalRecord.KIND_ATOMIC);
        assertThat(d.version()).isEqualTo(123_456_789_012L);
        List<WalRecord.Mutation> ms = d.mutations();
        assertThat(ms).hasSize(7);
        assertThat(ms.get(0).op()).isEqualTo(WalRecord.Mutation.PUT);
        assertThat(ms.get(0).key()).isEqualTo("k\u00e9y-1");
        assertThat(ms.get(0).keyBytes()).isEqualTo(utf8("k\u00e9y-1"));
        assertThat(ms.get(0).value()).isEqualTo(value);
        assertThat(ms.get(1).op()).isEqualTo(WalRecord.Mutation.DELETE);
        assertThat(ms.get(1).key()).isEqualTo("gone");
        assertThat(ms.get(1).value()).isNull();
        assertThat(ms.get(2).expectedVersion()).isEqualTo(7L);
        assertThat(ms.get(2).value()).isEqualTo(utf8("v"));
        assertThat(ms.get(3).op()).isEqualTo(WalRecord.Mutation.EXPECT);
        assertThat(ms.get(3).expectedVersion()).isEqualTo(9L);
        assertThat(ms.get(3).value()).isNull();
        assertThat(ms.get(4).expiresAtMillis()).isEqualTo(1_700_000_000_000L);
        assertThat(ms.get(4).value()).isEqualTo(utf8("t"));
        assertThat(ms.get(5).rangeEnd()).isEqualTo("m");
        assertThat(ms.get(6).key()).isEmpty();
        assertThat(ms.get(6).value()).isEmpty();
    }

    @Test
    void whatTheEncoderWritesDecodes() {
        WalRecord.Mutation put = WalRecord.Mutation.put("key", utf8("key"), utf8("value"));
        byte[] e = WalRecord.encode(WalRecord.KIND_MUTATIONS, List.of(put,
                WalRecord.Mutation.putTtl("t", utf8("t"), utf8("x"), 99L)));
        WalRecord.seal(e, 5);
        WalRecord.Decoded d = WalRecord.decode(LOG, OFFSET, e);
        assertThat(d.version()).isEqualTo(5);
        assertThat(d.mutations()).hasSize(2);
        assertThat(d.mutations().get(0).key()).isEqualTo("key");
        assertThat(d.mutations().get(0).value()).isEqualTo(utf8("value"));
        assertThat(d.mutations().get(1).expiresAtMillis()).isEqualTo(99L);
    }

    private static void assertCorrupt(byte[] e, String message) {
        assertThatThrownBy(() -> WalRecord.decode(LOG, OFFSET, e))
                .isInstanceOfSatisfying(CorruptLogException.class, x -> {
                    assertThat(x.getMessage()).contains(message).contains(LOG.toString());
                    assertThat(x.offset()).isEqualTo(OFFSET);
                });
    }

    @Test
    void damageIsACorruptLogException() {
        byte[] put = mutation(WalRecord.Mutation.PUT, null, "key", utf8("value"), null);
        byte[] good = entry(WalRecord.KIND_MUTATIONS, 1, 1, put);

        byte[] flipped = good.clone();
        flipped[WalRecord.HEADER_BYTES + 6] ^= 1;
        assertCorrupt(flipped, "checksum mismatch");

        assertCorrupt(new byte[WalRecord.HEADER_BYTES + WalRecord.TRAILER_BYTES - 1], "shorter than a header");

        byte[] magic = good.clone();
        magic[0] = 0x4D;
        assertCorrupt(seal(magic), "magic/format");
        byte[] format = good.clone();
        format[1] = 2;
        assertCorrupt(seal(format), "magic/format");

        // one mutation announced, two present: trailing bytes
        assertCorrupt(entry(WalRecord.KIND_MUTATIONS, 1, 1, concat(put, put)), "trailing bytes");
        // two announced, one present: the second runs past the entry
        assertCorrupt(entry(WalRecord.KIND_MUTATIONS, 1, 2, put), "cannot be decoded");
        // a negative count
        assertCorrupt(entry(WalRecord.KIND_MUTATIONS, 1, -1, new byte[0]), "negative mutation count");
        // an unknown op
        byte[] unknown = put.clone();
        unknown[0] = 99;
        assertCorrupt(entry(WalRecord.KIND_MUTATIONS, 1, 1, unknown), "unknown mutation op 99");
        // a key length past the end, a negative value length
        byte[] longKey = put.clone();
        ByteBuffer.wrap(longKey).putInt(1, 1000);
        assertCorrupt(entry(WalRecord.KIND_MUTATIONS, 1, 1, longKey), "length 1000 exceeds");
        byte[] negativeValue = put.clone();
        ByteBuffer.wrap(negativeValue).putInt(1 + 4 + 3, -2);
        assertCorrupt(entry(WalRecord.KIND_MUTATIONS, 1, 1, negativeValue), "length -2 exceeds");
        // an expected version cut off, an expiry cut off
        byte[] cond = mutation(WalRecord.Mutation.PUT_IF_VERSION, 7L, "c", utf8("v"), null);
        assertCorrupt(entry(WalRecord.KIND_MUTATIONS, 1, 1, java.util.Arrays.copyOf(cond, 5)), "cannot be decoded");
        byte[] ttl = mutation(WalRecord.Mutation.PUT_TTL, null, "t", utf8("v"), 5L);
        assertCorrupt(entry(WalRecord.KIND_MUTATIONS, 1, 1, java.util.Arrays.copyOf(ttl, ttl.length - 3)),
                "cannot be decoded");
    }
}
