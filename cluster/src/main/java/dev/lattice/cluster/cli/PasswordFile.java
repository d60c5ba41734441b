package dev.lattice.cluster.cli;

import dev.lattice.cli.CliException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads the password of the cluster's key stores from a file, for {@code lattice cluster certs} and {@code node}. */
final class PasswordFile {

    private PasswordFile() {
    }

    /**
     * @param file the file: the password is its first line (without the line break; other lines are ignored)
     * @param option the option that named it, for the messages
     * @return the password, at least 6 characters
     * @throws CliException (usage) naming the option if the file is missing, unreadable, or its first line is
     *     shorter than 6 characters (the message never holds the password)
     */
    static String read(Path file, String option) {
        if (!Files.isRegularFile(file)) {
            throw CliException.usage(option + " " + file + ": no such file");
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw CliException.usage(option + " " + file + ": cannot be read (" + e.getMessage() + ")");
        }
        int nl = text.indexOf('\n');
        String first = nl < 0 ? text : text.substring(0, nl);
        if (first.endsWith("\r")) {
            first = first.substring(0, first.length() - 1);
        }
        if (first.length() < 6) {
            throw CliException.usage(option + " " + file + ": the password (the file's first line) must have at "
                    + "least 6 characters");
        }
        return first;
    }
}
