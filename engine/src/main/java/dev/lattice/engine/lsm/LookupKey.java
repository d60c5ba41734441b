package dev.lattice.engine.lsm;

import java.nio.charset.StandardCharsets;

/**
 * A key being looked up in the runs of a partition, encoded once: its UTF-8 bytes and its Bloom filter hash are
 * computed on first use and shared by every run the lookup visits (a get may probe a dozen runs).
 *
 * <p>Not thread-safe: one per lookup.
 */
public final class LookupKey {

    private final String key;
    private byte[] utf8;
    private long hash;
    private boolean hashed;

    /**
     * Wraps a key.
     *
     * @param key the key, non-null
     */
    public LookupKey(String key) {
        this.key = key;
    }

    /**
     * The key.
     *
     * @return the key as given
     */
    public String key() {
        return key;
    }

    /**
     * The key's UTF-8 bytes (the array is shared: do not change it).
     *
     * @return the encoded key
     */
    public byte[] utf8() {
        if (utf8 == null) {
            utf8 = key.getBytes(StandardCharsets.UTF_8);
        }
        return utf8;
    }

    /**
     * The key's hash for the runs' Bloom filters.
     *
     * @return {@link BloomFilter#hash(String)} of the key
     */
    public long bloomHash() {
        if (!hashed) {
            hash = BloomFilter.hash(utf8());
            hashed = true;
        }
        return hash;
    }
}
