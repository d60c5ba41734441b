package dev.lattice.engine.lsm;

/**
 * Compares UTF-8 encoded keys in the engine's key order, which is {@link String#compareTo} (UTF-16 code units), so
 * a run's block index can hold its keys as bytes. Byte order of UTF-8 is code point order; it differs from UTF-16
 * order only between a supplementary character (lead byte {@code 0xF0}-{@code 0xF4}, a surrogate pair in UTF-16,
 * which sorts below {@code U+E000}) and a character of {@code U+E000}-{@code U+FFFF} (lead byte {@code 0xEE} or
 * {@code 0xEF}). Equal leading bytes decode to equal characters, so the first differing bytes are either both lead
 * bytes or both inside characters with one lead byte; only the first case needs the correction.
 *
 * <p>Stateless, thread-safe.
 */
final class KeyOrder {

    private KeyOrder() {
    }

    /**
     * Compares {@code a[aFrom, aTo)} with {@code b[bFrom, bTo)}, both well-formed UTF-8.
     *
     * @return negative, zero or positive as the first key sorts before, equal to or after the second in
     *     {@link String#compareTo} order
     */
    static int compare(byte[] a, int aFrom, int aTo, byte[] b, int bFrom, int bTo) {
        int n = Math.min(aTo - aFrom, bTo - bFrom);
        int i = java.util.Arrays.mismatch(a, aFrom, aFrom + n, b, bFrom, bFrom + n);
        if (i < 0) {
            return (aTo - aFrom) - (bTo - bFrom);
        }
        int x = a[aFrom + i] & 0xFF;
        int y = b[bFrom + i] & 0xFF;
        if (x >= 0xF0 && (y == 0xEE || y == 0xEF)) {
            return -1;
        }
        if (y >= 0xF0 && (x == 0xEE || x == 0xEF)) {
            return 1;
        }
        return x - y;
    }
}
