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
 * {@code java -cp <cluster test classpath> dev.lattice.cluster.ScaleOutHarness [quotaPercent] [seconds] [threads]
 * [warmupSeconds] [maxNodes] [periodMillis] [minNodes]} (speedups against the first node count run);
 * {@code LATTICE_SCALE_NODE_OPTS} adds JVM options to every node
 * ({@code {node}} in them becomes the node's name, e.g. for a JFR file each). CPU per operation is the nodes' JVM CPU
 * time (every thread: Pekko, the engine, GC, JIT) during the measured phase over its operations.
 */
public final class ScaleOutHarness {

    private ScaleOutHarness() {
    }

    public static void main(String[] args) throws Exception {
        int quota = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 30; // 10 s left the JIT running under a 40 % quota
        int maxNodes = args.length > 4 ? Integer.parseInt(args[4]) : 3;
        int periodMillis = args.length > 5 ? Integer.parseInt(args[5]) : 100;
        int minNodes = args.length > 6 ? Integer.parseInt(args[6]) : 1; // above 1: speedups against the first row
        Path dir = Files.createTempDirectory("lattice-scale");
        System.out.printf("[scale-out] %d%% of a CPU per node over %d ms periods, %d threads per node, %d s measured"
                + " after %d s of warm-up per phase%n", quota, periodMillis, threads, seconds, warmup);
        StringBuilder table = new StringBuilder("| nodes | CPU per node | writes keys/s | speedup | CPU per write |"
                + " reads keys/s | speedup | CPU per read | periods throttled |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        double w1 = 0;
        double r1 = 0;
        for (int n = minNodes; n <= maxNodes; n++) {
            String uri = TestCluster.freshPostgresUri();
            Path go = dir.resolve("go-" + n);
            List<Process> procs = new ArrayList<>();
            List<Path> logs = new ArrayList<>();
            int seed = TestCluster.freePort();
            for (int i = 0; i < n; i++) {
                int port = i == 0 ? seed : TestCluster.freePort();
                Path log = dir.resolve("n" + n + "-" + i + ".log");
                List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                                .toString(), "-Xmx512m", "-cp", System.getProperty("java.class.path")));
                String extra = System.getenv("LATTICE_SCALE_NODE_OPTS"); // e.g. a JFR recording per node
                if (extra != null && !extra.isBlank()) {
                    cmd.addAll(List.of(extra.replace("{node}", n + "-" + i).trim().split("\\s+")));
                }
                cmd.addAll(List.of(
                        "-Dlattice.cluster.provider=" + uri,
                        "-Dpekko.remote.artery.canonical.port=" + port,
                        "-Dpekko.cluster.seed-nodes.0=pekko://lattice@127.0.0.1:" + seed,
                        "-Dlattice.test.members=" + n, "-Dlattice.test.node=" + i, "-Dlattice.test.go=" + go,
                        "-Dlattice.test.seconds=" + seconds, "-Dlattice.test.threads=" + threads,
                        "-Dlattice.test.warmup=" + warmup,
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", ThroughputNode.class.getName()));
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
                limit(p.pid(), "lattice-node-" + i, quota, periodMillis);
                procs.add(p);
                logs.add(log);
            }
            for (Path log : logs) {
                await(log, "READY", 180);
            }
            long[] throttled0 = throttled(n);
            Files.writeString(go, "go");
            long writes = 0;
            long reads = 0;
            long writeCpu = 0;
            long readCpu = 0;
            StringBuilder hosted = new StringBuilder();
            for (int i = 0; i < n; i++) {
                procs.get(i).waitFor((seconds + warmup) * 2L + 120, TimeUnit.SECONDS);
                String out = Files.readString(logs.get(i));
                long[] w = numbers(out, "WRITES ");
                long[] r = numbers(out, "READS ");
                int h = out.indexOf("HOSTED ");
                hosted.append(hosted.length() == 0 ? "" : "/")
                        .append(h < 0 ? "?" : out.substring(h + 7, out.indexOf('\n', h)).trim());
                int b = out.indexOf("BATCHES ");
                if (b >= 0) {
                    System.out.println("[scale-out] " + n + " nodes, node " + i + ": "
                            + out.substring(b + 8, out.indexOf('\n', b)).trim());
                }
                writes += w[0];
                writeCpu += w[1];
                reads += r[0];
                readCpu += r[1];
            }
            long[] throttled1 = throttled(n);
            double w = writes / (double) seconds;
            double r = reads / (double) seconds;
            if (n == minNodes) {
                w1 = w;
                r1 = r;
            }
            table.append(String.format("| %d | %d%% | %,.0f | %.2fx | %,d us | %,.0f | %.2fx | %,d us | %d of %d |%n", n,
                    quota, w, w / w1, writeCpu / 1000 / Math.max(1, writes), r, r / r1,
                    readCpu / 1000 / Math.max(1, reads), throttled1[1] - throttled0[1], throttled1[0] - throttled0[0]));
            System.out.println("[scale-out] " + n + " nodes: writes " + (long) w + "/s, reads " + (long) r + "/s"
                    + " (partitions hosted per node during the reads: " + hosted + ")");
        }
        System.out.println(table);
        System.exit(0);
    }

    /**
     * Puts the process into its own cgroup with {@code percent} of one CPU: a CFS quota of that share of each
     * {@code periodMillis} period (a node that spent its quota waits for the next period, and so does every request
     * it serves meanwhile).
     */
    private static void limit(long pid, String group, int percent, int periodMillis) throws IOException {
        Path g = Path.of("/sys/fs/cgroup/cpu", group);
        Files.createDirectories(g);
        Files.writeString(g.resolve("cpu.cfs_quota_us"), "-1"); // the period may only change with no quota below it
        Files.writeString(g.resolve("cpu.cfs_period_us"), Integer.toString(periodMillis * 1000));
        Files.writeString(g.resolve("cpu.cfs_quota_us"), Integer.toString(percent * periodMillis * 10));
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

    /** @return the numbers after {@code prefix} on its line: operations, then CPU nanoseconds */
    private static long[] numbers(String out, String prefix) {
        int i = out.indexOf(prefix);
        if (i < 0) {
            throw new IllegalStateException("no '" + prefix + "' in:\n" + out);
        }
        int j = out.indexOf('\n', i);
        String[] parts = out.substring(i + prefix.length(), j < 0 ? out.length() : j).trim().split(" ");
        return new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1])};
    }

    /** @return CFS periods and periods throttled, summed over the groups of the first {@code n} nodes (cpu.stat) */
    private static long[] throttled(int n) throws IOException {
        long[] sum = new long[2];
        for (int i = 0; i < n; i++) {
            for (String line : Files.readAllLines(Path.of("/sys/fs/cgroup/cpu", "lattice-node-" + i, "cpu.stat"))) {
                String[] kv = line.split(" ");
                if (kv[0].equals("nr_periods")) {
                    sum[0] += Long.parseLong(kv[1]);
                } else if (kv[0].equals("nr_throttled")) {
                    sum[1] += Long.parseLong(kv[1]);
                }
            }
        }
        return sum;
    }
}
