package dev.lattice.engine.lsm;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link KeyOrder} agrees with {@link String#compareTo} on UTF-8 bytes, above all where byte order and UTF-16 order
 * differ: supplementary characters against {@code U+E000}-{@code U+FFFF}.
 */
class KeyOrderTest {

    private static final int[] CODE_POINTS = {'a', 'b', 'z', 0x7F, 0xE9, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF,
        0x10000, 0x1F600, 0x10FFFF};

    private static String random(Random r) {
        StringBuilder b = new StringBuilder();
        int n = r.nextInt(5);
        for (int i = 0; i < n; i++) {
            b.appendCodePoint(CODE_POINTS[r.nextInt(CODE_POINTS.length)]);
        }
        return b.toString();
    }

    private static int compare(String x, String y) {
        byte[] a = x.getBytes(StandardCharsets.UTF_8);
        byte[] b = y.getBytes(StandardCharsets.UTF_8);
        return KeyOrder.compare(a, 0, a.length, b, 0, b.length);
    }

    @Test
    void agreesWithStringOrderOnRandomKeys() {
        Random r = new Random(42);
        for (int i = 0; i < 200_000; i++) {
            String x = random(r);
            String y = random(r);
            assertThat(Integer.signum(compare(x, y))).as("%s vs %s", x, y).isEqualTo(Integer.signum(x.compareTo(y)));
        }
    }

    @Test
    void supplementaryCharactersSortBelowTheTopOfTheBasicPlaneAsInUtf16() {
        String emoji = new String(Character.toChars(0x1F600));
        assertThat(compare(emoji, "\uE000")).isNegative();
        assertThat(compare("\uFFFF", emoji)).isPositive();
        assertThat(compare("k" + emoji, "k\uFFFD")).isNegative();
        assertThat(compare(emoji, "\uD7FF")).isPositive();
        assertThat(compare("abc", "abcd")).isNegative();
        assertThat(compare("abc", "abc")).isZero();
    }

    @Test
    void comparesSubranges() {
        byte[] a = "xxabcyy".getBytes(StandardCharsets.UTF_8);
        byte[] b = "abd".getBytes(StandardCharsets.UTF_8);
        assertThat(KeyOrder.compare(a, 2, 5, b, 0, 3)).isNegative();
        assertThat(KeyOrder.compare(a, 2, 5, b, 0, 2)).isPositive();
        assertThat(KeyOrder.compare(a, 2, 4, b, 0, 2)).isZero();
    }
}
