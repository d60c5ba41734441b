package dev.lattice.conformance;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * Helpers for provider and engine tests: deterministic payloads and batches, a reader that pages through a whole
 * log and checks that what it gets is ascending and dense, and byte-exact comparison of entries.
 *
 * <p>Every generator is a pure function of its arguments (same seed, same bytes), so a failing test can be rerun
 * exactly. Stateless and thread-safe.
 */
public final class WalTestSupport {

    /** Entries per page {@link #readAll(WalStorageProvider, LogId)} asks for. */
    public static final int READ_ALL_PAGE_ENTRIES = 1_000;
    /** Payload bytes per page {@link #readAll(WalStorageProvider, LogId)} asks for: 4 MiB. */
    public static final long READ_ALL_PAGE_BYTES = 4L << 20;

    private WalTestSupport() {
    }

    /**
     * A deterministic payload for one offset: {@code size} pseudo-random bytes derived from {@code seed} and
     * {@code offset}, so two different offsets (or seeds) almost surely differ.
     *
     * @param seed the generator seed (e.g. one per test or per writer)
     * @param offset the entry's offset
     * @param size the length in bytes, {@code >= 0}
     * @return a new array
     * @throws IllegalArgumentException if {@code size < 0}
     */
    public static byte[] payload(long seed, long offset, int size) {
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        return randomBytes(seed * 0x9E3779B97F4A7C15L + offset, size);
    }

