package dev.lattice.provider.chronicle;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM running {@link ChildMains} with this JVM's classpath and Chronicle flags; its stdout lines are
 * collected on a thread, its stderr goes to a file.
 */
final class ChildJvm implements AutoCloseable {

    /** Sentinel put on the line queue when stdout ends. */
    static final String EOF = "\u0000EOF";

    final Process process;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    final List<String> all = java.util.Collections.synchronizedList(new ArrayList<>());
    private final Thread reader;

    private ChildJvm(Process process) {
        this.process = process;
        this.reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    all.add(line);
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the child was killed
            } finally {
                lines.add(EOF);
            }
        }, "child-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * The JVM flags Chronicle needs, taken from this JVM's own arguments (Surefire's argLine).
     *
     * @return the flags
     */
    static List<String> chronicleFlags() {
        List<String> out = new ArrayList<>();
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-opens") || a.startsWith("--add-exports") || a.startsWith("-Dchronicle.")) {
                out.add(a);
            }
        }
        return out;
    }

    /**
     * Starts {@code ChildMains <args>}.
     *
     * @param stderr file for the child's stderr
     * @param args the command and its arguments
     * @return the running child
     * @throws IOException if it cannot start
     */
    static ChildJvm start(Path stderr, String... args) throws IOException {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(chronicleFlags());
        cmd.add("-Xmx256m");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(cp);
        cmd.add(ChildMains.class.getName());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectError(ProcessBuilder.Redirect.appendTo(new File(stderr.toString())));
        return new ChildJvm(pb.start());
    }

    /**
     * Waits for a line starting with a prefix.
     *
     * @param prefix the prefix
     * @param seconds how long at most
     * @return the line
     * @throws AssertionError if stdout ends or the time runs out first
     */
    String await(String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            long left = deadline - System.nanoTime();
            String l = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
            if (l == null) {
                throw new AssertionError("child printed no line starting with '" + prefix + "' within " + seconds
                        + " s; output so far: " + all);
            }
            if (l.equals(EOF)) {
                throw new AssertionError("child ended before printing '" + prefix + "'; exit "
                        + process.waitFor() + ", output: " + all);
            }
            if (l.startsWith(prefix)) {
                return l;
            }
        }
    }

    /**
     * Kills the child with SIGKILL and waits until it is gone and its output is drained.
     */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
        reader.join(TimeUnit.SECONDS.toMillis(30));
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
