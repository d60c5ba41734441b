package dev.lattice.engine.lsm;

import java.util.Objects;

/**
 * A range delete kept in a run (run format 2): it hides every entry of the partition with a key in
 * {@code [from, to)} and a version lower than its own, in this run and in every older layer, until compaction drops
 * the entries it covers and, in the bottommost level, the range delete itself.
 *
 * @param from first key covered, inclusive
 * @param to end of the range, exclusive ({@code from < to})
 * @param version the range delete's version; entries with a smaller version are hidden
 */
public record RangeTombstone(String from, String to, long version) {

    /**
     * Creates a range tombstone.
     *
     * @param from first key covered, inclusive
     * @param to end of the range, exclusive
     * @param version the range delete's version, non-negative
     * @throws NullPointerException if a bound is null
     * @throws IllegalArgumentException if {@code from >= to} or the version is negative
     */
    public RangeTombstone {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (from.compareTo(to) >= 0) {
            throw new IllegalArgumentException("range [" + from + ", " + to + ") is empty");
        }
        if (version < 0) {
            throw new IllegalArgumentException("negative version " + version);
        }
    }

    /**
     * Whether the range holds a key.
     *
     * @param key the key
     * @return true when {@code from <= key < to}
     */
    public boolean contains(String key) {
        return key.compareTo(from) >= 0 && key.compareTo(to) < 0;
    }

    /**
     * Whether this range delete hides an entry.
     *
     * @param key the entry's key
     * @param entryVersion the entry's version
     * @return true when the key is in the range and the entry is older than the range delete
     */
    public boolean hides(String key, long entryVersion) {
        return entryVersion < version && contains(key);
    }

    /**
     * Whether the range overlaps {@code [lo, hi)}.
     *
     * @param lo first key, inclusive, or null for unbounded
     * @param hi last key, exclusive, or null for unbounded
     * @return false when no key of the range lies in {@code [lo, hi)}
     */
    public boolean overlaps(String lo, String hi) {
        return (hi == null || from.compareTo(hi) < 0) && (lo == null || to.compareTo(lo) > 0);
    }
}
