package dev.lattice.provider.dynamodb;

import dev.lattice.spi.CheckpointInfo;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The published checkpoints of a log, kept in its head item so that publishing one is a single conditional head
 * update: a reader sees the old catalog or the new one, never a half-written checkpoint. Entries are sorted by
 * through-offset, one per through-offset; the last is the latest.
 *
 * <p>Encoding: varint count, then per entry varints through + 1, format version, size, epoch, generation, chunk
 * count. Immutable and thread-safe.
 */
final class CheckpointCatalog {

    /** Most checkpoints a log keeps at once; {@code deleteBefore} makes room. */
    static final int MAX_ENTRIES = 1000;

    static final CheckpointCatalog EMPTY = new CheckpointCatalog(List.of());

    /**
     * One published checkpoint.
     *
     * @param info what the SPI reports
     * @param generation the random generation its chunks are stored under
     * @param chunks how many chunk items hold its bytes
     */
    record Entry(CheckpointInfo info, long generation, int chunks) {
    }

    private final List<Entry> entries;

    private CheckpointCatalog(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    /**
     * @param bytes the head attribute, empty for none
     * @return the catalog
     * @throws IllegalArgumentException if the bytes are malformed
     */
    static CheckpointCatalog decode(byte[] bytes) {
        if (bytes.length == 0) {
            return EMPTY;
        }
        Varint.Reader r = new Varint.Reader(bytes);
        int count = Math.toIntExact(r.next());
        List<Entry> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long through = r.next() - 1;
            int format = Math.toIntExact(r.next());
            long size = r.next();
            long epoch = r.next();
            long generation = r.next();
            int chunks = Math.toIntExact(r.next());
            out.add(new Entry(new CheckpointInfo(through, format, size, epoch), generation, chunks));
        }
        if (r.hasMore()) {
            throw new IllegalArgumentException("trailing bytes after " + count + " checkpoints");
        }
        return new CheckpointCatalog(out);
    }

    /** @return the encoded form, empty for no checkpoint */
    byte[] encode() {
        if (entries.isEmpty()) {
            return new byte[0];
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(1 + entries.size() * 24);
        Varint.write(out, entries.size());
        for (Entry e : entries) {
            Varint.write(out, e.info().throughOffset() + 1);
            Varint.write(out, e.info().formatVersion());
            Varint.write(out, e.info().sizeBytes());
            Varint.write(out, e.info().epoch());
            Varint.write(out, e.generation());
            Varint.write(out, e.chunks());
        }
        return out.toByteArray();
    }

    /** @return the entries, sorted by through-offset */
    List<Entry> entries() {
        return entries;
    }

    /** @return the latest checkpoint, if any */
    Optional<Entry> latest() {
        return entries.isEmpty() ? Optional.empty() : Optional.of(entries.get(entries.size() - 1));
    }

    /**
     * @param info a description from {@code latest} or {@code publish}
     * @return the entry with exactly that description, if still published
     */
    Optional<Entry> find(CheckpointInfo info) {
        for (Entry e : entries) {
            if (e.info().equals(info)) {
                return Optional.of(e);
            }
        }
        return Optional.empty();
    }

    /**
     * The catalog with a new latest entry; an entry with the same through-offset is replaced.
     *
     * @param entry the new entry, at or above the latest through-offset
     * @param replaced receives the entry it replaces, if any
     * @return the new catalog
     */
    CheckpointCatalog with(Entry entry, List<Entry> replaced) {
        List<Entry> out = new ArrayList<>(entries.size() + 1);
        for (Entry e : entries) {
            if (e.info().throughOffset() == entry.info().throughOffset()) {
                replaced.add(e);
            } else {
                out.add(e);
            }
        }
        out.add(entry);
        out.sort((a, b) -> Long.compare(a.info().throughOffset(), b.info().throughOffset()));
        return new CheckpointCatalog(out);
    }

    /**
     * The catalog without the entries below a through-offset, always keeping the latest.
     *
     * @param throughOffsetExclusive entries with a lower through-offset go
     * @param removed receives the removed entries
     * @return the new catalog (this when nothing goes)
     */
    CheckpointCatalog without(long throughOffsetExclusive, List<Entry> removed) {
        if (entries.isEmpty()) {
            return this;
        }
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (i < entries.size() - 1 && e.info().throughOffset() < throughOffsetExclusive) {
                removed.add(e);
            } else {
                out.add(e);
            }
        }
        return removed.isEmpty() ? this : new CheckpointCatalog(out);
    }

    /** @return the sum of the checkpoints' sizes, in bytes */
    long totalBytes() {
        long sum = 0;
        for (Entry e : entries) {
            sum += e.info().sizeBytes();
        }
        return sum;
    }

    /** @return every generation in the catalog */
    List<Long> generations() {
        List<Long> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            out.add(e.generation());
        }
        return Collections.unmodifiableList(out);
    }
}
