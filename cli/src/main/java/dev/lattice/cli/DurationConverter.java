package dev.lattice.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a duration option: a number with an optional unit {@code ms}, {@code s} (the default), {@code m}, e.g.
 * {@code 15}, {@code 15s}, {@code 1500ms}, {@code 0.5m}, or ISO-8601 like {@code PT15S}. Must be positive.
 */
public final class DurationConverter implements ITypeConverter<Duration> {

    private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m)?");

    /** Creates the converter. */
    public DurationConverter() {
    }

    /**
     * @param value the option's text
     * @return the duration, positive
     * @throws TypeConversionException if the text is not a positive duration (picocli reports it as a usage error)
     */
    @Override
    public Duration convert(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        Duration d;
        Matcher m = SIMPLE.matcher(v);
        if (m.matches()) {
            double n = Double.parseDouble(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            double millis = switch (unit) {
                case "ms" -> n;
                case "m" -> n * 60_000;
                default -> n * 1000;
            };
            d = Duration.ofNanos(Math.round(millis * 1_000_000));
        } else {
            try {
                d = Duration.parse(value.trim().toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                throw new TypeConversionException("'" + value + "' is not a duration (e.g. 15s, 1500ms, 2m, PT15S)");
            }
        }
        if (d.isNegative() || d.isZero()) {
            throw new TypeConversionException("duration must be positive, got '" + value + "'");
        }
        return d;
    }
}
