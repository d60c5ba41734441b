package dev.lattice.provider.dynamodb;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.LogId;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Splits a batch into chunk items of at most {@link DynamoItemSize#MAX_ITEM_BYTES} bytes (attribute names
 * included) and reads chunk items back. The split is deterministic: the same batch always gives the same chunks, so
 * a retried stage writes the same keys and a failed one can be cleaned up by key.
 *
 * <p>A chunk item holds consecutive entries of one batch: its sort key is the offset of its last entry, and it
 * carries its first offset, the batch's id, offsets and epoch, its index and the chunk count, the entry lengths
 * (varints) and the payloads concatenated, and a CRC32C over offsets, batch id, lengths and payloads.
 *
 * <p>Stateless and thread-safe.
 */
final class BatchChunks {

    /** Upper bound of a chunk item's bytes besides its entries' lengths and payloads, for any log and offset. */
    static final int MAX_FIXED_OVERHEAD_BYTES = 1024;

    /** Largest entry: one entry plus the fixed overhead always fits one item. */
    static final int MAX_ENTRY_BYTES = DynamoItemSize.MAX_ITEM_BYTES - MAX_FIXED_OVERHEAD_BYTES;

    private BatchChunks() {
    }

    /**
     * One planned chunk item.
     *
     * @param index index in the batch, from 0
     * @param count chunks of the batch
     * @param first offset of the chunk's first entry
     * @param last offset of the chunk's last entry (its sort key)
     * @param payloadBytes the chunk's payload bytes
     * @param item the item to put
     * @param itemBytes the item's size by {@link DynamoItemSize}
     */
    record Chunk(int index, int count, long first, long last, long payloadBytes, Map<String, AttributeValue> item,
                 long itemBytes) {
        /** @return entries in the chunk */
        int entries() {
            return (int) (last - first + 1);
        }
    }

    /**
     * A chunk item read back.
     *
     * @param first offset of its first entry
     * @param last offset of its last entry
     * @param epoch the staging writer's epoch
     * @param batchId the batch id
     * @param batchFirst first offset of the batch
     * @param batchLast last offset of the batch
     * @param index the chunk's index
     * @param count the batch's chunk count
     * @param lengths entry lengths, one per offset from {@code first}
     * @param data the payloads, or null when the item was read without them
     * @param itemBytes the item's size (computed from the lengths when the data was not read)
     */
    record Stored(long first, long last, long epoch, BatchId batchId, long batchFirst, long batchLast, int index,
                  int count, int[] lengths, byte[] data, long itemBytes) {

        /** @return payload bytes of the entries from {@code from} to {@code to}, inclusive */
        long bytesBetween(long from, long to) {
            long sum = 0;
            for (long o = Math.max(from, first); o <= Math.min(to, last); o++) {
                sum += lengths[(int) (o - first)];
            }
            return sum;
        }

        /** @return the payload of an entry of this chunk, a new array */
        byte[] payload(long offset) {
            int idx = (int) (offset - first);
            int pos = 0;
            for (int i = 0; i < idx; i++) {
                pos += lengths[i];
            }
            byte[] out = new byte[lengths[idx]];
            System.arraycopy(data, pos, out, 0, out.length);
            return out;
        }
    }

