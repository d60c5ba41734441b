package dev.lattice.engine.lsm;

/**
 * A run's key filter: answers whether a key may be in the run, so a get of an absent key skips the run without
 * reading a block. No false negatives: every key the filter was built from is answered {@code true}; an absent key
 * is answered {@code true} with a small probability (the false-positive rate). Which implementation a run holds is
 * fixed by its format version ({@link FilterBlock}): {@link BloomFilter} in formats 1 and 2,
 * {@link BlockedBloomFilter} in format 3.
 *
 * <p>Both take the same 64-bit key hash, {@link BloomFilter#hash(String)}. Implementations are immutable once built
 * or decoded, then thread-safe.
 */
public sealed interface KeyFilter permits BloomFilter, BlockedBloomFilter {

    /**
     * Whether the key may be in the run.
     *
     * @param keyHash {@link BloomFilter#hash(String)} of the key
     * @return false when the key is certainly absent
     */
    boolean mightContain(long keyHash);

    /**
     * The filter's size in memory.
     *
     * @return bytes of its bit array
     */
    long sizeBytes();
}
