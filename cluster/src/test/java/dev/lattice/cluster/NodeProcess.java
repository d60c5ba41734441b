package dev.lattice.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@link WorkloadNode} child JVM on 127.0.0.1: start, signal (SIGKILL, SIGSTOP, SIGCONT, SIGTERM), wait. */
final class NodeProcess {

    final String name;
    final int port;
    final Path history;
    final Path log;
    private final Process process;
    long stoppedAtMillis;

    private NodeProcess(String name, int port, Path history, Path log, Process process) {
        this.name = name;
        this.port = port;
        this.history = history;
        this.log = log;
        this.process = process;
    }

    static NodeProcess start(String name, String uri, int port, List<Integer> seedPorts, int members, Path dir,
                             Path stop) {
        Path history = dir.resolve(name + ".history");
        Path log = dir.resolve(name + ".log");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("-Dlattice.cluster.provider=" + uri);
        cmd.add("-Dlattice.cluster.read-lease=1s");
        cmd.add("-Dlattice.cluster.request-timeout=3s");
        cmd.add("-Dlattice.cluster.operation-timeout=20s");
        cmd.add("-Dpekko.remote.artery.canonical.hostname=127.0.0.1");
        cmd.add("-Dpekko.remote.artery.canonical.port=" + port);
        for (int i = 0; i < seedPorts.size(); i++) {
            cmd.add("-Dpekko.cluster.seed-nodes." + i + "=pekko://lattice@127.0.0.1:" + seedPorts.get(i));
        }
        cmd.add("-Dpekko.cluster.split-brain-resolver.stable-after=4s");
        cmd.add("-Dpekko.cluster.failure-detector.acceptable-heartbeat-pause=2s");
        cmd.add("-Dpekko.cluster.failure-detector.heartbeat-interval=500ms");
        cmd.add("-Dpekko.cluster.sharding.retry-interval=500ms");
        cmd.add("-Dpekko.coordinated-shutdown.exit-jvm=on");
        cmd.add("-Dlattice.test.node=" + name);
        cmd.add("-Dlattice.test.history=" + history);
        cmd.add("-Dlattice.test.stop=" + stop);
        cmd.add("-Dlattice.test.members=" + members);
        if (Boolean.getBoolean("lattice.cluster.trace")) {
            cmd.add("-Dorg.slf4j.simpleLogger.log.dev.lattice.cluster.trace=debug");
        }
        cmd.add(WorkloadNode.class.getName());
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            return new NodeProcess(name, port, history, log, p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until the node printed {@code marker} to its log. */
    boolean awaitLog(String marker, long timeoutMillis) {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            try {
                if (Files.exists(log) && Files.readString(log).contains(marker)) {
                    return true;
                }
            } catch (IOException | java.io.UncheckedIOException e) {
                // being written
            }
            if (!process.isAlive()) {
                return false;
            }
            sleep(100);
        }
        return false;
    }

    void signal(String sig) {
        try {
            Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start();
            k.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (sig.equals("KILL") || sig.equals("TERM")) {
            stoppedAtMillis = System.currentTimeMillis();
        }
    }

    /** @return the exit code, or null if it is still running after the timeout */
    Integer awaitExit(long timeoutMillis) {
        try {
            if (process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
                return process.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }

    boolean alive() {
        return process.isAlive();
    }

    void destroyForcibly() {
        process.destroyForcibly();
    }

    String tail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