    /**
     * Plans the chunk items of a batch.
     *
     * @param pk the log's partition key
     * @param epoch the staging fence's epoch
     * @param batch the batch; every entry at most {@link #MAX_ENTRY_BYTES} bytes
     * @return the chunks, in offset order
     * @throws IllegalStateException if an item would exceed the item limit (a bug: limits are checked before)
     */
    static List<Chunk> plan(String pk, long epoch, EncodedBatch batch) {
        long fixed = fixedOverheadBound(pk, epoch, batch.firstOffset(), batch.lastOffset(), batch.size());
        List<byte[]> entries = batch.entries();
        List<int[]> ranges = new ArrayList<>();
        int start = 0;
        long size = fixed;
        for (int j = 0; j < entries.size(); j++) {
            int len = entries.get(j).length;
            long cost = Varint.size(len) + (long) len;
            if (j > start && size + cost > DynamoItemSize.MAX_ITEM_BYTES) {
                ranges.add(new int[] {start, j - 1});
                start = j;
                size = fixed;
            }
            size += cost;
            if (size > DynamoItemSize.MAX_ITEM_BYTES) {
                throw new IllegalStateException("entry of " + len + " bytes does not fit one item (limit "
                        + DynamoItemSize.MAX_ITEM_BYTES + " bytes with " + fixed + " bytes of overhead)");
            }
        }
        ranges.add(new int[] {start, entries.size() - 1});
        List<Chunk> out = new ArrayList<>(ranges.size());
        byte[] id = batch.batchId().toBytes();
        for (int c = 0; c < ranges.size(); c++) {
            int from = ranges.get(c)[0];
            int to = ranges.get(c)[1];
            ByteArrayOutputStream lengths = new ByteArrayOutputStream((to - from + 1) * 2);
            long payload = 0;
            for (int j = from; j <= to; j++) {
                Varint.write(lengths, entries.get(j).length);
                payload += entries.get(j).length;
            }
            byte[] data = new byte[Math.toIntExact(payload)];
            int pos = 0;
            for (int j = from; j <= to; j++) {
                byte[] e = entries.get(j);
                System.arraycopy(e, 0, data, pos, e.length);
                pos += e.length;
            }
            long first = batch.firstOffset() + from;
            long last = batch.firstOffset() + to;
            byte[] lengthBytes = lengths.toByteArray();
            Map<String, AttributeValue> item = new HashMap<>();
            item.put(Layout.PK, Layout.s(pk));
            item.put(Layout.SK, Layout.n(last));
            item.put(Layout.CHUNK_FIRST, Layout.n(first));
            item.put(Layout.EPOCH, Layout.n(epoch));
            item.put(Layout.BATCH_ID, Layout.b(id));
            item.put(Layout.BATCH_FIRST, Layout.n(batch.firstOffset()));
            item.put(Layout.BATCH_LAST, Layout.n(batch.lastOffset()));
            item.put(Layout.CHUNK_INDEX, Layout.n(c));
            item.put(Layout.CHUNK_COUNT, Layout.n(ranges.size()));
            item.put(Layout.LENGTHS, Layout.b(lengthBytes));
            if (data.length > 0) {
                item.put(Layout.DATA, Layout.b(data));
            }
            item.put(Layout.CRC, Layout.n(crc(first, last, id, lengthBytes, data)));
            long itemBytes = DynamoItemSize.of(item);
            long bound = fixed + lengthBytes.length + data.length;
            if (itemBytes > bound || itemBytes > DynamoItemSize.MAX_ITEM_BYTES) {
                throw new IllegalStateException("chunk item of " + itemBytes + " bytes exceeds its planned bound "
                        + bound + " or the item limit " + DynamoItemSize.MAX_ITEM_BYTES);
            }
            out.add(new Chunk(c, ranges.size(), first, last, payload, Map.copyOf(item), itemBytes));
        }
        return out;
    }

    /**
     * An upper bound of a chunk item's size without its lengths' and payloads' bytes.
     *
     * @param pk the partition key
     * @param epoch the epoch
     * @param batchFirst the batch's first offset
     * @param batchLast the batch's last offset
     * @param entries the batch's entry count (bounds the chunk index and count)
     * @return bytes
     */
    static long fixedOverheadBound(String pk, long epoch, long batchFirst, long batchLast, int entries) {
        long offsetBound = numberBound(batchLast);
        return name(Layout.PK) + DynamoItemSize.utf8(pk)
                + name(Layout.SK) + offsetBound
                + name(Layout.CHUNK_FIRST) + offsetBound
                + name(Layout.EPOCH) + DynamoItemSize.number(epoch)
                + name(Layout.BATCH_ID) + 16
                + name(Layout.BATCH_FIRST) + DynamoItemSize.number(batchFirst)
                + name(Layout.BATCH_LAST) + DynamoItemSize.number(batchLast)
                + name(Layout.CHUNK_INDEX) + numberBound(entries)
                + name(Layout.CHUNK_COUNT) + numberBound(entries)
                + name(Layout.LENGTHS)
                + name(Layout.DATA)
                + name(Layout.CRC) + numberBound(0xFFFF_FFFFL);
    }

