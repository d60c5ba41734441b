package dev.lattice.engine;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Decodes tree entries (docs/wal-format.md) for the change feed, including the ops the feed must represent beyond
 * {@link WalRecord.Mutation}: {@code PUT_TTL = 5} ({@code i32 key length, key, i32 value length, value, i64
 * expiresAtMillis}) and {@code DELETE_RANGE = 6} ({@code key} = inclusive lower bound, value = UTF-8 of the exclusive
 * upper bound). Verifies magic, format and checksum like {@link WalRecord#decode}. Thread-safe (stateless).
 */
final class FeedDecoder {

    static final byte PUT_TTL = 5;
    static final byte DELETE_RANGE = 6;

    private FeedDecoder() {
    }

    /** One decoded mutation; {@code expires} only for PUT_TTL. */
    record Op(byte op, String key, byte[] value, long expected, long expires) {
        /** @return the exclusive upper bound of a DELETE_RANGE */
        String rangeEnd() {
            return new String(value, StandardCharsets.UTF_8);
        }
    }

    /** A decoded entry. */
    record Entry(long offset, byte kind, long version, List<Op> ops) {
    }

    static Entry decode(LogId log, long offset, byte[] entry) {
        if (entry.length < WalRecord.HEADER_BYTES + WalRecord.TRAILER_BYTES) {
            throw new CorruptLogException(log, offset, "entry is " + entry.length + " bytes, shorter than a header");
        }
        ByteBuffer b = ByteBuffer.wrap(entry);
        CRC32C crc = new CRC32C();
        crc.update(entry, 0, entry.length - WalRecord.TRAILER_BYTES);
        if (b.getInt(entry.length - WalRecord.TRAILER_BYTES) != (int) crc.getValue()) {
            throw new CorruptLogException(log, offset, "entry checksum mismatch");
        }
        if (b.get(0) != WalRecord.MAGIC || b.get(1) != WalRecord.FORMAT) {
            throw new CorruptLogException(log, offset, "unknown entry magic/format " + b.get(0) + "/" + b.get(1));
        }
        byte kind = b.get(2);
        if (kind == WalRecord.KIND_CATALOG || kind < WalRecord.KIND_MUTATIONS || kind > WalRecord.KIND_DECISION) {
            throw new CorruptLogException(log, offset, "not a tree entry (kind " + kind + ")");
        }
        long version = b.getLong(4);
        int count = b.getInt(12);
        b.position(WalRecord.HEADER_BYTES);
        b.limit(entry.length - WalRecord.TRAILER_BYTES);
        try {
            List<Op> ops = new ArrayList<>(Math.min(count, 1024));
            for (int i = 0; i < count; i++) {
                ops.add(read(b));
            }
            if (b.hasRemaining()) {
                throw new IllegalArgumentException(b.remaining() + " trailing bytes");
            }
            return new Entry(offset, kind, version, ops);
        } catch (RuntimeException e) {
            throw new CorruptLogException(log, offset, "entry cannot be decoded: " + e.getMessage(), e);
        }
    }

    private static Op read(ByteBuffer b) {
        byte op = b.get();
        boolean known = op == WalRecord.Mutation.PUT || op == WalRecord.Mutation.DELETE
                || op == WalRecord.Mutation.PUT_IF_VERSION || op == WalRecord.Mutation.EXPECT || op == PUT_TTL
                || op == DELETE_RANGE || op == WalRecord.Mutation.TXN || op == WalRecord.Mutation.IDEM;
        if (!known) {
            throw new IllegalArgumentException("unknown mutation op " + op + " in a tree entry");
        }
        long expected = WalRecord.Mutation.hasExpected(op) ? b.getLong() : 0;
        byte[] key = bytes(b);
        byte[] value = op == PUT_TTL || op == DELETE_RANGE || WalRecord.Mutation.hasValue(op) ? bytes(b) : null;
        long expires = op == PUT_TTL ? b.getLong() : 0;
        return new Op(op, new String(key, StandardCharsets.UTF_8), value, expected, expires);
    }

    private static byte[] bytes(ByteBuffer b) {
        int len = b.getInt();
        if (len < 0 || len > b.remaining()) {
            throw new IllegalArgumentException("length " + len + " exceeds the " + b.remaining() + " bytes left");
        }
        byte[] out = new byte[len];
        b.get(out);
        return out;
    }

    /** Encodes a PUT_TTL mutation (tests; the write path of time-to-live puts is its own change). */
    static byte[] putTtl(String key, byte[] value, long expiresAtMillis) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + 4 + k.length + 4 + value.length + 8).put(PUT_TTL).putInt(k.length).put(k)
                .putInt(value.length).put(value).putLong(expiresAtMillis).array();
    }

    /** Encodes a DELETE_RANGE mutation (tests). */
    static byte[] deleteRange(String fromInclusive, String toExclusive) {
        byte[] k = fromInclusive.getBytes(StandardCharsets.UTF_8);
        byte[] v = toExclusive.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + 4 + k.length + 4 + v.length).put(DELETE_RANGE).putInt(k.length).put(k)
                .putInt(v.length).put(v).array();
    }
}
