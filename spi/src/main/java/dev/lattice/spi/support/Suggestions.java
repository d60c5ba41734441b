package dev.lattice.spi.support;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeSet;

/**
 * "Did you mean" for names typed by a person: URI schemes, option names, command names. A candidate is close when its
 * edit distance to the input (insertions, deletions, substitutions and swaps of neighbours, ignoring case) is at most
 * {@link #maxDistance(String)}, or when one of them starts with the other and the shorter has at least three
 * characters. Stateless and thread-safe.
 */
public final class Suggestions {

    private Suggestions() {
    }

    /**
     * The most edits a candidate may be away from the input: 1 up to 5 characters, 2 up to 8, else 3.
     *
     * @param input the typed name
     * @return the bound, at least 1
     */
    public static int maxDistance(String input) {
        int n = input.length();
        return n <= 5 ? 1 : n <= 8 ? 2 : 3;
    }

    /**
     * The candidates close to the input, nearest first (ties alphabetically); the input itself is never suggested.
     *
     * @param input the typed name
     * @param candidates the valid names
     * @return the close candidates, possibly empty
     * @throws NullPointerException if an argument is null
     */
    public static List<String> closest(String input, Collection<String> candidates) {
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(candidates, "candidates");
        String in = input.toLowerCase(Locale.ROOT);
        int best = Integer.MAX_VALUE;
        TreeSet<String> bestOnes = new TreeSet<>();
        for (String c : new TreeSet<>(candidates)) {
            String lc = c.toLowerCase(Locale.ROOT);
            if (lc.equals(in)) {
                continue;
            }
            int d = distance(in, lc);
            boolean prefix = Math.min(in.length(), lc.length()) >= 3 && (lc.startsWith(in) || in.startsWith(lc));
            if (d > maxDistance(input) && !prefix) {
                continue;
            }
            if (d < best) {
                best = d;
                bestOnes.clear();
            }
            if (d == best) {
                bestOnes.add(c);
            }
        }
        return new ArrayList<>(bestOnes);
    }

    /**
     * A phrase to append to an error message: {@code "; did you mean 'memory'?"}, {@code "; did you mean 'a' or
     * 'b'?"}, or {@code ""} when nothing is close.
     *
     * @param input the typed name
     * @param candidates the valid names
     * @return the phrase, or the empty string
     * @throws NullPointerException if an argument is null
     */
    public static String didYouMean(String input, Collection<String> candidates) {
        List<String> close = closest(input, candidates);
        if (close.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("; did you mean ");
        for (int i = 0; i < close.size(); i++) {
            if (i > 0) {
                sb.append(i == close.size() - 1 ? " or " : ", ");
            }
            sb.append('\'').append(close.get(i)).append('\'');
        }
        return sb.append('?').toString();
    }

    /**
     * Optimal string alignment distance: insertions, deletions, substitutions and transpositions of adjacent
     * characters each cost 1.
     *
     * @param a one string
     * @param b the other
     * @return the distance, 0 when equal
     */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                int v = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    v = Math.min(v, d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        return d[a.length()][b.length()];
    }
}
