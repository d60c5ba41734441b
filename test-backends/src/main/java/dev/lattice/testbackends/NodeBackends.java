package dev.lattice.testbackends;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Locates the {@code test-backends} folder (its {@code package.json} and {@code package-lock.json} pin the npm
 * emulators) and makes sure {@code npm ci} has run there for the current lock file.
 *
 * <p>Installation happens at most once per lock-file content: after a successful {@code npm ci} a marker file
 * {@code node_modules/.lattice-npm-ci.sha256} records the SHA-256 of {@code package-lock.json}. Concurrent test
 * JVMs (Surefire forks, several modules of one build, parallel builds) serialize on an OS file lock
 * ({@code test-backends/.npm-ci.lock}) and re-check the marker after acquiring it, so only the first installs.
 *
 * <p>Configuration (system properties, each optional):
 * <ul>
 *   <li>{@value #DIR_PROPERTY}: the {@code test-backends} folder; default: the first {@code test-backends}
 *       folder holding a {@code package.json} found walking up from {@code user.dir}
 *       (also read from the environment variable {@code LATTICE_TEST_BACKENDS_DIR});</li>
 *   <li>{@value #NODE_PROPERTY}: the Node executable, default {@code node};</li>
 *   <li>{@value #NPM_PROPERTY}: the npm executable, default {@code npm}.</li>
 * </ul>
 *
 * <p>Thread-safe: {@link #ensureInstalled()} is synchronized within the JVM and file-locked across JVMs.
 */
public final class NodeBackends {
    /** System property naming the {@code test-backends} folder. */
    public static final String DIR_PROPERTY = "lattice.testbackends.dir";
    /** System property naming the Node executable. */
    public static final String NODE_PROPERTY = "lattice.testbackends.node";
    /** System property naming the npm executable. */
    public static final String NPM_PROPERTY = "lattice.testbackends.npm";

    static final String MARKER = ".lattice-npm-ci.sha256";
    /** Upper bound for one {@code npm ci}, minutes (a cold install took ~60 s on the project's machines). */
    static final long NPM_TIMEOUT_MINUTES = 15;

    private static Path installed;

    private NodeBackends() {
    }

    /**
     * Returns the {@code test-backends} folder after making sure its npm packages are installed, running
     * {@code npm ci} there if needed.
     *
     * @return the absolute {@code test-backends} folder, with a complete {@code node_modules}
     * @throws BackendStartException if the folder cannot be found, npm is missing, or {@code npm ci} fails or
     *     times out ({@value #NPM_TIMEOUT_MINUTES} min); the message names the command and its output
     */
    @SuppressWarnings("try") // the file lock is held for the try block's duration, not used in it
    public static synchronized Path ensureInstalled() {
        if (installed != null) {
            return installed;
        }
        Path dir = directory();
        String wanted = lockHash(dir);
        if (!isInstalled(dir, wanted)) {
            try (FileChannel channel = FileChannel.open(dir.resolve(".npm-ci.lock"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock ignored = channel.lock()) {
                if (!isInstalled(dir, wanted)) {
                    runNpmCi(dir, wanted);
                }
            } catch (IOException e) {
                throw new BackendStartException("cannot lock " + dir.resolve(".npm-ci.lock")
                        + " to install the test backends: " + e, e);
            }
        }
        installed = dir;
        return dir;
    }

    /**
     * Finds the {@code test-backends} folder without installing anything.
     *
     * @return the absolute folder holding the emulators' {@code package.json}
     * @throws BackendStartException if no such folder is configured or found above {@code user.dir}
     */
    public static Path directory() {
        String configured = System.getProperty(DIR_PROPERTY, System.getenv("LATTICE_TEST_BACKENDS_DIR"));
        if (configured != null && !configured.isBlank()) {
            Path dir = Path.of(configured).toAbsolutePath().normalize();
            if (!Files.isRegularFile(dir.resolve("package.json"))) {
                throw new BackendStartException("-D" + DIR_PROPERTY + "=" + configured
                        + " does not hold a package.json (expected the repository's test-backends folder)");
            }
            return dir;
        }
        Path start = Path.of(System.getProperty("user.dir")).toAbsolutePath().normalize();
        for (Path d = start; d != null; d = d.getParent()) {
            Path candidate = d.resolve("test-backends");
            if (Files.isRegularFile(candidate.resolve("package.json"))
                    && Files.isRegularFile(candidate.resolve("package-lock.json"))) {
                return candidate;
            }
        }
        throw new BackendStartException("cannot find the test-backends folder (package.json + package-lock.json)"
                + " in " + start + " or any parent; run the tests from the repository checkout or set -D"
                + DIR_PROPERTY + "=<path to test-backends>");
    }

    /** @return the Node executable to run (property {@value #NODE_PROPERTY}, default {@code node}) */
    static String node() {
        return System.getProperty(NODE_PROPERTY, "node");
    }

    /** @return the npm executable to run (property {@value #NPM_PROPERTY}, default {@code npm}) */
    static String npm() {
        return System.getProperty(NPM_PROPERTY, "npm");
    }

    private static boolean isInstalled(Path dir, String wanted) {
        Path marker = dir.resolve("node_modules").resolve(MARKER);
        try {
            return Files.isRegularFile(marker)
                    && Files.readString(marker, StandardCharsets.UTF_8).trim().equals(wanted);
        } catch (IOException e) {
            return false;
        }
    }

    private static String lockHash(Path dir) {
        Path lock = dir.resolve("package-lock.json");
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(lock));
            return HexFormat.of().formatHex(digest);
        } catch (IOException e) {
            throw new BackendStartException("cannot read " + lock + ": " + e, e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static void runNpmCi(Path dir, String wanted) {
        List<String> command = List.of(npm(), "ci", "--no-audit", "--no-fund", "--loglevel=error");
        Path log = dir.resolve("npm-ci.log");
        System.err.println("[lattice-test-backends] installing emulators: " + String.join(" ", command)
                + " in " + dir + " (first run only; about a minute)");
        Process process;
        try {
            process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
                    .start();
        } catch (IOException e) {
            throw new BackendStartException("cannot run `" + String.join(" ", command) + "` in " + dir
                    + ": npm is missing from PATH? Install Node 20+ and npm (or set -D" + NPM_PROPERTY + "). "
                    + e, e);
        }
        try {
            if (!process.waitFor(NPM_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new BackendStartException("`" + String.join(" ", command) + "` in " + dir
                        + " did not finish within " + NPM_TIMEOUT_MINUTES + " min; output:\n" + tail(log));
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new BackendStartException("interrupted while running `" + String.join(" ", command) + "`", e);
        }
        if (process.exitValue() != 0) {
            throw new BackendStartException("`" + String.join(" ", command) + "` in " + dir + " failed with exit code "
                    + process.exitValue() + "; output:\n" + tail(log));
        }
        try {
            Files.writeString(dir.resolve("node_modules").resolve(MARKER), wanted + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new BackendStartException("npm ci succeeded but the marker could not be written: " + e, e);
        }
    }

    private static java.io.File nullDevice() {
        return new java.io.File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
    }

    /**
     * Returns the last part of a log file for an error message.
     *
     * @param log the file; a missing or unreadable file gives a placeholder
     * @return at most the last 4,000 characters
     */
    static String tail(Path log) {
        try {
            String text = new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
            return text.length() <= 4000 ? text : "..." + text.substring(text.length() - 4000);
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }
}
