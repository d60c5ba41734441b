package dev.lattice.engine;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * The digest an atomic write's decision record keeps of the write's key set, so a retry under the same idempotency
 * key can be told from another write reusing it (docs/wal-format.md, decision records). Shared by the embedded
 * engine and the cluster's coordinator; not for applications.
 *
 * <p>Stateless, thread-safe.
 */
public final class KeySetDigest {

    private KeySetDigest() {
    }

    /**
     * The digest of a key set, independent of the items' order.
     *
     * @param items one string per operation naming its tree, key and kind (and a range's end), in any order
     * @return the first 8 bytes of the SHA-256 of the sorted items, each followed by a {@code 0x01} byte
     * @throws NullPointerException if {@code items} or one of them is null
     * @throws IllegalStateException if the JVM has no SHA-256
     */
    public static long of(List<String> items) {
        List<String> sorted = new ArrayList<>(items);
        sorted.sort(null);
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String item : sorted) {
                md.update(item.getBytes(StandardCharsets.UTF_8));
                md.update((byte) 1);
            }
            return ByteBuffer.wrap(md.digest()).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
