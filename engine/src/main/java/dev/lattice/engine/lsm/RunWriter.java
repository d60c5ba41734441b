package dev.lattice.engine.lsm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Encodes sorted entries as a run (docs/wal-format.md "Run format", version {@value RunFormat#VERSION}). Entries come
 * in key order, several versions of one key newest first; data blocks are cut at about {@code blockBytes}; keys are
 * prefix-compressed between restart points every {@value RunFormat#RESTART_INTERVAL} entries.
 *
 * <p>Not thread-safe: one writer per run. The whole run is built in memory ({@link #finish()} returns its bytes), so a
 * run is bounded by the memtable or compaction output size that produced it. The bytes are held in chunks of
 * {@value #CHUNK_BYTES} bytes, not one array: a run of several MiB in one array is a humongous object for G1 (at
 * least half a heap region), allocated in the old generation and regrown by copying, which under a small heap made
 * the collector run full collections to find contiguous regions.
 */
public final class RunWriter {

    /**
     * One data block's place in the run, as the index records it: {@code key} is its last key, or (format 4) a
     * separator at or after it and before the next block's first key.
     */
    record BlockHandle(String key, long position, int length, int entries) {
    }

    private final int blockBytes;
    private final int bitsPerKey;
    /** Bytes per chunk of a run's buffer: below half of G1's smallest region (1 MiB), so never humongous. */
    static final int CHUNK_BYTES = 256 << 10;

    private final ChunkSink out = new ChunkSink();
    private final RunFormat.ByteSink block;
    private final List<BlockHandle> handles = new ArrayList<>();
    private final List<Integer> restarts = new ArrayList<>();
    private long[] hashes = new long[1024];
    private int hashCount;
    /** The previous key's UTF-8 bytes (its first {@link #lastKeyLength}) and the buffer the next one goes into. */
    private byte[] lastKey = new byte[64];
    private int lastKeyLength;
    private byte[] keyBuf = new byte[64];
    private String lastKeyString;
    private long lastVersion = -1;
    private int blockEntries;
    private long entries;
    private long tombstones;
    private long minVersion = Long.MAX_VALUE;
    private long maxVersion = -1;
    private String firstKey;
    private long userBytes;
    private boolean finished;
    private final int formatVersion;
    private final List<RangeTombstone> ranges = new ArrayList<>();

    /**
     * Creates a writer.
     *
     * @param blockBytes target data block size in bytes (a block closes once it reaches it), at least 256
     * @param bitsPerKey Bloom filter bits per distinct key, at least 1 (10 gives about 1% false positives)
     * @throws IllegalArgumentException if an argument is out of range
     */
    public RunWriter(int blockBytes, int bitsPerKey) {
        this(blockBytes, bitsPerKey, 1 << 16);
    }

    /**
     * Creates a writer for a run of about {@code expectedBytes} (a hint; the buffer is chunked and grows as needed).
     *
     * @param blockBytes target data block size in bytes (a block closes once it reaches it), at least 256
     * @param bitsPerKey Bloom filter bits per distinct key, at least 1 (10 gives about 1% false positives)
     * @param expectedBytes the run's expected size in bytes (a hint; the buffer grows past it)
     * @throws IllegalArgumentException if an argument is out of range
     */
    public RunWriter(int blockBytes, int bitsPerKey, int expectedBytes) {
        this(blockBytes, bitsPerKey, expectedBytes, RunFormat.VERSION);
    }

    /**
     * As above, writing {@code formatVersion}: 1 to 3 only for compatibility tests (1: no expiry, no range
     * tombstones; 1 and 2: the standard Bloom filter; 1 to 3: full last keys and positions in the index).
     */
    RunWriter(int blockBytes, int bitsPerKey, int expectedBytes, int formatVersion) {
        if (formatVersion != RunFormat.VERSION && formatVersion != RunFormat.VERSION_3
                && formatVersion != RunFormat.VERSION_2 && formatVersion != RunFormat.VERSION_1) {
            throw new IllegalArgumentException("run format version " + formatVersion + " cannot be written");
        }
        this.formatVersion = formatVersion;
        if (blockBytes < 256 || bitsPerKey < 1) {
            throw new IllegalArgumentException("blockBytes must be >= 256 and bitsPerKey >= 1, got " + blockBytes
                    + " and " + bitsPerKey);
        }
        this.blockBytes = blockBytes;
        this.bitsPerKey = bitsPerKey;
        out.expect(expectedBytes);
        this.block = new RunFormat.ByteSink(blockBytes + 1024);
    }

    /**
     * Appends an entry.
     *
     * @param e the entry; its key at or after the previous entry's, a repeated key with a smaller version
     * @throws IllegalArgumentException if the entry is out of order
     * @throws IllegalStateException if {@link #finish()} was called
     */
    public void add(RunEntry e) {
        if (finished) {
            throw new IllegalStateException("run already finished");
        }
        int cmp = lastKeyString == null ? 1 : e.key().compareTo(lastKeyString);
        if (cmp < 0 || (cmp == 0 && e.version() >= lastVersion)) {
            throw new IllegalArgumentException("entry " + e + " out of order after key '" + lastKeyString + "' v"
                    + lastVersion + " (keys ascending, versions of one key descending)");
        }
        if (e.expiresAtMillis() != 0 && formatVersion < 2) {
            throw new IllegalArgumentException("run format " + formatVersion + " has no expiring values");
        }
        if (blockEntries == 0 && !handles.isEmpty() && formatVersion >= RunFormat.VERSION) {
            BlockHandle h = handles.get(handles.size() - 1); // the block before this one: its separator
            handles.set(handles.size() - 1, new BlockHandle(RunFormat.separator(h.key(), e.key()), h.position(),
                    h.length(), h.entries()));
        }
        int keyLength = encodeKey(e.key());
        byte[] key = keyBuf;
        int shared = 0;
        if (blockEntries % RunFormat.RESTART_INTERVAL == 0) {
            restarts.add(block.size());
        } else {
            int max = Math.min(keyLength, lastKeyLength);
            while (shared < max && key[shared] == lastKey[shared]) {
                shared++;
            }
        }
        RunFormat.putVarLong(block, shared);
        RunFormat.putVarLong(block, keyLength - shared);
        block.write(key, shared, keyLength - shared);
        block.write(e.tombstone() ? RunFormat.KIND_DELETE
                : e.expiresAtMillis() != 0 ? RunFormat.KIND_PUT_EXPIRING : RunFormat.KIND_PUT);
        RunFormat.putVarLong(block, e.version());
        if (e.expiresAtMillis() != 0) {
            RunFormat.putVarLong(block, e.expiresAtMillis());
        }
        if (!e.tombstone()) {
            RunFormat.putVarLong(block, e.value().length);
            block.write(e.value(), 0, e.value().length);
        }
        if (cmp != 0) {
            if (hashCount == hashes.length) {
                hashes = Arrays.copyOf(hashes, hashCount * 2);
            }
            hashes[hashCount++] = BloomFilter.hash(key, keyLength);
        }
        if (firstKey == null) {
            firstKey = e.key();
        }
        keyBuf = lastKey; // the buffers change roles: this key is the next one's previous
        lastKey = key;
        lastKeyLength = keyLength;
        lastKeyString = e.key();
        lastVersion = e.version();
        blockEntries++;
        entries++;
        tombstones += e.tombstone() ? 1 : 0;
        minVersion = Math.min(minVersion, e.version());
        maxVersion = Math.max(maxVersion, e.version());
        userBytes += keyLength + e.value().length;
        if (block.size() >= blockBytes) {
            closeBlock();
        }
    }

    /** Writes {@code k}'s UTF-8 bytes into {@link #keyBuf} (grown when short); returns their count. */
    private int encodeKey(String k) {
        boolean ascii = RunFormat.isAscii(k);
        byte[] utf8 = ascii ? null : RunFormat.utf8(k);
        int len = ascii ? k.length() : utf8.length;
        if (keyBuf.length < len) {
            keyBuf = new byte[Math.max(len, keyBuf.length * 2)];
        }
        if (ascii) {
            RunFormat.putAscii(k, keyBuf, 0);
        } else {
            System.arraycopy(utf8, 0, keyBuf, 0, len);
        }
        return len;
    }

    private void closeBlock() {
        if (blockEntries == 0) {
            return;
        }
        for (int r : restarts) {
            block.writeInt(r);
        }
        block.writeInt(restarts.size());
        long position = out.size();
        int length = writeWithCrc(block);
        handles.add(new BlockHandle(lastKeyString, position, length, blockEntries));
        block.reset();
        restarts.clear();
        blockEntries = 0;
    }

    private int writeWithCrc(RunFormat.ByteSink payload) {
        CRC32C crc = new CRC32C();
        crc.update(payload.array(), 0, payload.size());
        out.write(payload.array(), 0, payload.size());
        out.writeInt((int) crc.getValue());
        return payload.size() + RunFormat.CRC_BYTES;
    }

    /**
     * Bytes written so far (finished blocks plus the open one), before the filter, index and footer.
     *
     * @return bytes
     */
    public long sizeBytes() {
        return out.size() + block.size();
    }

    /**
     * Adds a range tombstone (format 2), kept in the meta block; the run's key range grows to include its bounds.
     *
     * @param r the range tombstone
     * @throws IllegalStateException if {@link #finish()} was called, or the writer writes format 1
     */
    public void addRange(RangeTombstone r) {
        if (finished || formatVersion < 2) {
            throw new IllegalStateException(finished ? "run already finished" : "run format 1 has no range tombstones");
        }
        ranges.add(r);
    }

    /**
     * Range tombstones added so far.
     *
     * @return their count
     */
    public int ranges() {
        return ranges.size();
    }

    /**
     * Entries added so far.
     *
     * @return entries
     */
    public long entries() {
        return entries;
    }

    /**
     * Closes the run.
     *
     * @return the run's bytes (exactly its length) and statistics
     * @throws IllegalStateException if called twice
     */
    public Finished finish() {
        if (finished) {
            throw new IllegalStateException("run already finished");
        }
        closeBlock();
        finished = true;
        RunFormat.ByteSink part = new RunFormat.ByteSink(1024);
        FilterBlock.encode(FilterBlock.build(formatVersion, hashes, hashCount, bitsPerKey), part);
        long filterPos = out.size();
        int filterLen = writeWithCrc(part);

        part.reset();
        RunFormat.putVarLong(part, handles.size());
        for (BlockHandle h : handles) {
            byte[] k = RunFormat.utf8(h.key());
            RunFormat.putVarLong(part, k.length);
            part.write(k, 0, k.length);
            if (formatVersion < RunFormat.VERSION) {
                RunFormat.putVarLong(part, h.position()); // format 4: the sum of the lengths before it
            }
            RunFormat.putVarLong(part, h.length());
            RunFormat.putVarLong(part, h.entries());
        }
        long indexPos = out.size();
        int indexLen = writeWithCrc(part);

        String lo = firstKey;
        String hi = lastKeyString;
        ranges.sort(java.util.Comparator.comparing(RangeTombstone::from).thenComparing(RangeTombstone::to));
        for (RangeTombstone r : ranges) {
            lo = lo == null || r.from().compareTo(lo) < 0 ? r.from() : lo;
            hi = hi == null || r.to().compareTo(hi) > 0 ? r.to() : hi; // exclusive end: a conservative last key
        }
        RunMeta meta = new RunMeta(entries, tombstones, entries == 0 ? -1 : minVersion, maxVersion, lo, hi, userBytes,
                handles.size(), ranges);
        part.reset();
        RunMetaCodec.encode(meta, part);
        if (formatVersion >= 2) {
            RunMetaCodec.encodeRanges(meta, part);
        }
        long metaPos = out.size();
        int metaLen = writeWithCrc(part);

        RunFormat.ByteSink footer = new RunFormat.ByteSink(RunFormat.FOOTER_BYTES);
        footer.writeLong(RunFormat.MAGIC);
        footer.writeInt(formatVersion);
        footer.writeLong(filterPos);
        footer.writeInt(filterLen);
        footer.writeLong(indexPos);
        footer.writeInt(indexLen);
        footer.writeLong(metaPos);
        footer.writeInt(metaLen);
        CRC32C crc = new CRC32C();
        crc.update(footer.array(), 0, footer.size());
        footer.writeInt((int) crc.getValue());
        out.write(footer.array(), 0, footer.size());
        return new Finished(List.copyOf(out.chunks), (int) out.size(), meta);
    }

    /** The run's bytes as they are written: full chunks of {@link #CHUNK_BYTES}, the last one partly filled. */
    private static final class ChunkSink {
        private final List<byte[]> chunks = new ArrayList<>();
        private byte[] current;
        private int used = CHUNK_BYTES; // no chunk yet
        private long size;
        private int firstChunkBytes = 4096;

        /** Sizes the first chunk for a run of {@code bytes} (small runs stay small). */
        void expect(int bytes) {
            firstChunkBytes = Math.max(4096, Math.min(CHUNK_BYTES, bytes));
        }

        void write(byte[] b, int off, int len) {
            while (len > 0) {
                if (current == null || used == current.length) {
                    grow();
                }
                int n = Math.min(len, current.length - used);
                System.arraycopy(b, off, current, used, n);
                used += n;
                off += n;
                len -= n;
                size += n;
            }
        }

        void writeInt(int v) {
            write(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v}, 0, 4);
        }

        private void grow() {
            if (current != null && current.length < CHUNK_BYTES) {
                // the first chunk was sized for a small run: replace it by a full one
                byte[] bigger = Arrays.copyOf(current, Math.min(CHUNK_BYTES, current.length * 4));
                chunks.set(chunks.size() - 1, bigger);
                current = bigger;
                return;
            }
            if (size + CHUNK_BYTES > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException("run larger than 2 GiB");
            }
            current = new byte[chunks.isEmpty() ? firstChunkBytes : CHUNK_BYTES];
            chunks.add(current);
            used = 0;
        }

        long size() {
            return size;
        }
    }

    /**
     * A finished run: its bytes are {@code chunks} in order, {@code length} bytes in all (every chunk full but the
     * last; not copied).
     *
     * @param chunks the writer's buffer chunks (immutable list)
     * @param length the run's length in bytes
     * @param meta its statistics
     */
    public record Finished(List<byte[]> chunks, int length, RunMeta meta) {

        /**
         * The run's bytes as a stream, to hand to {@link dev.lattice.spi.RunStore#write}.
         *
         * @return a stream over the run's {@code length} bytes
         */
        public java.io.InputStream stream() {
            return new java.io.InputStream() {
                private int chunk;
                private int pos;
                private long left = length;

                @Override
                public int read() {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    java.util.Objects.checkFromIndexSize(off, len, b.length);
                    if (len == 0) {
                        return 0;
                    }
                    if (left == 0) {
                        return -1;
                    }
                    byte[] c = chunks.get(chunk);
                    int n = (int) Math.min(Math.min(len, c.length - pos), left);
                    System.arraycopy(c, pos, b, off, n);
                    pos += n;
                    left -= n;
                    if (pos == c.length) {
                        chunk++;
                        pos = 0;
                    }
                    return n;
                }
            };
        }

        /**
         * A copy of the run's bytes.
         *
         * @return exactly {@code length} bytes
         */
        public byte[] bytes() {
            byte[] all = new byte[length];
            int at = 0;
            for (byte[] c : chunks) {
                int n = Math.min(c.length, length - at);
                System.arraycopy(c, 0, all, at, n);
                at += n;
            }
            return all;
        }
    }
}
