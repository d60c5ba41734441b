package dev.lattice.cli;

import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Extra jars for the CLI, so a third-party provider (or a first-party one the CLI does not bundle) works with every
 * command: the {@code --classpath PATH} option (anywhere before {@code --}, also as {@code --classpath=PATH}) and the
 * {@code LATTICE_CLASSPATH} environment variable, both a list separated by {@link File#pathSeparator} of jars,
 * directories of classes, or {@code dir/*} for every jar in a directory. They are loaded by a class loader over the
 * CLI's own, set as the thread's context class loader, which is where {@link dev.lattice.spi.Providers} looks for
 * provider factories. Not thread-safe; used once per run.
 */
final class ExtraClasspath {

    /** The option name. */
    static final String OPTION = "--classpath";
    /** The environment variable. */
    static final String ENV = "LATTICE_CLASSPATH";

    private ExtraClasspath() {
    }

    /**
     * The arguments without {@code --classpath} and its value, and the value(s) found.
     *
     * @param args the command line
     * @param paths receives each {@code --classpath} value, in order
     * @return the remaining arguments
     * @throws CliException (usage) if {@code --classpath} has no value
     */
    static String[] strip(String[] args, List<String> paths) {
        List<String> rest = new ArrayList<>();
        boolean literal = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (literal) {
                rest.add(a);
            } else if (a.equals("--")) {
                literal = true;
                rest.add(a);
            } else if (a.equals(OPTION)) {
                if (i + 1 >= args.length) {
                    throw CliException.usage(OPTION + " needs a value: jars or directories separated by '"
                            + File.pathSeparator + "'");
                }
                paths.add(args[++i]);
            } else if (a.startsWith(OPTION + "=")) {
                paths.add(a.substring(OPTION.length() + 1));
            } else {
                rest.add(a);
            }
        }
        return rest.toArray(new String[0]);
    }

    /**
     * A class loader over {@code parent} with the entries of the paths.
     *
     * @param paths path lists (from the option and the environment), empty entries ignored
     * @param parent the CLI's class loader
     * @return the loader, or null when no entry was given
     * @throws CliException (usage) naming an entry that does not exist or a directory that cannot be listed
     */
    static URLClassLoader loader(List<String> paths, ClassLoader parent) {
        List<URL> urls = new ArrayList<>();
        for (String list : paths) {
            for (String entry : list.split(java.util.regex.Pattern.quote(File.pathSeparator))) {
                if (!entry.isBlank()) {
                    urls.addAll(urlsOf(entry.strip()));
                }
            }
        }
        return urls.isEmpty() ? null : new URLClassLoader(urls.toArray(new URL[0]), parent);
    }

    private static List<URL> urlsOf(String entry) {
        List<URL> out = new ArrayList<>();
        try {
            if (entry.endsWith("/*") || entry.equals("*")) {
                Path dir = Path.of(entry.length() == 1 ? "." : entry.substring(0, entry.length() - 2));
                if (!Files.isDirectory(dir)) {
                    throw CliException.usage("extra classpath entry '" + entry + "': " + dir + " is not a directory");
                }
                try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "*.{jar,JAR}")) {
                    for (Path jar : s) {
                        out.add(jar.toUri().toURL());
                    }
                }
                return out;
            }
            Path p = Path.of(entry);
            if (!Files.exists(p)) {
                throw CliException.usage("extra classpath entry '" + entry + "' does not exist (from " + OPTION
                        + " or $" + ENV + ")");
            }
            out.add(p.toUri().toURL());
            return out;
        } catch (MalformedURLException e) {
            throw CliException.usage("extra classpath entry '" + entry + "' is not a valid path: " + e.getMessage());
        } catch (IOException e) {
            throw CliException.usage("extra classpath entry '" + entry + "' cannot be listed: " + e.getMessage());
        } catch (java.nio.file.InvalidPathException e) {
            throw CliException.usage("extra classpath entry '" + entry + "' is not a valid path: " + e.getMessage());
        }
    }
}
