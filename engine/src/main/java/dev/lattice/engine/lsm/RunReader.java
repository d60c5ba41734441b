package dev.lattice.engine.lsm;

import dev.lattice.spi.CorruptRunException;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.zip.CRC32C;

/**
 * Reads one run (format 1 to 4): its footer, index, key filter and meta block when opened (a few reads,
 * kilobytes), data blocks on demand through the {@link BlockCache}. Every block is checked against its CRC32C; damage
 * is a {@link CorruptRunException} naming the log, the run and the block, never skipped.
 *
 * <p>Thread-safe: immutable after {@link #open}; gets and scans from many threads share the cache.
 */
public final class RunReader {

    private static final java.util.concurrent.atomic.AtomicLong READERS = new java.util.concurrent.atomic.AtomicLong();

    private final RunSource source;
    /** Blocks a point get reads without caching them go here (per thread; a block is at most this big to fit). */
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[8192]);
    private static final int MAX_SCRATCH_BYTES = 64 * 1024;
    private final BlockCache cache;
    /** Names this reader's blocks in the cache (cheaper to hash than log, run and position). */
    private final long cacheId = READERS.incrementAndGet();
    /**
     * The index key of each data block, UTF-8, one after another: block i's is {@code [keyEnds[i-1], keyEnds[i])}.
     * Its last key (formats 1-3), or (format 4) a separator at or after it and before the next block's first key.
     */
    private final byte[] lastKeys;
    private final int[] keyEnds;
    private final long[] positions;
    private final int[] lengths;
    private final KeyFilter filter;
    private final int formatVersion;
    private final RunMeta meta;
    /** One block in this many has its last key sampled into {@link #sampleKeys}. */
    static final int SAMPLE_EVERY = 64;
    /** The last key of blocks SAMPLE_EVERY-1, 2*SAMPLE_EVERY-1, ... and of the last block, UTF-8, one after another. */
    private final byte[] sampleKeys;
    private final int[] sampleEnds;

    private RunReader(RunSource source, BlockCache cache, byte[] lastKeys, int[] keyEnds, long[] positions,
            int[] lengths, KeyFilter filter, int formatVersion, RunMeta meta) {
        this.source = source;
        this.cache = cache;
        this.lastKeys = lastKeys;
        this.keyEnds = keyEnds;
        this.positions = positions;
        this.lengths = lengths;
        this.filter = filter;
        this.formatVersion = formatVersion;
        this.meta = meta;
        int n = keyEnds.length;
        int samples = (n + SAMPLE_EVERY - 1) / SAMPLE_EVERY;
        this.sampleEnds = new int[samples];
        java.io.ByteArrayOutputStream sampled = new java.io.ByteArrayOutputStream(Math.max(16, samples * 24));
        for (int j = 0; j < samples; j++) {
            int b = Math.min(n - 1, j * SAMPLE_EVERY + SAMPLE_EVERY - 1);
            int start = b == 0 ? 0 : keyEnds[b - 1];
            sampled.write(lastKeys, start, keyEnds[b] - start);
            sampleEnds[j] = sampled.size();
        }
        this.sampleKeys = sampled.toByteArray();
    }

    /**
     * Opens a run: reads and checks its footer, filter, index and meta blocks.
     *
     * @param source where its bytes are
     * @param cache the block cache data blocks go through
     * @return the reader
     * @throws CorruptRunException if the footer or a block fails its check or cannot be decoded
     * @throws dev.lattice.spi.RunNotFoundException if the run does not exist
     */
    public static RunReader open(RunSource source, BlockCache cache) {
        long length = source.length();
        if (length < RunFormat.FOOTER_BYTES) {
            throw corrupt(source, -1, "run of " + length + " bytes is shorter than its footer");
        }
        long footerPos = length - RunFormat.FOOTER_BYTES;
        ByteBuffer f = ByteBuffer.wrap(readFully(source, footerPos, RunFormat.FOOTER_BYTES, null));
        CRC32C crc = new CRC32C();
        crc.update(f.array(), 0, RunFormat.FOOTER_BYTES - 4);
        if (f.getLong(0) != RunFormat.MAGIC) {
            throw corrupt(source, footerPos, "footer magic is wrong (not a Lattice run, or truncated)");
        }
        if ((int) crc.getValue() != f.getInt(RunFormat.FOOTER_BYTES - 4)) {
            throw corrupt(source, footerPos, "footer fails its CRC32C check");
        }
        int version = f.getInt(8);
        if (version < RunFormat.VERSION_1 || version > RunFormat.VERSION) {
            throw corrupt(source, footerPos, "run format version " + version + " is not readable by this release "
                    + "(reads versions " + RunFormat.VERSION_1 + " to " + RunFormat.VERSION + ")");
        }
        long filterPos = f.getLong(12);
        int filterLen = f.getInt(20);
        long indexPos = f.getLong(24);
        int indexLen = f.getInt(32);
        long metaPos = f.getLong(36);
        int metaLen = f.getInt(44);
        ByteBuffer filterBytes = ByteBuffer.wrap(block(source, filterPos, filterLen, footerPos));
        KeyFilter filter;
        try {
            filter = FilterBlock.decode(version, filterBytes);
        } catch (RuntimeException e) {
            throw corrupt(source, filterPos, "cannot decode the run's filter block (format " + version + "): "
                    + e.getMessage());
        }
        try {
            ByteBuffer idx = ByteBuffer.wrap(block(source, indexPos, indexLen, footerPos));
            int n = RunFormat.getVarInt(idx);
            java.io.ByteArrayOutputStream keys = new java.io.ByteArrayOutputStream(Math.min(indexLen, 1 << 20));
            int[] ends = new int[n];
            long[] pos = new long[n];
            int[] len = new int[n];
            boolean implicit = version >= RunFormat.VERSION; // format 4: blocks back to back from byte 0
            long at = 0;
            for (int i = 0; i < n; i++) {
                int kl = RunFormat.getVarInt(idx);
                keys.write(idx.array(), idx.position(), kl);
                ends[i] = keys.size();
                idx.position(idx.position() + kl);
                pos[i] = implicit ? at : RunFormat.getVarLong(idx);
                len[i] = RunFormat.getVarInt(idx);
                RunFormat.getVarLong(idx);
                if (pos[i] < 0 || len[i] < RunFormat.CRC_BYTES || pos[i] + len[i] > filterPos) {
                    throw new IllegalStateException("index entry " + i + " points outside the data blocks");
                }
                at = pos[i] + len[i];
            }
            if (implicit && at != filterPos) {
                throw new IllegalStateException("the index's blocks end at byte " + at + ", the filter block starts"
                        + " at " + filterPos);
            }
            ByteBuffer metaBytes = ByteBuffer.wrap(block(source, metaPos, metaLen, footerPos));
            RunMeta meta = version >= 2 ? RunMetaCodec.decodeWithRanges(metaBytes) : RunMetaCodec.decode(metaBytes);
            return new RunReader(source, cache, keys.toByteArray(), ends, pos, len, filter, version, meta);
        } catch (RuntimeException e) {
            if (e instanceof CorruptRunException || e instanceof dev.lattice.spi.WalStorageException) {
                throw e;
            }
            throw corrupt(source, indexPos, "cannot decode the run's index or meta block: " + e.getMessage());
        }
    }

    private static byte[] block(RunSource source, long pos, int len, long limit) {
        return java.util.Arrays.copyOf(checkedBlock(source, pos, len, limit), len - RunFormat.CRC_BYTES);
    }

    /** @return the block's bytes with its CRC32C still at the end, checked */
    private static byte[] checkedBlock(RunSource source, long pos, int len, long limit) {
        return checkedBlock(source, pos, len, limit, null);
    }

    /**
     * @param into an array of at least {@code len} bytes to read into, or null for a new one
     * @return the array holding the block's bytes from index 0 with its CRC32C after them, checked
     */
    private static byte[] checkedBlock(RunSource source, long pos, int len, long limit, byte[] into) {
        if (pos < 0 || len < RunFormat.CRC_BYTES || pos + len > limit) {
            throw corrupt(source, pos, "block of " + len + " bytes at " + pos + " lies outside the run");
        }
        byte[] raw = readFully(source, pos, len, into);
        int payload = len - RunFormat.CRC_BYTES;
        CRC32C crc = new CRC32C();
        crc.update(raw, 0, payload);
        if ((int) crc.getValue() != ByteBuffer.wrap(raw, payload, 4).getInt()) {
            throw corrupt(source, pos, "block fails its CRC32C check");
        }
        return raw;
    }

    private static byte[] readFully(RunSource source, long pos, int len, byte[] into) {
        byte[] b = into != null ? into : new byte[len];
        int done = 0;
        while (done < len) {
            int n = source.read(pos + done, b, done, len - done);
            if (n <= 0) {
                throw corrupt(source, pos, "run ends inside a block (" + done + " of " + len + " bytes)");
            }
            done += n;
        }
        return b;
    }

    private static CorruptRunException corrupt(RunSource s, long pos, String what) {
        return new CorruptRunException(s.log(), s.id(), pos, what);
    }

    /**
     * The run's statistics.
     *
     * @return its meta block
     */
    public RunMeta meta() {
        return meta;
    }

    /** The run's key filter (for tests). */
    KeyFilter filter() {
        return filter;
    }

    /**
     * The run's format version, from its footer.
     *
     * @return 1, 2 or 3
     */
    public int formatVersion() {
        return formatVersion;
    }

    /**
     * The run's source.
     *
     * @return where it is read from
     */
    public RunSource source() {
        return source;
    }

    /**
     * Bytes this reader keeps in memory (index and filter), for the engine's memory accounting.
     *
     * @return bytes, approximate
     */
    public long residentBytes() {
        return filter.sizeBytes() + 16L + lastKeys.length + 16L * positions.length + 3 * 16 + 128
                + sampleKeys.length + 4L * sampleEnds.length + 32;
    }

    private DataBlock dataBlock(int i) {
        return dataBlock(i, true);
    }

    private DataBlock dataBlock(int i, boolean fillCache) {
        java.util.function.LongFunction<DataBlock> load = p -> loadBlock(i, null);
        return fillCache ? cache.get(cacheId, positions[i], load) : cache.getOrLoad(cacheId, positions[i], load);
    }

    /**
     * Block {@code i} for a point get: from the cache, or read; a read the cache does not admit goes into this
     * thread's scratch array, so the block is valid only until the thread's next point-get read (a get walks one
     * block at a time and copies what it returns).
     */
    private DataBlock dataBlockForGet(int i) {
        return cache.get(cacheId, positions[i], p -> loadBlock(i, null), p -> loadBlock(i, scratch(lengths[i])));
    }

    private DataBlock loadBlock(int i, byte[] into) {
        byte[] raw = checkedBlock(source, positions[i], lengths[i], Long.MAX_VALUE, into);
        try {
            return new DataBlock(raw, lengths[i] - RunFormat.CRC_BYTES);
        } catch (IllegalStateException e) {
            throw corrupt(source, positions[i], "cannot decode the data block: " + e.getMessage());
        }
    }

    /** @return this thread's scratch array of at least {@code len} bytes; null (read into a new one) above 64 KiB */
    private static byte[] scratch(int len) {
        if (len > MAX_SCRATCH_BYTES) {
            return null;
        }
        byte[] s = SCRATCH.get();
        if (s.length < len) {
            s = new byte[Math.max(len, Math.min(MAX_SCRATCH_BYTES, s.length * 2))];
            SCRATCH.set(s);
        }
        return s;
    }

    private int blocks() {
        return keyEnds.length;
    }

    /** Compares block b's index key (its last key or a separator after it) with a UTF-8 key. */
    private int compareLastKey(int b, byte[] key) {
        return KeyOrder.compare(lastKeys, b == 0 ? 0 : keyEnds[b - 1], keyEnds[b], key, 0, key.length);
    }

    private int firstBlockFor(String key) {
        return firstBlockFor(key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The first block whose last key is at or after {@code key}, or {@link #blocks()} when none is: first among the
     * sampled last keys (every {@value #SAMPLE_EVERY}th block's, a small array that stays in the CPU cache), then
     * within the one stretch of blocks the sample leaves.
     */
    private int firstBlockFor(byte[] key) {
        int n = blocks();
        if (n <= SAMPLE_EVERY) {
            return firstBlockFor(key, 0, n - 1);
        }
        int lo = 0;
        int hi = sampleEnds.length - 1;
        int stretch = sampleEnds.length;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (KeyOrder.compare(sampleKeys, mid == 0 ? 0 : sampleEnds[mid - 1], sampleEnds[mid], key, 0,
                    key.length) >= 0) {
                stretch = mid;
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        if (stretch == sampleEnds.length) {
            return n;
        }
        int first = stretch * SAMPLE_EVERY;
        return firstBlockFor(key, first, Math.min(n - 1, first + SAMPLE_EVERY - 1));
    }

    /** Binary search of {@link #firstBlockFor(byte[])} over blocks {@code [from, to]}, known to hold the answer. */
    private int firstBlockFor(byte[] key, int from, int to) {
        int lo = from;
        int hi = to;
        int found = to + 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (compareLastKey(mid, key) >= 0) {
                found = mid;
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        return found;
    }

    /**
     * The newest version of a key at or below {@code maxVersion}.
     *
     * @param key the key
     * @param maxVersion the newest version the caller may see ({@code Long.MAX_VALUE} for the latest)
     * @return the entry (a value or a tombstone), or null when this run has no such version
     * @throws CorruptRunException if a block read fails its check
     */
    public RunEntry get(String key, long maxVersion) {
        return get(new LookupKey(key), maxVersion);
    }

    /**
     * As {@link #get(String, long)}, for a key already encoded (shared by the runs a lookup visits).
     *
     * @param lookup the key
     * @param maxVersion the newest version the caller may see ({@code Long.MAX_VALUE} for the latest)
     * @return the entry (a value or a tombstone), or null when this run has no such version
     * @throws CorruptRunException if a block read fails its check
     */
    public RunEntry get(LookupKey lookup, long maxVersion) {
        String key = lookup.key();
        if (!meta.overlaps(key, null) || key.compareTo(meta.lastKey()) > 0 || key.compareTo(meta.firstKey()) < 0
                || !filter.mightContain(lookup.bloomHash())) {
            return null;
        }
        byte[] utf8 = lookup.utf8();
        for (int b = firstBlockFor(utf8); b < blocks(); b++) {
            DataBlock.Cursor c = dataBlockForGet(b).cursor();
            c.seek(utf8);
            while (next(c, b)) {
                int cmp = c.compareKey(utf8);
                if (cmp > 0) {
                    return null;
                }
                if (cmp == 0 && c.version() <= maxVersion) {
                    return c.entry();
                }
            }
            if (compareLastKey(b, utf8) != 0) {
                return null;
            }
        }
        return null;
    }

    private boolean next(DataBlock.Cursor c, int block) {
        try {
            return c.next();
        } catch (RuntimeException e) {
            throw corrupt(source, positions[block], "cannot decode an entry: " + e);
        }
    }

    /**
     * Every entry (all versions) with a key in {@code [from, to)}, in run order, its blocks kept in the cache.
     *
     * @param from first key, inclusive, or null
     * @param to last key, exclusive, or null
     * @return an iterator reading blocks as it goes (not thread-safe; one per caller)
     */
    public Iterator<RunEntry> scan(String from, String to) {
        return scan(from, to, true);
    }

    /**
     * Every entry of the run, in run order, for a compaction: blocks already in the cache are used, blocks read are
     * not added to it (they are about to be replaced and would push out the blocks readers need).
     *
     * @return an iterator reading blocks as it goes (not thread-safe; one per caller)
     */
    public Iterator<RunEntry> scanUncached() {
        return scan(null, null, false);
    }

    /**
     * Every entry (all versions) with a key in {@code [from, to)}, in run order, as a cursor that decodes an entry's
     * fields in place: a reader that wants only some entries whole (a scan's merge, which skips shadowed versions)
     * makes no {@link RunEntry} for the others. Blocks read are kept in the cache.
     *
     * @param from first key, inclusive, or null
     * @param to last key, exclusive, or null
     * @return a cursor before the first entry (not thread-safe; one per caller)
     */
    public Scan scanCursor(String from, String to) {
        return new Scan(from, to, true);
    }

    /**
     * A forward walk over a key range of the run; {@link #next()} moves to the next entry, whose fields are then
     * readable until the following call. Not thread-safe. Read failures throw {@link CorruptRunException} (a block
     * fails its check or an entry does not decode).
     */
    public final class Scan {
        private byte[] fromUtf8; // null once passed
        private final String to;
        private final boolean fillCache;
        private int block;
        private DataBlock.Cursor cursor;
        private boolean done;

        private Scan(String from, String to, boolean fillCache) {
            this.fromUtf8 = from == null ? null : from.getBytes(StandardCharsets.UTF_8);
            this.to = to;
            this.fillCache = fillCache;
            this.block = fromUtf8 == null ? 0 : firstBlockFor(fromUtf8);
            this.done = !meta.overlaps(from, to);
        }

        /**
         * Moves to the next entry of the range.
         *
         * @return true when it moved to an entry, false at the end of the range (and after)
         * @throws CorruptRunException if a block fails its check or an entry does not decode
         */
        public boolean next() {
            while (!done) {
                if (cursor == null) {
                    if (block >= blocks()) {
                        break;
                    }
                    cursor = dataBlock(block, fillCache).cursor();
                    if (fromUtf8 != null) {
                        cursor.seek(fromUtf8);
                    }
                }
                if (!RunReader.this.next(cursor, block)) {
                    cursor = null;
                    block++;
                    continue;
                }
                if (fromUtf8 != null) {
                    if (cursor.compareKey(fromUtf8) < 0) {
                        continue;
                    }
                    fromUtf8 = null; // keys ascend from here
                }
                if (to != null && cursor.key().compareTo(to) >= 0) {
                    break;
                }
                return true;
            }
            done = true;
            cursor = null;
            return false;
        }

        /**
         * The current entry's key.
         *
         * @return the key
         */
        public String key() {
            return cursor.key();
        }

        /**
         * The current entry's version.
         *
         * @return the version (the engine's sequence), non-negative
         */
        public long version() {
            return cursor.version();
        }

        /**
         * Whether the current entry is a delete.
         *
         * @return true for a tombstone
         */
        public boolean tombstone() {
            return cursor.tombstone();
        }

        /**
         * The current entry's expiry.
         *
         * @return epoch milliseconds, 0 for never
         */
        public long expiresAtMillis() {
            return cursor.expiresAt();
        }

        /**
         * The current entry's value.
         *
         * @return a copy of its bytes (empty for a tombstone)
         */
        public byte[] value() {
            return cursor.valueCopy();
        }

        /**
         * The current entry as a record.
         *
         * @return the entry, its value copied
         */
        public RunEntry entry() {
            return cursor.entry();
        }
    }

    /** Every entry (all versions) with a key in {@code [from, to)}, in run order, as an iterator. */
    private Iterator<RunEntry> scan(String from, String to, boolean fillCache) {
        Scan scan = new Scan(from, to, fillCache);
        return new Iterator<>() {
            private RunEntry next;
            private boolean done;

            @Override
            public boolean hasNext() {
                if (next == null && !done) {
                    if (scan.next()) {
                        next = scan.entry();
                    } else {
                        done = true;
                    }
                }
                return next != null;
            }

            @Override
            public RunEntry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                RunEntry e = next;
                next = null;
                return e;
            }
        };
    }

    /**
     * Every entry with a key in {@code [from, to)}, keys descending (entries of one key keep their run order). Reads
     * one block at a time from the end of the range.
     *
     * @param from first key, inclusive, or null
     * @param to last key, exclusive, or null
     * @return an iterator reading blocks as it goes (not thread-safe; one per caller)
     * @throws CorruptRunException from the iterator if a block fails its check
     */
    public Iterator<RunEntry> scanReverse(String from, String to) {
        return new Iterator<>() {
            private int block = !meta.overlaps(from, to) ? -1
                    : to == null ? blocks() - 1 : Math.min(blocks() - 1, firstBlockFor(to));
            private final int firstBlock = from == null ? 0 : firstBlockFor(from);
            private final java.util.ArrayList<RunEntry> buffer = new java.util.ArrayList<>();
            private int pos = -1;

            @Override
            public boolean hasNext() {
                while (pos < 0 && block >= firstBlock && block >= 0) {
                    buffer.clear();
                    DataBlock.Cursor c = dataBlock(block).cursor();
                    while (RunReader.this.next(c, block)) {
                        String k = c.key();
                        if ((from == null || k.compareTo(from) >= 0) && (to == null || k.compareTo(to) < 0)) {
                            buffer.add(c.entry());
                        }
                    }
                    block--;
                    pos = buffer.size() - 1;
                }
                return pos >= 0;
            }

            @Override
            public RunEntry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return buffer.get(pos--);
            }
        };
    }
}
