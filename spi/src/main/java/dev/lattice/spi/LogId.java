package dev.lattice.spi;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Identifies one log: the write-ahead log of one partition of one tree. Every provider call addresses a log.
 *
 * <p>Tree names are 1 to {@value #MAX_TREE_NAME_LENGTH} characters from {@code [A-Za-z0-9._-]}, starting with a
 * letter, digit or {@code _} (names starting with {@code _} are reserved for the engine's own logs), so that every provider can use them in table names, blob paths, file names and partition keys
 * without escaping. Partitions are numbered from 0 to {@value #MAX_PARTITION} inclusive.
 *
 * <p>Immutable and thread-safe. Ordered by tree name, then partition.
 *
 * @param tree the tree name
 * @param partition the partition number, 0-based
 */
public record LogId(String tree, int partition) implements Comparable<LogId> {

    /** Longest tree name, in characters. */
    public static final int MAX_TREE_NAME_LENGTH = 64;
    /** Highest partition number (inclusive). */
    public static final int MAX_PARTITION = 4095;

    private static final Pattern TREE_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]*");

    /**
     * Creates a log id.
     *
     * @param tree the tree name
     * @param partition the partition number, 0-based
     * @throws NullPointerException if {@code tree} is null
     * @throws IllegalArgumentException if the tree name is empty, too long or has other characters than
     *     {@code [A-Za-z0-9._-]}, or the partition is outside {@code 0..MAX_PARTITION}
     */
    public LogId {
        validateTreeName(tree);
        if (partition < 0 || partition > MAX_PARTITION) {
            throw new IllegalArgumentException(
                    "partition must be in 0.." + MAX_PARTITION + ", got " + partition + " (tree '" + tree + "')");
        }
    }

    /**
     * Checks a tree name against the rules of this class.
     *
     * @param tree the name to check
     * @return {@code tree}, for chaining
     * @throws NullPointerException if {@code tree} is null
     * @throws IllegalArgumentException if the name breaks a rule; the message names the rule
     */
    public static String validateTreeName(String tree) {
        Objects.requireNonNull(tree, "tree name");
        if (tree.isEmpty() || tree.length() > MAX_TREE_NAME_LENGTH) {
            throw new IllegalArgumentException("tree name must be 1.." + MAX_TREE_NAME_LENGTH
                    + " characters, got " + tree.length());
        }
        if (!TREE_NAME.matcher(tree).matches()) {
            throw new IllegalArgumentException("tree name '" + tree
                    + "' must match [A-Za-z0-9_][A-Za-z0-9._-]* (letters, digits, '.', '_', '-')");
        }
        return tree;
    }

    /**
     * A stable, file-name-safe text form: {@code <tree>.<partition>} with the partition zero-padded to 4 digits,
     * e.g. {@code orders.0007}. Providers may use it to name files, blobs and rows.
     *
     * @return the text form; never null
     */
    public String key() {
        return tree + "." + String.format("%04d", partition);
    }

    @Override
    public int compareTo(LogId o) {
        int c = tree.compareTo(o.tree);
        return c != 0 ? c : Integer.compare(partition, o.partition);
    }

    @Override
    public String toString() {
        return tree + "/" + partition;
    }
}
