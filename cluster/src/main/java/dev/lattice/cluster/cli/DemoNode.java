package dev.lattice.cluster.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One node JVM of {@code lattice cluster demo}: {@code lattice cluster node} started as a child process on the
 * demo's own class path, its output in a log file. Thread-safe for the reads the demo makes (the log is re-read).
 */
final class DemoNode {

    private static final Pattern TRANSPORT = Pattern.compile(" started \\([^)]*\\), transport (.+?), seeds ");
    private static final Pattern HOSTING = Pattern.compile("hosting (\\S+) partitions \\[([0-9, ]*)]");

    final String name;
    final int port;
    final Path log;
    private final Process process;

    private DemoNode(String name, int port, Path log, Process process) {
        this.name = name;
        this.port = port;
        this.log = log;
        this.process = process;
    }

    /**
     * Starts a node JVM.
     *
     * @param name the node's name in the report
     * @param port its cluster port on 127.0.0.1
     * @param seeds the seed ports (127.0.0.1)
     * @param uri the shared provider URI
     * @param tree the demo tree, partitions
     * @param partitions partitions of the tree
     * @param dir where its log goes
     * @param pekko extra {@code -D} settings (failure detection)
     * @param options extra options of {@code lattice cluster node} (TLS)
     * @return the running node
     * @throws UncheckedIOException if the JVM cannot be started
     */
    static DemoNode start(String name, int port, List<Integer> seeds, String uri, String tree, int partitions,
                          Path dir, List<String> pekko, List<String> options) {
        Path log = dir.resolve(name + ".log");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.addAll(pekko);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("dev.lattice.cli.Main");
        cmd.add("cluster");
        cmd.add("node");
        cmd.add("--provider");
        cmd.add(uri);
        cmd.add("--host");
        cmd.add("127.0.0.1");
        cmd.add("--port");
        cmd.add(Integer.toString(port));
        for (int s : seeds) {
            cmd.add("--seed");
            cmd.add("127.0.0.1:" + s);
        }
        cmd.add("--tree");
        cmd.add(tree);
        cmd.add("--partitions");
        cmd.add(Integer.toString(partitions));
        cmd.add("--read-lease");
        cmd.add(ClusterDemoCommand.READ_LEASE.toMillis() + "ms");
        cmd.addAll(options);
        try {
            // appended: a node started again (it failed before joining) keeps the first attempt's lines
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            return new DemoNode(name, port, log, p);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the node JVM " + name, e);
        }
    }

    /**
     * @return the transport of the node's last start line ({@code started (...), transport T, seeds}), e.g.
     *     {@code tls-tcp (TLSv1.3, mutual authentication)}, or null before it printed one
     */
    String transport() {
        String last = null;
        Matcher m = TRANSPORT.matcher(logText());
        while (m.find()) {
            last = m.group(1);
        }
        return last;
    }

    /** @return the node's process id */
    long pid() {
        return process.pid();
    }

    /** @return true while the JVM runs */
    boolean alive() {
        return process.isAlive();
    }

    /** @return the partitions of {@code tree} the node last reported hosting (empty before its first report) */
    Set<Integer> hosting(String tree) {
        Set<Integer> last = new TreeSet<>();
        Matcher m = HOSTING.matcher(logText());
        while (m.find()) {
            if (m.group(1).equals(tree)) {
                last = new TreeSet<>();
                for (String p : m.group(2).split(",")) {
                    if (!p.isBlank()) {
                        last.add(Integer.parseInt(p.trim()));
                    }
                }
            }
        }
        return last;
    }

    /** @return the log so far, or "" if it cannot be read yet */
    String logText() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException | UncheckedIOException e) {
            return "";
        }
    }

    /** @return the last {@code lines} lines of the log */
    String tail(int lines) {
        List<String> all = logText().lines().toList();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /** SIGKILL: the JVM dies at once, without leaving the cluster. */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * SIGTERM, then waits: the node leaves the cluster gracefully; SIGKILL if it has not exited in time.
     *
     * @param timeoutMillis how long to wait for the graceful exit
     * @return the exit code, or null if it had to be killed
     */
    Integer stop(long timeoutMillis) {
        process.destroy();
        try {
            if (process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
                return process.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill();
        return null;
    }
}
