package dev.lattice.spi.support;

import dev.lattice.spi.DurabilityLevel;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Typed access to a provider's options: the URI's query parameters merged with an explicit map (the map wins).
 * Every accessor names the option and the expected form when a value is malformed, so users get a clear error.
 *
 * <p>Immutable and thread-safe.
 */
public final class ProviderOptions {

    private final String scheme;
    private final Map<String, String> values;

    private ProviderOptions(String scheme, Map<String, String> values) {
        this.scheme = scheme;
        this.values = Collections.unmodifiableMap(values);
    }

    /**
     * Merges a URI's query options with explicit options.
     *
     * @param uri the provider URI; its query ({@code k=v&k2=v2}, URL-encoded) is read, if any
     * @param options explicit options, winning over query options of the same name
     * @return the merged options
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a query parameter has no name
     */
    public static ProviderOptions of(URI uri, Map<String, String> options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        Map<String, String> merged = new LinkedHashMap<>();
        String query = uri.getRawQuery();
        if (query == null && uri.isOpaque()) {
            String ssp = uri.getRawSchemeSpecificPart();
            int q = ssp.indexOf('?');
            query = q >= 0 ? ssp.substring(q + 1) : null;
        }
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String k = decode(eq >= 0 ? pair.substring(0, eq) : pair);
                String v = eq >= 0 ? decode(pair.substring(eq + 1)) : "";
                if (k.isEmpty()) {
                    throw new IllegalArgumentException("URI " + uri.getScheme() + ": has a query parameter with no name");
                }
                merged.put(k, v);
            }
        }
        merged.putAll(options);
        return new ProviderOptions(uri.getScheme(), merged);
    }

    /**
     * What a factory's {@code open} starts with: checks the URI's scheme, merges its query options with the explicit
     * ones and rejects option names the provider does not know.
     *
     * @param scheme the scheme the factory handles (compared case-insensitively)
     * @param uri the provider URI
     * @param options explicit options, winning over query options of the same name
     * @param known the option names the provider reads
     * @return the merged options
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the scheme differs, a query parameter has no name, or an option is unknown
     *     (the message lists the known ones)
     */
    public static ProviderOptions forScheme(String scheme, URI uri, Map<String, String> options, Set<String> known) {
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(known, "known");
        if (!scheme.equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("URI scheme must be '" + scheme + "', got '" + uri.getScheme() + "'");
        }
        return of(uri, options).requireKnown(known);
    }

    /**
     * Options given as a map only (e.g. a provider built from a client or data source handed in, with no URI).
     *
     * @param scheme the provider's scheme, for error messages
     * @param options the options
     * @return the options
     * @throws NullPointerException if an argument is null
     */
    public static ProviderOptions of(String scheme, Map<String, String> options) {
        Objects.requireNonNull(scheme, "scheme");
        return new ProviderOptions(scheme, new LinkedHashMap<>(Objects.requireNonNull(options, "options")));
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /**
     * Rejects option names this provider does not know, so that a typo does not pass silently.
     *
     * @param known the names the provider reads
     * @return this, for chaining
     * @throws IllegalArgumentException naming the unknown options and the known ones
     */
    public ProviderOptions requireKnown(Set<String> known) {
        Set<String> unknown = new TreeSet<>(values.keySet());
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            StringBuilder hints = new StringBuilder();
            for (String u : unknown) {
                String hint = Suggestions.didYouMean(u, known);
                if (!hint.isEmpty()) {
                    hints.append(unknown.size() == 1 ? hint.substring(2) : "for '" + u + "' " + hint.substring(2))
                            .append(' ');
                }
            }
            throw new IllegalArgumentException("unknown option(s) " + unknown + " for provider scheme '" + scheme
                    + "'; " + hints + "known options: " + new TreeSet<>(known));
        }
        return this;
    }

    /**
     * Reads an option as given.
     *
     * @param name the option name
     * @return the raw value, or null when absent
     */
    public String get(String name) {
        return values.get(name);
    }

    /**
     * Reads an option, or a default when it is absent.
     *
     * @param name the option name
     * @param defaultValue returned when absent
     * @return the value or the default
     */
    public String get(String name, String defaultValue) {
        return values.getOrDefault(name, defaultValue);
    }

    /**
     * Reads an option that must be given.
     *
     * @param name the option name
     * @return the value
     * @throws IllegalArgumentException if the option is absent or empty
     */
    public String require(String name) {
        String v = values.get(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("option '" + name + "' is required for provider scheme '" + scheme + "'");
        }
        return v;
    }

    /**
     * An integer option within bounds.
     *
     * @param name the option name
     * @param defaultValue returned when absent
     * @param min lowest allowed value, inclusive
     * @param max highest allowed value, inclusive
     * @return the value
     * @throws IllegalArgumentException if it is not an integer or out of bounds
     */
    public long getLong(String name, long defaultValue, long min, long max) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        long parsed;
        try {
            parsed = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option '" + name + "' must be an integer, got '" + v + "'", e);
        }
        if (parsed < min || parsed > max) {
            throw new IllegalArgumentException("option '" + name + "' must be in " + min + ".." + max + ", got " + parsed);
        }
        return parsed;
    }

    /**
     * A decimal option within bounds.
     *
     * @param name the option name
     * @param defaultValue returned when absent
     * @param min lowest allowed value, inclusive
     * @param max highest allowed value, inclusive
     * @return the value
     * @throws IllegalArgumentException if it is not a finite number or out of bounds
     */
    public double getDouble(String name, double defaultValue, double min, double max) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        double parsed;
        try {
            parsed = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option '" + name + "' must be a number, got '" + v + "'", e);
        }
        if (!Double.isFinite(parsed) || parsed < min || parsed > max) {
            throw new IllegalArgumentException("option '" + name + "' must be in " + min + ".." + max + ", got " + v);
        }
        return parsed;
    }

    /**
     * Reads a boolean option ({@code true} or {@code false}), or a default when it is absent.
     *
     * @param name the option name
     * @param defaultValue returned when absent
     * @return the value
     * @throws IllegalArgumentException if it is not {@code true} or {@code false}
     */
    public boolean getBoolean(String name, boolean defaultValue) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new IllegalArgumentException("option '" + name + "' must be true or false, got '" + v + "'");
        }
    }

    /**
     * An enum option, case-insensitive, with '-' accepted for '_'.
     *
     * @param name the option name
     * @param type the enum type
     * @param defaultValue returned when absent
     * @param <E> the enum type
     * @return the value
     * @throws IllegalArgumentException if it names no constant (the message lists them)
     */
    public <E extends Enum<E>> E getEnum(String name, Class<E> type, E defaultValue) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        String norm = v.trim().replace('-', '_').toUpperCase(Locale.ROOT);
        for (E c : type.getEnumConstants()) {
            if (c.name().equals(norm)) {
                return c;
            }
        }
        throw new IllegalArgumentException("option '" + name + "' must be one of "
                + java.util.Arrays.toString(type.getEnumConstants()).toLowerCase(Locale.ROOT) + ", got '" + v + "'");
    }

    /**
     * A duration option in ISO-8601 ({@code PT5S}) or as a number with a unit suffix {@code ms}, {@code s}, {@code m}.
     *
     * @param name the option name
     * @param defaultValue returned when absent
     * @return the value, not negative
     * @throws IllegalArgumentException if it cannot be parsed or is negative
     */
    public Duration getDuration(String name, Duration defaultValue) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        String t = v.trim().toLowerCase(Locale.ROOT);
        try {
            Duration d;
            if (t.startsWith("p")) {
                d = Duration.parse(t.toUpperCase(Locale.ROOT));
            } else if (t.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            } else if (t.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
            } else if (t.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
            } else {
                throw new NumberFormatException("no unit");
            }
            if (d.isNegative()) {
                throw new NumberFormatException("negative");
            }
            return d;
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("option '" + name
                    + "' must be a duration like 500ms, 5s, 2m or PT5S, got '" + v + "'", e);
        }
    }

    /** {@return every option, unmodifiable; may contain secrets, never log it} */
    public Map<String, String> asMap() {
        return values;
    }

    /** @return the option names only (values are left out: they may be secrets) */
    @Override
    public String toString() {
        return "ProviderOptions" + new TreeSet<>(values.keySet());
    }
}
