package dev.lattice.engine;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The engine's WAL entry format (see docs/wal-format.md). An entry is encoded once when a write is admitted, with
 * its version and checksum patched in when the batch is cut (so a retried batch carries identical bytes).
 *
 * <pre>
 * 0  u8  magic 0x4C ('L')
 * 1  u8  format version (1)
 * 2  u8  kind: 1 = tree mutations, 2 = catalog, 3 = atomic (one log), 4 = prepare, 5 = resolve, 6 = decision
 * 3  u8  flags (0)
 * 4  i64 version (per-tree, assigned at batch cut)
 * 12 i32 mutation count
 * 16 mutations: u8 op, [i64 expected version if op = PUT_IF_VERSION], i32 key length, key (UTF-8),
 *    [i32 value length, value if op carries a value], [i64 expires-at epoch ms if op = PUT_TTL]
 * n-4 i32 CRC32C of bytes [0, n-4)
 * </pre>
 *
 * Not instantiable; thread-safe.
 */
final class WalRecord {

    static final byte MAGIC = 0x4C;
    static final byte FORMAT = 1;
    static final byte KIND_MUTATIONS = 1;
    static final byte KIND_CATALOG = 2;
    /** All mutations of a single-log atomic write, with its preconditions ({@code EXPECT} ops): all or none. */
    static final byte KIND_ATOMIC = 3;
    /** One participant's part of a multi-log atomic write: {@code TXN} op first, then preconditions and mutations. */
    static final byte KIND_PREPARE = 4;
    /** The outcome of a multi-log atomic write in a participant log: one {@code TXN} op (outcome, version). */
    static final byte KIND_RESOLVE = 5;
    /** The commit point of a multi-log atomic write, in its coordinator (first participant) log: {@code TXN} op, optional {@code IDEM}. */
    static final byte KIND_DECISION = 6;
    static final int HEADER_BYTES = 16;
    static final int TRAILER_BYTES = 4;
    /** Bytes an entry holding one put adds around its key and value: header, op, lengths, checksum. */
    static final int SINGLE_PUT_OVERHEAD = HEADER_BYTES + 1 + 8 + 4 + 4 + TRAILER_BYTES;

    private WalRecord() {
    }

    /** Encodes mutations with version 0 and no checksum yet; see {@link #seal}. Writes straight into the entry. */
    static byte[] encode(byte kind, List<Mutation> mutations) {
        int n = mutations.size();
        int size = HEADER_BYTES + TRAILER_BYTES;
        for (int i = 0; i < n; i++) {
            size += mutations.get(i).encodedSize();
        }
        byte[] e = new byte[size];
        e[0] = MAGIC;
        e[1] = FORMAT;
        e[2] = kind;
        putInt(e, 12, n); // flags and version stay 0
        int pos = HEADER_BYTES;
        for (int i = 0; i < n; i++) {
            pos = mutations.get(i).writeTo(e, pos);
        }
        return e;
    }

    static byte[] encode(Mutation m) {
        return encode(KIND_MUTATIONS, List.of(m));
    }

    /** Writes the version and the checksum into an encoded entry, in place. */
    static void seal(byte[] entry, long version) {
        putLong(entry, 4, version);
        CRC32C crc = new CRC32C();
        crc.update(entry, 0, entry.length - TRAILER_BYTES);
        putInt(entry, entry.length - TRAILER_BYTES, (int) crc.getValue());
    }

    /** Big-endian, as {@link ByteBuffer} writes it. */
    static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    /** Big-endian, as {@link ByteBuffer} writes it. */
    static void putLong(byte[] b, int at, long v) {
        putInt(b, at, (int) (v >>> 32));
        putInt(b, at + 4, (int) v);
    }

    /** A decoded entry. */
    record Decoded(byte kind, long version, List<Mutation> mutations) {
    }

    /**
     * Decodes and verifies an entry.
     *
     * @throws CorruptLogException if the magic, format, checksum or structure is wrong
     */
    static Decoded decode(LogId log, long offset, byte[] entry) {
        int n = entry.length;
        if (n < HEADER_BYTES + TRAILER_BYTES) {
            throw new CorruptLogException(log, offset, "entry is " + n + " bytes, shorter than a header");
        }
        CRC32C crc = new CRC32C();
        crc.update(entry, 0, n - TRAILER_BYTES);
        int stored = getInt(entry, n - TRAILER_BYTES);
        if (stored != (int) crc.getValue()) {
            throw new CorruptLogException(log, offset, "entry checksum mismatch (CRC32C stored "
                    + Integer.toHexString(stored) + ", computed " + Long.toHexString(crc.getValue()) + ")");
        }
        if (entry[0] != MAGIC || entry[1] != FORMAT) {
            throw new CorruptLogException(log, offset, "unknown entry magic/format " + entry[0] + "/" + entry[1]);
        }
        byte kind = entry[2];
        long version = getLong(entry, 4);
        int count = getInt(entry, 12);
        Reader r = new Reader(entry, HEADER_BYTES, n - TRAILER_BYTES);
        try {
            if (count < 0) {
                throw new IllegalArgumentException("negative mutation count " + count);
            }
            List<Mutation> ms = new ArrayList<>(Math.min(count, 1024));
            for (int i = 0; i < count; i++) {
                ms.add(Mutation.readFrom(r));
            }
            if (r.remaining() > 0) {
                throw new IllegalArgumentException(r.remaining() + " trailing bytes");
            }
            return new Decoded(kind, version, ms);
        } catch (RuntimeException e) {
            throw new CorruptLogException(log, offset, "entry cannot be decoded: " + e.getMessage(), e);
        }
    }

