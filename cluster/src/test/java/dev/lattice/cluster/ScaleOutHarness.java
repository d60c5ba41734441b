package dev.lattice.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Scale-out figures (issue 19): 1, 2 and 3 node JVMs on 127.0.0.1, each in its own cgroup (v1 cpu controller) with
 * a fixed CPU quota, sharing one embedded PostgreSQL (not limited), each running point writes and then point reads
 * through its own cluster tree; prints keys/s per node count and the speedup against one node. Run by hand (root
 * needed for the cgroups), see docs/cluster.md "Figures":
 * {@code java -cp <cluster test classpath> dev.lattice.cluster.ScaleOutHarness [quotaPercent] [seconds] [threads]}.
 */
public final class ScaleOutHarness {

    private ScaleOutHarness() {
    }

    public static void main(String[] args) throws Exception {
        int quota = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        Path dir = Files.createTempDirectory("lattice-scale");
        StringBuilder table = new StringBuilder("| nodes | CPU per node | writes keys/s | speedup | reads keys/s | speedup |\n"
                + "|---|---|---|---|---|---|\n");
        double w1 = 0;
        double r1 = 0;
        for (int n = 1; n <= 3; n++) {
            String uri = TestCluster.freshPostgresUri();
            Path go = dir.resolve("go-" + n);
            List<Process> procs = new ArrayList<>();
            List<Path> logs = new ArrayList<>();
            int seed = TestCluster.freePort();
            for (int i = 0; i < n; i++) {
                int port = i == 0 ? seed : TestCluster.freePort();
                Path log = dir.resolve("n" + n + "-" + i + ".log");
                List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                                .toString(), "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                        "-Dlattice.cluster.provider=" + uri,
                        "-Dpekko.remote.artery.canonical.port=" + port,
                        "-Dpekko.cluster.seed-nodes.0=pekko://lattice@127.0.0.1:" + seed,
                        "-Dlattice.test.members=" + n, "-Dlattice.test.node=" + i, "-Dlattice.test.go=" + go,
                        "-Dlattice.test.seconds=" + seconds, "-Dlattice.test.threads=" + threads,
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", ThroughputNode.class.getName()));
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
                limit(p.pid(), "lattice-node-" + i, quota);
                procs.add(p);
                logs.add(log);
            }
            for (Path log : logs) {
                await(log, "READY", 180);
            }
            Files.writeString(go, "go");
            long writes = 0;
            long reads = 0;
            for (int i = 0; i < n; i++) {
                procs.get(i).waitFor(seconds * 2L + 120, TimeUnit.SECONDS);
                String out = Files.readString(logs.get(i));
                writes += number(out, "WRITES ");
                reads += number(out, "READS ");
            }
            double w = writes / (double) seconds;
            double r = reads / (double) seconds;
            if (n == 1) {
                w1 = w;
                r1 = r;
            }
            table.append(String.format("| %d | %d%% | %,.0f | %.2fx | %,.0f | %.2fx |%n", n, quota, w, w / w1, r, r / r1));
            System.out.println("[scale-out] " + n + " nodes: writes " + (long) w + "/s, reads " + (long) r + "/s");
        }
        System.out.println(table);
        System.exit(0);
    }

    /** Puts the process into its own cgroup with {@code percent} of one CPU (cfs quota over a 100 ms period). */
    private static void limit(long pid, String group, int percent) throws IOException {
        Path g = Path.of("/sys/fs/cgroup/cpu", group);
        Files.createDirectories(g);
        Files.writeString(g.resolve("cpu.cfs_period_us"), "100000");
        Files.writeString(g.resolve("cpu.cfs_quota_us"), Integer.toString(percent * 1000));
        Files.writeString(g.resolve("cgroup.procs"), Long.toString(pid));
    }

    private static void await(Path log, String marker, int seconds) throws Exception {
        long deadline = System.currentTimeMillis() + seconds * 1000L;
        while (System.currentTimeMillis() < deadline) {
            if (Files.exists(log) && Files.readString(log).contains(marker)) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException(log + " never printed " + marker + ":\n" + Files.readString(log));
    }

    private static long number(String out, String prefix) {
        int i = out.indexOf(prefix);
        if (i < 0) {
            throw new IllegalStateException("no '" + prefix + "' in:\n" + out);
        }
        int j = out.indexOf('\n', i);
        return Long.parseLong(out.substring(i + prefix.length(), j < 0 ? out.length() : j).trim());
    }
}
