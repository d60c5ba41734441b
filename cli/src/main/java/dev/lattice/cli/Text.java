package dev.lattice.cli;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Locale;

/** Formatting of numbers, sizes, durations and values for the CLI's output. Stateless, thread-safe. */
public final class Text {

    private static final HexFormat HEX = HexFormat.of();

    private Text() {
    }

    /** @return {@code n} with thousands separators, e.g. {@code 12,345} */
    public static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** @return bytes in B, KiB, MiB or GiB with one decimal, or {@code n/a} for a negative (unknown) size */
    public static String bytes(long b) {
        if (b < 0) {
            return "n/a";
        }
        if (b < 1024) {
            return b + " B";
        }
        double v = b;
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** @return nanoseconds as milliseconds with a precision that suits the size, e.g. {@code 0.042 ms}, {@code 12 ms} */
    public static String millis(long nanos) {
        double ms = nanos / 1e6;
        if (ms < 1) {
            return String.format(Locale.ROOT, "%.3f ms", ms);
        }
        if (ms < 100) {
            return String.format(Locale.ROOT, "%.1f ms", ms);
        }
        return String.format(Locale.ROOT, "%,.0f ms", ms);
    }

    /** @return nanoseconds as seconds with one decimal, e.g. {@code 12.3 s} */
    public static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }

    /** @return a ratio with three significant decimals, or {@code n/a} when the divisor is 0 */
    public static String ratio(double numerator, double divisor) {
        if (divisor == 0) {
            return "n/a";
        }
        double r = numerator / divisor;
        return String.format(Locale.ROOT, r >= 100 ? "%,.0f" : r >= 10 ? "%.1f" : "%.3f", r);
    }

    /** @return a rate per second, e.g. {@code 12,345/s} */
    public static String rate(long count, long nanos) {
        return nanos <= 0 ? "n/a" : String.format(Locale.ROOT, "%,.0f/s", count * 1e9 / nanos);
    }

    /**
     * Renders a value for the terminal: as text when it is valid UTF-8 without control characters (tabs excepted),
     * else as {@code 0x} followed by lower-case hex.
     *
     * @param value the bytes
     * @param forceHex always render hex
     * @return the rendering
     */
    static String value(byte[] value, boolean forceHex) {
        if (!forceHex) {
            try {
                String s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(value)).toString();
                if (s.codePoints().noneMatch(c -> Character.isISOControl(c) && c != '\t')) {
                    return s;
                }
            } catch (CharacterCodingException notText) {
                // fall through to hex
            }
        }
        return "0x" + HEX.formatHex(value);
    }

    /**
     * Parses a value given on the command line.
     *
     * @param text the argument
     * @param hex true to read it as hex digits (an optional {@code 0x} prefix is allowed)
     * @return the bytes
     * @throws CliException (usage) if {@code hex} and the text is not an even number of hex digits
     */
    static byte[] parseValue(String text, boolean hex) {
        if (!hex) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        String digits = text.startsWith("0x") || text.startsWith("0X") ? text.substring(2) : text;
        try {
            return HEX.parseHex(digits);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("value is not hex (an even number of 0-9a-f digits): '" + text + "'");
        }
    }
}