    /** Big-endian, as {@link ByteBuffer} reads it. */
    static int getInt(byte[] b, int at) {
        return (b[at] << 24) | ((b[at + 1] & 0xFF) << 16) | ((b[at + 2] & 0xFF) << 8) | (b[at + 3] & 0xFF);
    }

    /** Big-endian, as {@link ByteBuffer} reads it. */
    static long getLong(byte[] b, int at) {
        return ((long) getInt(b, at) << 32) | (getInt(b, at + 4) & 0xFFFFFFFFL);
    }

    /**
     * Reads an entry's mutations straight from its array, refusing to read past {@code end} (what a bounded
     * {@link ByteBuffer} did before; reading the array directly costs less at open, where replay decodes every
     * entry of the log tail, much of it before the JIT has compiled this code). Not thread-safe.
     */
    static final class Reader {
        private final byte[] e;
        private int pos;
        private final int end;

        /**
         * @param e the entry
         * @param pos where the mutations start
         * @param end the exclusive end of the mutations (the checksum's position)
         */
        Reader(byte[] e, int pos, int end) {
            this.e = e;
            this.pos = pos;
            this.end = end;
        }

        /** @return the bytes left before the end */
        int remaining() {
            return end - pos;
        }

        private void need(int bytes) {
            if (end - pos < bytes) {
                throw new IllegalArgumentException("a mutation needs " + bytes + " more bytes at position " + pos
                        + " but only " + (end - pos) + " are left");
            }
        }

        byte get() {
            need(1);
            return e[pos++];
        }

        int getInt() {
            need(4);
            int v = WalRecord.getInt(e, pos);
            pos += 4;
            return v;
        }

        long getLong() {
            need(8);
            long v = WalRecord.getLong(e, pos);
            pos += 8;
            return v;
        }

        /** @return a copy of the next {@code len} bytes, which the caller has checked are there */
        byte[] bytes(int len) {
            byte[] out = java.util.Arrays.copyOfRange(e, pos, pos + len);
            pos += len;
            return out;
        }
    }

    /** One operation inside an entry. */
    record Mutation(byte op, String key, byte[] keyBytes, byte[] value, long expectedVersion) {
        /**
         * Stands for the UTF-8 bytes of a key whose chars are all ASCII (then they are the chars themselves): such a
         * key is written into the entry from the {@link String} without an array of its own. Never decoded.
         */
        static final byte[] ASCII_KEY = new byte[0];

        static final byte PUT = 1;
        static final byte DELETE = 2;
        /** A put decided when applied; written only by engines before {@link ConditionGate} (still applied). */
        static final byte PUT_IF_VERSION = 3;
        /**
         * Precondition of an atomic write: the key's version must equal the expected one (0 = absent). Held in the
         * pending write until its batch is cut; logged only by engines before {@link ConditionGate} (still checked).
         */
        static final byte EXPECT = 4;
        /** A put with a time-to-live: key, value, then {@code i64} expiry (epoch ms of the writer's clock). */
        static final byte PUT_TTL = 5;
        /** A range delete: the key is the first key covered (inclusive), the value the UTF-8 end key (exclusive). */
        static final byte DELETE_RANGE = 6;
        static final byte CREATE_TREE = 10;
        static final byte SET_PLACEMENT = 11;
        /** Atomic-write control record: the key is the write's id, the value its kind-specific fields. */
        static final byte TXN = 12;
        /** Idempotency key of an atomic write (in a decision): the key is the idempotency key, the value its key-set digest. */
        static final byte IDEM = 13;
        /**
         * Catalog, format 2 of a tree's creation: the key is the tree name, the value {@code u8 record format (1),
         * u8 partition hash version}, then the encoding of {@link #createTree}. Older code refuses the op (it fails
         * loudly instead of routing keys with the wrong hash).
         */
        static final byte CREATE_TREE_V2 = 14;
        /** Catalog: a tree was dropped; the key is the tree name, the value {@code u8 record format (1), i64 epoch}. */
        static final byte DROP_TREE = 15;