    /** @return the largest size of a non-negative number up to {@code max} */
    static long numberBound(long max) {
        return 2 + (Long.toString(max).length() + 1) / 2;
    }

    private static int name(String attribute) {
        return attribute.length();
    }

    static long crc(long first, long last, byte[] batchId, byte[] lengths, byte[] data) {
        CRC32C crc = new CRC32C();
        ByteBuffer head = ByteBuffer.allocate(16);
        head.putLong(first).putLong(last);
        crc.update(head.array());
        crc.update(batchId);
        crc.update(lengths);
        crc.update(data);
        return crc.getValue();
    }

    /**
     * Reads a chunk item back, checking it against its CRC when its data was read.
     *
     * @param log the log, for errors
     * @param item the item (all attributes, or all but {@link Layout#DATA} and {@link Layout#CRC})
     * @param withData whether the data was read (then the CRC is checked)
     * @return the chunk
     * @throws CorruptLogException if the item is malformed or fails its CRC
     */
    static Stored decode(LogId log, Map<String, AttributeValue> item, boolean withData) {
        long last = -1;
        try {
            last = Layout.num(item, Layout.SK);
            long first = Layout.num(item, Layout.CHUNK_FIRST);
            byte[] id = Layout.bin(item, Layout.BATCH_ID);
            byte[] lengthBytes = Layout.bin(item, Layout.LENGTHS);
            long n = last - first + 1;
            if (n < 1 || n > Integer.MAX_VALUE || id.length != 16) {
                throw new IllegalArgumentException("bad chunk range " + first + ".." + last + " or batch id");
            }
            int[] lengths = new int[(int) n];
            Varint.Reader r = new Varint.Reader(lengthBytes);
            long total = 0;
            for (int i = 0; i < n; i++) {
                lengths[i] = Math.toIntExact(r.next());
                total += lengths[i];
            }
            if (r.hasMore()) {
                throw new IllegalArgumentException("more lengths than entries " + first + ".." + last);
            }
            byte[] data = null;
            if (withData) {
                data = Layout.bin(item, Layout.DATA);
                if (data.length != total) {
                    throw new IllegalArgumentException("data holds " + data.length + " bytes, lengths say " + total);
                }
                long expected = Layout.num(item, Layout.CRC);
                long actual = crc(first, last, id, lengthBytes, data);
                if (expected != actual) {
                    throw new IllegalArgumentException("CRC32C mismatch: stored " + expected + ", computed " + actual);
                }
            }
            long itemBytes = withData ? DynamoItemSize.of(item)
                    : DynamoItemSize.of(item) + (total > 0 ? name(Layout.DATA) + total : 0)
                    + (item.containsKey(Layout.CRC) ? 0 : name(Layout.CRC) + DynamoItemSize.number(0xFFFF_FFFFL));
            return new Stored(first, last, Layout.num(item, Layout.EPOCH), BatchId.fromBytes(id),
                    Layout.num(item, Layout.BATCH_FIRST), Layout.num(item, Layout.BATCH_LAST),
                    Math.toIntExact(Layout.num(item, Layout.CHUNK_INDEX)),
                    Math.toIntExact(Layout.num(item, Layout.CHUNK_COUNT)), lengths, data, itemBytes);
        } catch (RuntimeException e) {
            throw new CorruptLogException(log, last, "chunk item cannot be decoded: " + e.getMessage(), e);
        }
    }
}
