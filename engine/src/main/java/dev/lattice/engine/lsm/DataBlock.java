package dev.lattice.engine.lsm;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One decoded data block of a run: the entries' bytes and the restart points. Immutable, thread-safe; each reader walks
 * it with its own {@link Cursor}.
 */
final class DataBlock {

    private final byte[] data;
    private final int restartsOffset;
    private final int restartCount;

    /**
     * @param bytes an array holding the block's payload from index 0 (anything after it, e.g. its CRC, is ignored)
     * @param length the payload's length in bytes
     */
    DataBlock(byte[] bytes, int length) {
        if (length < 4 || length > bytes.length) {
            throw new IllegalStateException("block shorter than its restart count");
        }
        this.data = bytes;
        this.restartCount = ByteBuffer.wrap(bytes, length - 4, 4).getInt();
        this.restartsOffset = length - 4 - 4 * restartCount;
        if (restartCount < 1 || restartsOffset < 0) {
            throw new IllegalStateException("bad restart count " + restartCount);
        }
    }

    int sizeBytes() {
        return data.length + 48;
    }

    private int restart(int i) {
        int at = restartsOffset + 4 * i;
        return (data[at] & 0xFF) << 24 | (data[at + 1] & 0xFF) << 16 | (data[at + 2] & 0xFF) << 8 | data[at + 3] & 0xFF;
    }

    Cursor cursor() {
        return new Cursor();
    }

    /** Walks the block's entries in order, decoding straight from the block's array. Not thread-safe. */
    final class Cursor {
        private int pos;
        private byte[] key = new byte[64];
        private int keyLen;
        private String keyString;
        private long version;
        private boolean tombstone;
        private long expiresAt;
        private int valuePos;
        private int valueLen;

        /** Positions the cursor before the first entry at or after which {@code target} (UTF-8) may start. */
        void seek(byte[] target) {
            int lo = 0;
            int hi = restartCount - 1;
            int start = 0;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                if (compareKeyAtRestart(restart(mid), target) < 0) {
                    start = mid;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            pos = restart(start);
            keyLen = 0;
        }

        /** Compares the whole key stored at a restart point (it shares no prefix) with a UTF-8 key. */
        private int compareKeyAtRestart(int at, byte[] target) {
            pos = at;
            varInt();
            int n = varInt();
            int start = pos;
            if (n < 0 || start + n > restartsOffset) {
                throw new IllegalStateException("key at restart " + at + " runs past the entries");
            }
            return KeyOrder.compare(data, start, start + n, target, 0, target.length);
        }

        boolean next() {
            if (pos >= restartsOffset) {
                return false;
            }
            int shared = varInt();
            int unshared = varInt();
            if (shared > keyLen) {
                throw new IllegalStateException("entry shares " + shared + " bytes of a " + keyLen + "-byte key");
            }
            if (unshared > restartsOffset - pos) {
                throw new IllegalStateException("key of " + unshared + " bytes runs past the entries");
            }
            if (shared + unshared > key.length) {
                key = Arrays.copyOf(key, Math.max(key.length * 2, shared + unshared));
            }
            System.arraycopy(data, pos, key, shared, unshared);
            pos += unshared;
            keyLen = shared + unshared;
            keyString = null;
            byte kind = readByte();
            if (kind != RunFormat.KIND_PUT && kind != RunFormat.KIND_DELETE && kind != RunFormat.KIND_PUT_EXPIRING) {
                throw new IllegalStateException("unknown entry kind " + kind);
            }
            tombstone = kind == RunFormat.KIND_DELETE;
            version = varLong();
            expiresAt = kind == RunFormat.KIND_PUT_EXPIRING ? varLong() : 0;
            if (tombstone) {
                valueLen = 0;
                valuePos = pos;
            } else {
                valueLen = varInt();
                valuePos = pos;
                if (valueLen > restartsOffset - pos) {
                    throw new IllegalStateException("value of " + valueLen + " bytes runs past the entries");
                }
                pos = valuePos + valueLen;
            }
            return true;
        }

        private byte readByte() {
            if (pos >= restartsOffset) {
                throw new IllegalStateException("entry runs past the block's entries at " + pos);
            }
            return data[pos++];
        }

        /** Same encoding as {@link RunFormat#getVarLong}. */
        private long varLong() {
            long v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                byte b = readByte();
                v |= (long) (b & 0x7F) << shift;
                if (b >= 0) {
                    return v;
                }
            }
            throw new IllegalStateException("varint longer than 10 bytes");
        }

        private int varInt() {
            long v = varLong();
            if (v < 0 || v > Integer.MAX_VALUE) {
                throw new IllegalStateException("varint " + v + " out of int range");
            }
            return (int) v;
        }

        /** Compares the current entry's key with a UTF-8 key, in {@link String} order. */
        int compareKey(byte[] target) {
            return KeyOrder.compare(key, 0, keyLen, target, 0, target.length);
        }

        String key() {
            if (keyString == null) {
                keyString = new String(key, 0, keyLen, StandardCharsets.UTF_8);
            }
            return keyString;
        }

        boolean tombstone() {
            return tombstone;
        }

        long expiresAt() {
            return expiresAt;
        }

        byte[] valueCopy() {
            return Arrays.copyOfRange(data, valuePos, valuePos + valueLen);
        }

        RunEntry entry() {
            return new RunEntry(key(), version, tombstone, Arrays.copyOfRange(data, valuePos, valuePos + valueLen),
                    expiresAt);
        }

        long version() {
            return version;
        }
    }
}
