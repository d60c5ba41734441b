package dev.lattice.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A small table for terminal output: aligned plain text (numbers right-aligned) or a Markdown table. Not
 * thread-safe.
 */
public final class Table {

    private final String[] headers;
    private final boolean[] rightAligned;
    private final List<String[]> rows = new ArrayList<>();

    /**
     * @param headers the column headers; a header starting with {@code >} marks a right-aligned (numeric) column,
     *     the marker is not printed
     */
    public Table(String... headers) {
        this.headers = new String[headers.length];
        this.rightAligned = new boolean[headers.length];
        for (int i = 0; i < headers.length; i++) {
            rightAligned[i] = headers[i].startsWith(">");
            this.headers[i] = rightAligned[i] ? headers[i].substring(1) : headers[i];
        }
    }

    /**
     * @param cells one cell per column
     * @return this
     * @throws IllegalArgumentException if the number of cells differs from the number of columns
     */
    public Table row(Object... cells) {
        if (cells.length != headers.length) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, table has " + headers.length
                    + " columns");
        }
        rows.add(Arrays.stream(cells).map(String::valueOf).toArray(String[]::new));
        return this;
    }

    /** @return true when no row was added */
    public boolean isEmpty() {
        return rows.isEmpty();
    }

    /** @return aligned plain text, a header line, a rule, then the rows; lines end with {@code \n} */
    public String render() {
        int[] w = new int[headers.length];
        for (int i = 0; i < headers.length; i++) {
            w[i] = headers[i].length();
            for (String[] r : rows) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        line(sb, headers, w);
        String[] rule = new String[headers.length];
        for (int i = 0; i < rule.length; i++) {
            rule[i] = "-".repeat(w[i]);
        }
        line(sb, rule, w);
        for (String[] r : rows) {
            line(sb, r, w);
        }
        return sb.toString();
    }

    /** @return a GitHub-flavoured Markdown table; lines end with {@code \n} */
    public String markdown() {
        StringBuilder sb = new StringBuilder("|");
        for (String h : headers) {
            sb.append(' ').append(escape(h)).append(" |");
        }
        sb.append("\n|");
        for (boolean right : rightAligned) {
            sb.append(right ? "---:|" : "---|");
        }
        sb.append('\n');
        for (String[] r : rows) {
            sb.append('|');
            for (String c : r) {
                sb.append(' ').append(escape(c)).append(" |");
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private void line(StringBuilder sb, String[] cells, int[] w) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) {
                l.append("  ");
            }
            String c = cells[i];
            String pad = " ".repeat(w[i] - c.length());
            l.append(rightAligned[i] ? pad + c : c + pad);
        }
        sb.append(l.toString().stripTrailing()).append('\n');
    }

    private static String escape(String s) {
        return s.replace("|", "\\|");
    }
}
