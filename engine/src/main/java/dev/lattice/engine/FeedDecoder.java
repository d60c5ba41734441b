package dev.lattice.engine;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes tree entries (docs/wal-format.md) for the change feed, including the ops the feed must represent beyond
 * {@link WalRecord.Mutation}: {@code PUT_TTL = 5} ({@code i32 key length, key, i32 value length, value, i64
 * expiresAtMillis}) and {@code DELETE_RANGE = 6} ({@code key} = inclusive lower bound, value = UTF-8 of the exclusive
 * upper bound). Decoding, magic, format and checksum are {@link WalRecord#decode}'s. Thread-safe (stateless).
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
        WalRecord.Decoded d = WalRecord.decode(log, offset, entry);
        byte kind = d.kind();
        if (kind == WalRecord.KIND_CATALOG || kind < WalRecord.KIND_MUTATIONS || kind > WalRecord.KIND_DECISION) {
            throw new CorruptLogException(log, offset, "not a tree entry (kind " + kind + ")");
        }
        List<Op> ops = new ArrayList<>(d.mutations().size());
        for (WalRecord.Mutation m : d.mutations()) {
            if (m.op() == WalRecord.Mutation.CREATE_TREE || m.op() == WalRecord.Mutation.SET_PLACEMENT
                    || m.op() == WalRecord.Mutation.CREATE_TREE_V2 || m.op() == WalRecord.Mutation.DROP_TREE) {
                throw new CorruptLogException(log, offset, "catalog op " + m.op() + " in a tree entry");
            }
            long expected = WalRecord.Mutation.hasExpected(m.op()) ? m.expectedVersion() : 0;
            ops.add(new Op(m.op(), m.key(), m.value(), expected, m.expiresAtMillis()));
        }
        return new Entry(offset, kind, d.version(), ops);
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