    /**
     * Deterministic payloads for {@code count} consecutive offsets from {@code firstOffset}.
     *
     * @param seed the generator seed
     * @param firstOffset the first entry's offset
     * @param count the number of payloads, {@code >= 0}
     * @param size the length of each, in bytes, {@code >= 0}
     * @return a new mutable list of new arrays
     * @throws IllegalArgumentException if {@code count < 0} or {@code size < 0}
     */
    public static List<byte[]> payloads(long seed, long firstOffset, int count, int size) {
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0, got " + count);
        }
        List<byte[]> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(payload(seed, firstOffset + i, size));
        }
        return out;
    }

    /**
     * A batch of {@code count} deterministic payloads of {@code size} bytes at {@code firstOffset}, with a batch id
     * derived from the same arguments (so rebuilding it gives an equal retry of the same batch).
     *
     * @param seed the generator seed
     * @param firstOffset the first offset, {@code >= 0}
     * @param count the number of entries, {@code >= 1}
     * @param size the payload length, in bytes, {@code >= 0}
     * @return the batch
     * @throws IllegalArgumentException if an argument is out of range
     */
    public static EncodedBatch batch(long seed, long firstOffset, int count, int size) {
        return EncodedBatch.of(firstOffset, batchId(seed, firstOffset, count, size),
                payloads(seed, firstOffset, count, size));
    }

    /**
     * A batch id that is a pure function of its arguments.
     *
     * @param parts any numbers identifying the batch
     * @return the id
     */
    public static BatchId batchId(long... parts) {
        SplittableRandom r = new SplittableRandom(Arrays.hashCode(parts) * 0xBF58476D1CE4E5B9L + parts.length);
        return new BatchId(r.nextLong(), r.nextLong());
    }

    /**
     * {@code size} pseudo-random bytes from a seed.
     *
     * @param seed the seed
     * @param size the length in bytes, {@code >= 0}
     * @return a new array
     * @throws IllegalArgumentException if {@code size < 0}
     */
    public static byte[] randomBytes(long seed, int size) {
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        byte[] b = new byte[size];
        SplittableRandom r = new SplittableRandom(seed);
        int i = 0;
        while (i + 8 <= size) {
            long v = r.nextLong();
            for (int k = 0; k < 8; k++) {
                b[i++] = (byte) (v >>> (8 * k));
            }
        }
        while (i < size) {
            b[i++] = (byte) r.nextInt();
        }
        return b;
    }

    /**
     * Reads a whole log from its start in pages of {@value #READ_ALL_PAGE_ENTRIES} entries / 4 MiB.
     *
     * @param provider the provider
     * @param log the log
     * @return every committed entry above the trim watermark, ascending
     * @throws AssertionError if the provider returns entries that are not ascending and dense, or at or below the
     *     bound it was asked for
     */
    public static List<LogEntry> readAll(WalStorageProvider provider, LogId log) {
        return readAll(provider, log, -1, READ_ALL_PAGE_ENTRIES, READ_ALL_PAGE_BYTES);
    }

    /**
     * Pages through a log from a bound, passing the last offset of each page as the next page's bound, until a page
     * comes back empty. Checks as it goes that every page's entries lie above the bound, within
     * {@code pageEntries}, and are consecutive, and that the pages join without gaps.
     *
     * @param provider the provider
     * @param log the log
     * @param fromExclusive the strict lower bound of the first page, {@code >= -1}
     * @param pageEntries entries per page, {@code >= 1}
     * @param pageBytes payload bytes per page, {@code >= 1}
     * @return the entries read, ascending
     * @throws AssertionError if a page breaks the read contract
     */
    public static List<LogEntry> readAll(WalStorageProvider provider, LogId log, long fromExclusive,
                                         int pageEntries, long pageBytes) {
        Objects.requireNonNull(provider, "provider");
        List<LogEntry> out = new ArrayList<>();
        long from = fromExclusive;
        while (true) {
            ReadPage page = provider.read(log, from, pageEntries, pageBytes);
            if (page.isEmpty()) {
                return out;
            }
            checkPage(page, from, pageEntries, pageBytes);
            LogEntry first = page.entries().get(0);
            if (!out.isEmpty() && first.offset() != from + 1) {
                throw new AssertionError("read of " + log + " after offset " + from + " returned offset "
                        + first.offset() + ": pages of a dense log must join without gaps");
            }
            out.addAll(page.entries());
            from = page.nextFromExclusive(from);
        }
    }

    /**
     * Checks one page against the read contract: entries above the bound, ascending and consecutive, at most
     * {@code maxEntries}, at most {@code maxBytes} payload bytes unless it is a single entry, and no entry above
     * the page's committed tail.
     *
     * @param page the page
     * @param fromExclusive the bound it was read with
     * @param maxEntries the entry bound it was read with
     * @param maxBytes the byte bound it was read with
     * @throws AssertionError when a rule is broken
     */
    public static void checkPage(ReadPage page, long fromExclusive, int maxEntries, long maxBytes) {
        List<LogEntry> es = page.entries();
        if (es.size() > maxEntries) {
            throw new AssertionError("page has " + es.size() + " entries, more than maxEntries " + maxEntries);
        }
        if (es.size() > 1 && page.payloadBytes() > maxBytes) {
            throw new AssertionError("page has " + es.size() + " entries of " + page.payloadBytes()
                    + " payload bytes, more than maxBytes " + maxBytes);
        }
        long prev = -2;
        for (LogEntry e : es) {
            if (e.offset() <= fromExclusive) {
                throw new AssertionError("read after " + fromExclusive + " returned offset " + e.offset());
            }
            if (prev != -2 && e.offset() != prev + 1) {
                throw new AssertionError("page is not dense: offset " + e.offset() + " follows " + prev);
            }
            if (e.offset() > page.committedTail()) {
                throw new AssertionError("page returned offset " + e.offset() + " above its committed tail "
                        + page.committedTail());
            }
            prev = e.offset();
        }
    }

    /**
     * The entries a list of batches holds, in the order given, as a reader should see them after they were
     * committed.
     *
     * @param batches the batches
     * @return their entries with offsets
     */
    public static List<LogEntry> entriesOf(EncodedBatch... batches) {
        return entriesOf(Arrays.asList(batches));
    }

    /**
     * The entries a list of batches holds, in the order given.
     *
     * @param batches the batches
     * @return their entries with offsets
     */
    public static List<LogEntry> entriesOf(List<EncodedBatch> batches) {
        List<LogEntry> out = new ArrayList<>();
        for (EncodedBatch b : batches) {
            long off = b.firstOffset();
            for (byte[] p : b.entries()) {
                out.add(new LogEntry(off++, p));
            }
        }
        return out;
    }

    /**
     * Compares two entry lists offset by offset and byte by byte.
     *
     * @param actual what was read
     * @param expected what should have been read
     * @throws AssertionError naming the first difference
     */
    public static void assertSameEntries(List<LogEntry> actual, List<LogEntry> expected) {
        int n = Math.min(actual.size(), expected.size());
        for (int i = 0; i < n; i++) {
            LogEntry a = actual.get(i);
            LogEntry e = expected.get(i);
            if (a.offset() != e.offset()) {
                throw new AssertionError("entry #" + i + ": offset " + a.offset() + ", expected " + e.offset());
            }
            if (!Arrays.equals(a.payload(), e.payload())) {
                throw new AssertionError("entry at offset " + a.offset() + ": payload of " + a.payload().length
                        + " bytes differs from the " + e.payload().length + " bytes appended (first difference at byte "
                        + Arrays.mismatch(a.payload(), e.payload()) + ")");
            }
        }
        if (actual.size() != expected.size()) {
            throw new AssertionError("read " + actual.size() + " entries, expected " + expected.size()
                    + (actual.size() > n ? "; first extra at offset " + actual.get(n).offset()
                    : "; first missing at offset " + expected.get(n).offset()));
        }
    }

    /**
     * Reads a stream to its end and closes it.
     *
     * @param in the stream
     * @return its bytes
     * @throws UncheckedIOException if reading fails
     */
    public static byte[] readFully(InputStream in) {
        try (InputStream s = in) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            s.transferTo(out);
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A stream of {@code size} pseudo-random bytes generated on the fly (nothing held in memory), equal to
     * {@link #randomBytes(long, int) randomBytes(seed, size)} for sizes that fit an array.
     *
     * @param seed the seed
     * @param size the length in bytes, {@code >= 0}
     * @return a new stream
     * @throws IllegalArgumentException if {@code size < 0}
     */
    public static InputStream randomStream(long seed, long size) {
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        return new InputStream() {
            private final SplittableRandom r = new SplittableRandom(seed);
            private long pos;
            private long word;

            @Override
            public int read() {
                if (pos >= size) {
                    return -1;
                }
                if ((pos & 7) == 0) {
                    word = (size - pos >= 8) ? r.nextLong() : 0;
                }
                int b;
                if (size - (pos & ~7L) >= 8) {
                    b = (int) (word >>> (8 * (pos & 7))) & 0xFF;
                } else {
                    b = r.nextInt() & 0xFF;
                }
                pos++;
                return b;
            }

            @Override
            public int read(byte[] buf, int off, int len) {
                Objects.checkFromIndexSize(off, len, buf.length);
                if (len == 0) {
                    return 0;
                }
                if (pos >= size) {
                    return -1;
                }
                int n = (int) Math.min(len, size - pos);
                for (int i = 0; i < n; i++) {
                    buf[off + i] = (byte) read();
                }
                return n;
            }
        };
    }
}
