package dev.lattice.engine;

import java.util.Objects;

/**
 * The key rule every read and write of a tree checks: a key is a non-empty string of at most
 * {@link LatticeConfig.Builder#maxKeyBytes} bytes in UTF-8. Reads use {@link #check} (no allocation); writes also
 * encode the key (and refuse unpaired surrogates, which UTF-8 cannot hold).
 *
 * <p>Stateless and thread-safe.
 */
public final class KeyLimit {

    private KeyLimit() {
    }

    /**
     * Checks a key against the limit without allocating: a key of at most {@code maxKeyBytes / 3} characters is
     * within it whatever its characters; a longer one has its UTF-8 length counted
     * (one pass over its characters).
     *
     * @param key the key
     * @param maxKeyBytes the limit, bytes of UTF-8
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code key} is empty or longer than {@code maxKeyBytes} bytes in UTF-8;
     *     the message names its length and the limit
     */
    public static void check(String key, int maxKeyBytes) {
        Objects.requireNonNull(key, "key");
        int chars = key.length();
        if (chars == 0) {
            throw new IllegalArgumentException("key must not be empty");
        }
        if ((long) chars * 3 <= maxKeyBytes) {
            return;
        }
        long bytes = utf8Length(key);
        if (bytes > maxKeyBytes) {
            throw tooLong(bytes, maxKeyBytes);
        }
    }

    /**
     * The error for a key over the limit.
     *
     * @param bytes the key's length in UTF-8 bytes
     * @param maxKeyBytes the limit, bytes
     * @return the exception to throw
     */
    static IllegalArgumentException tooLong(long bytes, int maxKeyBytes) {
        return new IllegalArgumentException("key is " + bytes + " UTF-8 bytes, more than the limit of " + maxKeyBytes
                + " bytes (LatticeConfig maxKeyBytes)");
    }

    /**
     * The length of {@code s} in UTF-8, as {@link String#getBytes} with UTF-8 encodes it (an unpaired surrogate
     * becomes the one-byte replacement {@code '?'}).
     *
     * @param s the string
     * @return its length in bytes
     */
    static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                n += 1;
            } else {
                n += 3;
            }
        }
        return n;
    }
}
