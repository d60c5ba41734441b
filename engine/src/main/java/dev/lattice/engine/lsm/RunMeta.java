package dev.lattice.engine.lsm;

/**
 * A run's statistics, stored in its meta block and kept in the manifest: what the engine needs to skip a run by key
 * range and to plan compactions without reading it.
 *
 * @param entries entries (values and tombstones, every version)
 * @param tombstones tombstones among them
 * @param minVersion smallest version, or -1 for an empty run
 * @param maxVersion largest version, or -1 for an empty run
 * @param firstKey smallest key, or null for an empty run
 * @param lastKey largest key, or null for an empty run
 * @param userBytes the keys' UTF-8 bytes plus the values' bytes, before encoding
 * @param blocks data blocks
 * @param ranges the run's range tombstones (run format 2), in order of their first key; the key range
 *     {@code firstKey..lastKey} includes their bounds
 */
public record RunMeta(long entries, long tombstones, long minVersion, long maxVersion, String firstKey,
        String lastKey, long userBytes, int blocks, java.util.List<RangeTombstone> ranges) {

    /**
     * Creates statistics.
     *
     * @param entries entries (values and tombstones, every version)
     * @param tombstones tombstones among them
     * @param minVersion smallest version, or -1 for an empty run
     * @param maxVersion largest version, or -1 for an empty run
     * @param firstKey smallest key, or null for an empty run
     * @param lastKey largest key, or null for an empty run
     * @param userBytes the keys' UTF-8 bytes plus the values' bytes, before encoding
     * @param blocks data blocks
     * @param ranges the run's range tombstones (null is taken as none)
     */
    public RunMeta {
        ranges = ranges == null ? java.util.List.of() : java.util.List.copyOf(ranges);
    }

    /**
     * Creates statistics of a run without range tombstones.
     *
     * @param entries entries (values and tombstones, every version)
     * @param tombstones tombstones among them
     * @param minVersion smallest version, or -1 for an empty run
     * @param maxVersion largest version, or -1 for an empty run
     * @param firstKey smallest key, or null for an empty run
     * @param lastKey largest key, or null for an empty run
     * @param userBytes the keys' UTF-8 bytes plus the values' bytes, before encoding
     * @param blocks data blocks
     */
    public RunMeta(long entries, long tombstones, long minVersion, long maxVersion, String firstKey, String lastKey,
                   long userBytes, int blocks) {
        this(entries, tombstones, minVersion, maxVersion, firstKey, lastKey, userBytes, blocks, java.util.List.of());
    }

    /**
     * Whether the run's key range overlaps {@code [from, to)}.
     *
     * @param from first key, inclusive, or null for unbounded
     * @param to last key, exclusive, or null for unbounded
     * @return false when no key of the run can be in the range
     */
    public boolean overlaps(String from, String to) {
        if (firstKey == null) {
            return false;
        }
        return (to == null || firstKey.compareTo(to) < 0) && (from == null || lastKey.compareTo(from) >= 0);
    }
}
