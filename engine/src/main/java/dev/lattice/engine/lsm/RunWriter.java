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
 * run is bounded by the memtable or compaction output size that produced it.
 */
public final class RunWriter {

    /** One data block's place in the run, as the index records it. */
    record BlockHandle(String lastKey, long position, int length, int entries) {
    }

    private final int blockBytes;
    private final int bitsPerKey;
    private final RunFormat.ByteSink out;
    private final RunFormat.ByteSink block;
    private final List<BlockHandle> handles = new ArrayList<>();
    private final List<Integer> restarts = new ArrayList<>();
    private long[] hashes = new long[1024];
    private int hashCount;
    private byte[] lastKey = new byte[0];
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
     * Creates a writer whose buffer starts at {@code expectedBytes} (avoids regrowing the buffer of a large run).
     *
     * @param blockBytes target data block size in bytes (a block closes once it reaches it), at least 256
     * @param bitsPerKey Bloom filter bits per distinct key, at least 1 (10 gives about 1% false positives)
     * @param expectedBytes the run's expected size in bytes (a hint; the buffer grows past it)
     * @throws IllegalArgumentException if an argument is out of range
     */
    public RunWriter(int blockBytes, int bitsPerKey, int expectedBytes) {
        this(blockBytes, bitsPerKey, expectedBytes, RunFormat.VERSION);
    }

    /** As above, writing {@code formatVersion} (1 only for compatibility tests: no expiry, no range tombstones). */
    RunWriter(int blockBytes, int bitsPerKey, int expectedBytes, int formatVersion) {
        if (formatVersion != RunFormat.VERSION && formatVersion != RunFormat.VERSION_1) {
            throw new IllegalArgumentException("run format version " + formatVersion + " cannot be written");
        }
        this.formatVersion = formatVersion;
        if (blockBytes < 256 || bitsPerKey < 1) {
            throw new IllegalArgumentException("blockBytes must be >= 256 and bitsPerKey >= 1, got " + blockBytes
                    + " and " + bitsPerKey);
        }
        this.blockBytes = blockBytes;
        this.bitsPerKey = bitsPerKey;
        this.out = new RunFormat.ByteSink(Math.max(1 << 12, expectedBytes));
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
        byte[] key = RunFormat.utf8(e.key());
        int shared = 0;
        if (blockEntries % RunFormat.RESTART_INTERVAL == 0) {
            restarts.add(block.size());
        } else {
            int max = Math.min(key.length, lastKey.length);
            while (shared < max && key[shared] == lastKey[shared]) {
                shared++;
            }
        }
        RunFormat.putVarLong(block, shared);
        RunFormat.putVarLong(block, key.length - shared);
        block.write(key, shared, key.length - shared);
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
            hashes[hashCount++] = BloomFilter.hash(e.key());
        }
        if (firstKey == null) {
            firstKey = e.key();
        }
        lastKey = key;
        lastKeyString = e.key();
        lastVersion = e.version();
        blockEntries++;
        entries++;
        tombstones += e.tombstone() ? 1 : 0;
        minVersion = Math.min(minVersion, e.version());
        maxVersion = Math.max(maxVersion, e.version());
        userBytes += key.length + e.value().length;
        if (block.size() >= blockBytes) {
            closeBlock();
        }
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
        BloomFilter.build(hashes, hashCount, bitsPerKey).encode(part);
        long filterPos = out.size();
        int filterLen = writeWithCrc(part);

        part.reset();
        RunFormat.putVarLong(part, handles.size());
        for (BlockHandle h : handles) {
            byte[] k = RunFormat.utf8(h.lastKey());
            RunFormat.putVarLong(part, k.length);
            part.write(k, 0, k.length);
            RunFormat.putVarLong(part, h.position());
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
        return new Finished(out.array(), out.size(), meta);
    }

    /**
     * A finished run: its bytes are the first {@code length} bytes of {@code buffer} (not copied).
     *
     * @param buffer the writer's buffer
     * @param length the run's length in bytes
     * @param meta its statistics
     */
    public record Finished(byte[] buffer, int length, RunMeta meta) {

        /**
         * The run's bytes as a stream, to hand to {@link dev.lattice.spi.RunStore#write}.
         *
         * @return a stream over the first {@code length} bytes of the buffer
         */
        public java.io.InputStream stream() {
            return new java.io.ByteArrayInputStream(buffer, 0, length);
        }

        /**
         * A copy of the run's bytes.
         *
         * @return exactly {@code length} bytes
         */
        public byte[] bytes() {
            return Arrays.copyOf(buffer, length);
        }
    }
}
