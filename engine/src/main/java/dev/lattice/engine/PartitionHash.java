package dev.lattice.engine;

/**
 * Maps a key to a partition of a tree. The version is chosen when a tree is created and stored in the catalog, so a
 * tree keeps its hash for life (data written under one hash is never looked up under another). Both versions read
 * only the key's UTF-16 code units through formulas fixed here, so they are stable across JVMs and releases.
 * Stateless and thread-safe.
 *
 * <ul>
 *   <li>{@link #V1}: {@link String#hashCode()} with a short mix, modulo the count. Keys that differ only in their
 *       last characters often land together (the polynomial hash moves by small steps), see docs/engine.md.</li>
 *   <li>{@link #V2} (new trees): 64-bit FNV-1a over the code units, a full 64-bit avalanche finaliser, then a
 *       multiply-shift range reduction, so every character of the key affects every bit of the partition.</li>
 * </ul>
 */
enum PartitionHash {
    /** The hash of trees created before hash versions existed. */
    V1(1) {
        @Override
        int partition(String key, int partitions) {
            int h = key.hashCode();
            h ^= (h >>> 16);
            h *= 0x9E3779B1;
            h ^= (h >>> 15);
            return Math.floorMod(h, partitions);
        }
    },
    /** The hash of new trees. */
    V2(2) {
        @Override
        int partition(String key, int partitions) {
            long h = 0xcbf29ce484222325L;
            for (int i = 0; i < key.length(); i++) {
                h ^= key.charAt(i);
                h *= 0x100000001b3L;
            }
            h ^= h >>> 33;
            h *= 0xff51afd7ed558ccdL;
            h ^= h >>> 33;
            h *= 0xc4ceb9fe1a85ec53L;
            h ^= h >>> 33;
            return (int) (((h >>> 32) * partitions) >>> 32);
        }
    };

    /** The version new trees get. */
    static final PartitionHash LATEST = V2;

    private final int version;

    PartitionHash(int version) {
        this.version = version;
    }

    /** @return the version number stored in the catalog */
    int version() {
        return version;
    }

    /**
     * The partition of a key.
     *
     * @param key the key
     * @param partitions the tree's partition count, {@code >= 1}
     * @return the partition, {@code 0..partitions-1}
     */
    abstract int partition(String key, int partitions);

    /**
     * The hash of a version number.
     *
     * @param version 1 or 2
     * @return the hash
     * @throws IllegalArgumentException for an unknown version (names the known ones)
     */
    static PartitionHash of(int version) {
        for (PartitionHash h : values()) {
            if (h.version == version) {
                return h;
            }
        }
        throw new IllegalArgumentException("unknown partition hash version " + version + "; known versions are 1 and 2");
    }
}
