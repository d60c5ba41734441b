package dev.lattice.engine;

import java.util.Objects;

/**
 * One key of a tree as returned by a scan.
 *
 * @param key the key
 * @param value the value bytes (shared with the engine's state: do not modify)
 * @param version the version of the mutation that wrote it, {@code >= 1}
 */
public record TreeEntry(String key, byte[] value, long version) {

    /**
     * Creates an entry.
     *
     * @param key the key
     * @param value the value bytes (shared with the engine's state: do not modify)
     * @param version the version of the mutation that wrote it, {@code >= 1}
     * @throws NullPointerException if {@code key} or {@code value} is null
     */
    public TreeEntry {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
    }

    @Override
    public String toString() {
        return "TreeEntry[" + key + ", " + value.length + " bytes, v" + version + "]";
    }
}
