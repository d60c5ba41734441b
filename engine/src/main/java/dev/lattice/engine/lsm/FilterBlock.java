package dev.lattice.engine.lsm;

import java.nio.ByteBuffer;

/**
 * A run's filter block: which {@link KeyFilter} a run format version holds, and its encoding. Formats 1 and 2 hold a
 * standard {@link BloomFilter} ({@code k:byte words:varint word:int64 * words}); format 3 a
 * {@link BlockedBloomFilter} ({@code kind:byte k:byte words:varint word:int64 * words}). The footer's version decides;
 * the kind byte of format 3 is checked, not trusted. Stateless; thread-safe.
 */
final class FilterBlock {

    private FilterBlock() {
    }

    /** Builds the filter a run of {@code formatVersion} holds. */
    static KeyFilter build(int formatVersion, long[] hashes, int count, int bitsPerKey) {
        return formatVersion >= RunFormat.VERSION_3 ? BlockedBloomFilter.build(hashes, count, bitsPerKey)
                : BloomFilter.build(hashes, count, bitsPerKey);
    }

    /** Encodes a filter as its run's filter block payload. */
    static void encode(KeyFilter f, RunFormat.ByteSink out) {
        if (f instanceof BlockedBloomFilter b) {
            b.encode(out);
        } else {
            ((BloomFilter) f).encode(out);
        }
    }

    /**
     * Decodes the filter block payload of a run of {@code formatVersion}.
     *
     * @throws IllegalStateException if it cannot be decoded
     */
    static KeyFilter decode(int formatVersion, ByteBuffer in) {
        return formatVersion >= RunFormat.VERSION_3 ? BlockedBloomFilter.decode(in) : BloomFilter.decode(in);
    }
}
