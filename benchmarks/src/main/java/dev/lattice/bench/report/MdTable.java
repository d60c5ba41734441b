package dev.lattice.bench.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** A GitHub-flavoured Markdown table built row by row. Not thread-safe. */
public final class MdTable {

    private final String[] headers;
    private final boolean[] right;
    private final List<String[]> rows = new ArrayList<>();

    /**
     * @param headers column headers; one starting with {@code >} is right-aligned (the marker is dropped)
     */
    public MdTable(String... headers) {
        this.headers = new String[headers.length];
        this.right = new boolean[headers.length];
        for (int i = 0; i < headers.length; i++) {
            right[i] = headers[i].startsWith(">");
            this.headers[i] = right[i] ? headers[i].substring(1) : headers[i];
        }
    }

    /**
     * @param cells one per column ({@code String.valueOf} of each)
     * @return this
     * @throws IllegalArgumentException if the count differs from the columns
     */
    public MdTable row(Object... cells) {
        if (cells.length != headers.length) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, table has " + headers.length);
        }
        rows.add(Arrays.stream(cells).map(String::valueOf).toArray(String[]::new));
        return this;
    }

    /** @return the number of rows */
    public int size() {
        return rows.size();
    }

    /** @return the table, lines ending with {@code \n} */
    public String render() {
        StringBuilder sb = new StringBuilder("|");
        for (String h : headers) {
            sb.append(' ').append(h.replace("|", "\\|")).append(" |");
        }
        sb.append("\n|");
        for (boolean r : right) {
            sb.append(r ? "---:|" : "---|");
        }
        sb.append('\n');
        for (String[] r : rows) {
            sb.append('|');
            for (String c : r) {
                sb.append(' ').append(c.replace("|", "\\|")).append(" |");
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /**
     * @param v a number
     * @return {@code v} with thousands separators and no decimals
     */
    public static String count(double v) {
        return String.format(Locale.ROOT, "%,.0f", v);
    }

    /**
     * @param v a number
     * @param decimals digits after the point
     * @return {@code v} formatted
     */
    public static String fixed(double v, int decimals) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%,." + decimals + "f", v);
    }

    /**
     * @param a numerator
     * @param b denominator
     * @return {@code a/b} with 2 decimals (3 below 0.1) and an {@code x}, or {@code n/a}
     */
    public static String ratio(double a, double b) {
        if (b == 0 || Double.isNaN(a) || Double.isNaN(b)) {
            return "n/a";
        }
        double r = a / b;
        return String.format(Locale.ROOT, r < 0.1 ? "%.3fx" : "%.2fx", r);
    }
}
