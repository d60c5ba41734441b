package dev.lattice.spi;

import java.util.List;
import java.util.Objects;

/**
 * The result of {@link WalStorageProvider#read(LogId, long, int, long)}: committed entries in ascending, dense
 * offset order.
 *
 * <p>Immutable (as far as payload arrays are left alone) and thread-safe.
 *
 * @param entries the entries, ascending and consecutive; empty when nothing committed lies after the bound
 * @param committedTail the log's committed tail when the page was read ({@code -1} for a log that never had a
 *     commit); the caller is at the end of the log once it has read through this offset
 */
public record ReadPage(List<LogEntry> entries, long committedTail) {

    /**
     * Creates a page.
     *
     * @param entries the entries, ascending and consecutive; empty when nothing committed lies after the bound
     * @param committedTail the log's committed tail when the page was read ({@code -1} for a log that never had a
     *     commit); the caller is at the end of the log once it has read through this offset
     * @throws NullPointerException if {@code entries} is null or holds a null
     */
    public ReadPage {
        entries = List.copyOf(Objects.requireNonNull(entries, "entries"));
    }

    /** {@return true when the page holds no entry} */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /**
     * The offset to pass as {@code fromExclusive} to read the next page.
     *
     * @param fromExclusive the bound this page was read with
     * @return the last entry's offset, or {@code fromExclusive} when the page is empty
     */
    public long nextFromExclusive(long fromExclusive) {
        return entries.isEmpty() ? fromExclusive : entries.get(entries.size() - 1).offset();
    }

    /** {@return the sum of the payload lengths, in bytes} */
    public long payloadBytes() {
        long sum = 0;
        for (LogEntry e : entries) {
            sum += e.payload().length;
        }
        return sum;
    }
}