        static Mutation expect(String key, byte[] keyBytes, long expected) {
            return new Mutation(EXPECT, key, keyBytes, null, expected);
        }

        static Mutation txn(String id, byte[] fields) {
            return new Mutation(TXN, id, id.getBytes(StandardCharsets.UTF_8), fields, 0);
        }

        static Mutation idem(String key, byte[] digest) {
            return new Mutation(IDEM, key, key.getBytes(StandardCharsets.UTF_8), digest, 0);
        }

        static Mutation put(String key, byte[] keyBytes, byte[] value) {
            return new Mutation(PUT, key, keyBytes, value, 0);
        }

        static Mutation putIfVersion(String key, byte[] keyBytes, byte[] value, long expected) {
            return new Mutation(PUT_IF_VERSION, key, keyBytes, value, expected);
        }

        static Mutation delete(String key, byte[] keyBytes) {
            return new Mutation(DELETE, key, keyBytes, null, 0);
        }

        /** A put that expires at {@code expiresAtMillis} (kept in the {@code expectedVersion} slot). */
        static Mutation putTtl(String key, byte[] keyBytes, byte[] value, long expiresAtMillis) {
            return new Mutation(PUT_TTL, key, keyBytes, value, expiresAtMillis);
        }

        /** A range delete of {@code [from, to)}. */
        static Mutation deleteRange(String from, byte[] fromBytes, String to) {
            return new Mutation(DELETE_RANGE, from, fromBytes, to.getBytes(StandardCharsets.UTF_8), 0);
        }

        /** @return the expiry of a PUT_TTL (epoch ms), 0 for other ops */
        long expiresAtMillis() {
            return op == PUT_TTL ? expectedVersion : 0;
        }

        /** @return the exclusive end key of a DELETE_RANGE */
        String rangeEnd() {
            return new String(value, StandardCharsets.UTF_8);
        }

        /**
         * Catalog: a tree was created; the key is the tree name, the value holds the partition count and the
         * provider key of each partition ({@code i32 partitions, then per partition: u16 length, UTF-8 key}; a
         * value of only the 4-byte count means every partition is on {@code default}).
         */
        static Mutation createTree(String tree, List<String> placement) {
            byte[][] keys = new byte[placement.size()][];
            int size = 4;
            for (int i = 0; i < keys.length; i++) {
                keys[i] = placement.get(i).getBytes(StandardCharsets.UTF_8);
                size += 2 + keys[i].length;
            }
            ByteBuffer b = ByteBuffer.allocate(size).putInt(keys.length);
            for (byte[] k : keys) {
                b.putShort((short) k.length).put(k);
            }
            return new Mutation(CREATE_TREE, tree, tree.getBytes(StandardCharsets.UTF_8), b.array(), 0);
        }

        boolean hasValue() {
            return hasValue(op);
        }

        static boolean hasValue(byte op) {
            return op == PUT || op == PUT_IF_VERSION || op == PUT_TTL || op == DELETE_RANGE || op == CREATE_TREE || op == SET_PLACEMENT || op == TXN
                    || op == IDEM || op == CREATE_TREE_V2 || op == DROP_TREE;
        }

        static boolean hasExpected(byte op) {
            return op == PUT_IF_VERSION || op == EXPECT;
        }

        /** @return the key's UTF-8 length in bytes */
        int keyLength() {
            return keyBytes == ASCII_KEY ? key.length() : keyBytes.length;
        }

        int encodedSize() {
            return 1 + (hasExpected(op) ? 8 : 0) + 4 + keyLength() + (hasValue() ? 4 + value.length : 0)
                    + (op == PUT_TTL ? 8 : 0);
        }

        /** Writes the mutation at the buffer's position. */
        void writeTo(ByteBuffer b) {
            int start = b.position();
            byte[] tmp = new byte[encodedSize()];
            writeTo(tmp, 0);
            b.put(tmp);
            assert b.position() == start + tmp.length;
        }

        /** Writes the mutation at {@code pos} of {@code e}; returns the position after it. */
        int writeTo(byte[] e, int pos) {
            e[pos++] = op;
            if (hasExpected(op)) {
                putLong(e, pos, expectedVersion);
                pos += 8;
            }
            int keyLength = keyLength();
            putInt(e, pos, keyLength);
            if (keyBytes == ASCII_KEY) {
                dev.lattice.engine.lsm.RunFormat.putAscii(key, e, pos + 4);
            } else {
                System.arraycopy(keyBytes, 0, e, pos + 4, keyLength);
            }
            pos += 4 + keyLength;
            if (hasValue()) {
                putInt(e, pos, value.length);
                System.arraycopy(value, 0, e, pos + 4, value.length);
                pos += 4 + value.length;
            }
            if (op == PUT_TTL) {
                putLong(e, pos, expectedVersion);
                pos += 8;
            }
            return pos;
        }

