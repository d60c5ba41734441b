package dev.lattice.cluster.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** {@code dev.lattice.cli.Main} in a child JVM on the test class path, its output in files. */
final class ChildJvm {

    final Process process;
    final Path out;
    final Path err;

    private ChildJvm(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
    }

    static ChildJvm start(Path dir, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx384m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("dev.lattice.cli.Main");
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().remove("LATTICE_PROVIDER");
        return new ChildJvm(pb.start(), out, err);
    }

    /** @return the exit code, or null (after killing the JVM) if it ran longer than {@code seconds} */
    Integer await(long seconds) throws InterruptedException {
        if (process.waitFor(seconds, TimeUnit.SECONDS)) {
            return process.exitValue();
        }
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
        return null;
    }

    /** Waits until standard output contains {@code marker}; false if the JVM exited or time ran out first. */
    boolean awaitOut(String marker, long seconds) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (out().contains(marker)) {
                return true;
            }
            if (!process.isAlive()) {
                return out().contains(marker);
            }
            Thread.sleep(100);
        }
        return false;
    }

    String out() throws IOException {
        return Files.readString(out);
    }

    String err() throws IOException {
        return Files.readString(err);
    }

    String describe() throws IOException {
        return "--- out\n" + out() + "--- err\n" + err();
    }

    void kill() {
        process.destroyForcibly();
    }
}
