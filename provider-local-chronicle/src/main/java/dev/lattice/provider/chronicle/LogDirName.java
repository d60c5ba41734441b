package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogId;

/**
 * Directory naming of logs (layout part of the protocol, docs/providers/chronicle.md "On-disk layout"): maps a
 * {@link LogId} to its directory name under {@code <root>/logs} and back. Stateless and thread-safe.
 */
final class LogDirName {

    private LogDirName() {
    }

    /**
     * The directory name of a log: {@link LogId#key()} with every upper-case letter written as {@code ~} and its
     * lower-case form ({@code Orders.0001} becomes {@code ~orders.0001}), so that trees differing only by case stay
     * apart on case-insensitive file systems ({@code ~} is not allowed in tree names, so the form is unambiguous).
     *
     * @param id the log
     * @return the directory name
     */
    static String dirName(LogId id) {
        String key = id.key();
        StringBuilder b = new StringBuilder(key.length() + 4);
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                b.append('~').append((char) (c - 'A' + 'a'));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /**
     * Parses a directory name written by {@link #dirName}.
     *
     * @param name the name
     * @return the log, or null when the name is not a log directory name
     */
    static LogId parseDirName(String name) {
        StringBuilder key = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '~') {
                if (i + 1 >= name.length() || name.charAt(i + 1) < 'a' || name.charAt(i + 1) > 'z') {
                    return null;
                }
                key.append((char) (name.charAt(++i) - 'a' + 'A'));
            } else if (c >= 'A' && c <= 'Z') {
                return null;
            } else {
                key.append(c);
            }
        }
        String k = key.toString();
        int dot = k.lastIndexOf('.');
        if (dot <= 0 || k.length() - dot - 1 != 4) {
            return null;
        }
        for (int i = dot + 1; i < k.length(); i++) {
            if (!Character.isDigit(k.charAt(i))) {
                return null;
            }
        }
        try {
            LogId id = new LogId(k.substring(0, dot), Integer.parseInt(k.substring(dot + 1)));
            return dirName(id).equals(name) ? id : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