        static Mutation readFrom(Reader b) {
            byte op = b.get();
            if (op != PUT && op != DELETE && op != PUT_IF_VERSION && op != EXPECT && op != PUT_TTL
                    && op != DELETE_RANGE && op != CREATE_TREE
                    && op != SET_PLACEMENT && op != TXN && op != IDEM && op != CREATE_TREE_V2 && op != DROP_TREE) {
                throw new IllegalArgumentException("unknown mutation op " + op);
            }
            long expected = hasExpected(op) ? b.getLong() : 0;
            byte[] key = b.bytes(checkLength(b, b.getInt()));
            byte[] value = null;
            if (hasValue(op)) {
                value = b.bytes(checkLength(b, b.getInt()));
            }
            if (op == PUT_TTL) {
                expected = b.getLong();
            }
            return new Mutation(op, new String(key, StandardCharsets.UTF_8), key, value, expected);
        }

        private static int checkLength(Reader b, int len) {
            if (len < 0 || len > b.remaining()) {
                throw new IllegalArgumentException("length " + len + " exceeds the " + b.remaining() + " bytes left");
            }
            return len;
        }

        /**
         * Catalog: a tree's placement moved to a new version; the value is {@code i64 version} followed by the
         * encoding of {@link #createTree}.
         */
        static Mutation setPlacement(String tree, long version, List<String> placement) {
            byte[] keys = createTree(tree, placement).value();
            byte[] v = ByteBuffer.allocate(8 + keys.length).putLong(version).put(keys).array();
            return new Mutation(SET_PLACEMENT, tree, tree.getBytes(StandardCharsets.UTF_8), v, 0);
        }

        /**
         * Catalog: a tree created with a partition hash version (format 2 of {@link #createTree}).
         *
         * @param hashVersion the {@link PartitionHash} version, 1..255
         */
        static Mutation createTreeV2(String tree, List<String> placement, int hashVersion) {
            byte[] keys = createTree(tree, placement).value();
            byte[] v = ByteBuffer.allocate(2 + keys.length).put((byte) 1).put((byte) hashVersion).put(keys).array();
            return new Mutation(CREATE_TREE_V2, tree, tree.getBytes(StandardCharsets.UTF_8), v, 0);
        }

        /** Catalog: a tree was dropped after its logs were claimed up to {@code epoch}. */
        static Mutation dropTree(String tree, long epoch) {
            byte[] v = ByteBuffer.allocate(9).put((byte) 1).putLong(epoch).array();
            return new Mutation(DROP_TREE, tree, tree.getBytes(StandardCharsets.UTF_8), v, 0);
        }

        /** @return the partition hash version a CREATE_TREE_V2 records (1 for CREATE_TREE) */
        int hashVersion() {
            if (op == CREATE_TREE) {
                return 1;
            }
            if (value.length < 2 || value[0] != 1) {
                throw new IllegalArgumentException("unknown tree record format " + (value.length == 0 ? -1 : value[0]));
            }
            return value[1] & 0xFF;
        }

        /** @return the epoch a DROP_TREE records */
        long droppedEpoch() {
            if (value.length != 9 || value[0] != 1) {
                throw new IllegalArgumentException("unknown drop record format " + (value.length == 0 ? -1 : value[0]));
            }
            return ByteBuffer.wrap(value, 1, 8).getLong();
        }

        /** @return the version a SET_PLACEMENT mutation records */
        long placementVersion() {
            return ByteBuffer.wrap(value).getLong();
        }

        /** The placement a CREATE_TREE, CREATE_TREE_V2 or SET_PLACEMENT mutation records. */
        List<String> placementOfCreateTree() {
            ByteBuffer b = ByteBuffer.wrap(value);
            if (op == SET_PLACEMENT) {
                b.position(8);
            } else if (op == CREATE_TREE_V2) {
                b.position(2);
            }
            int partitions = b.getInt();
            if (partitions < 1 || partitions > LogId.MAX_PARTITION + 1) {
                throw new IllegalArgumentException("partition count " + partitions + " out of range");
            }
            if (!b.hasRemaining()) {
                return java.util.Collections.nCopies(partitions, PlacementPolicy.DEFAULT_KEY);
            }
            List<String> keys = new ArrayList<>(partitions);
            for (int i = 0; i < partitions; i++) {
                byte[] k = new byte[b.getShort() & 0xFFFF];
                b.get(k);
                keys.add(new String(k, StandardCharsets.UTF_8));
            }
            return keys;
        }
    }
}
