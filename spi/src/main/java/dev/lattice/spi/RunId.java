package dev.lattice.spi;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The name of one run within a log's run store: 1 to {@value #MAX_LENGTH} characters of {@code [A-Za-z0-9._-]},
 * chosen by the engine (unique per log: level, sequence and a random part). Providers may use it as part of a file
 * name, a row key or a blob name without escaping.
 *
 * @param value the name
 */
public record RunId(String value) implements Comparable<RunId> {

    /** Longest run name, in characters. */
    public static final int MAX_LENGTH = 64;

    private static final Pattern ALLOWED = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_LENGTH + "}");

    /**
     * Creates a run id.
     *
     * @param value the name
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalArgumentException if it is empty, longer than {@value #MAX_LENGTH} characters or has a character
     *     outside {@code [A-Za-z0-9._-]}
     */
    public RunId {
        Objects.requireNonNull(value, "value");
        if (!ALLOWED.matcher(value).matches()) {
            throw new IllegalArgumentException("run id '" + value + "' must be 1 to " + MAX_LENGTH
                    + " characters of [A-Za-z0-9._-]");
        }
    }

    @Override
    public int compareTo(RunId o) {
        return value.compareTo(o.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
