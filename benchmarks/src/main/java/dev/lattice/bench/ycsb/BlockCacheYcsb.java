package dev.lattice.bench.ycsb;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * YCSB read workloads on a data set larger than the block cache (issue 17: "YCSB C and B at 16 threads on 2 GB with a
 * 64 MiB block cache"), not part of the product. Loads {@code --records} YCSB records (10 fields of 100 bytes, 1,081
 * bytes in {@link FieldCodec}) with YCSB's load phase into Lattice on Chronicle ({@code durability=process}) and into
 * RocksDB (WAL on, {@code sync=false}), each in a child JVM ({@link BlockCacheYcsbChild}) with heap {@code --heap} and
 * a block cache of {@code --cache-mib} (Lattice {@code blockCacheBytes}; RocksDB one {@code LRUCache} in
 * {@code BlockBasedTableConfig}, Bloom filter of {@code --bloom} bits per key, Lattice's own is 10), waits until the
 * store's flushes and compactions are idle and closes it. Then for each repetition and workload it runs the workload
 * against each store, the two back to back in a fresh child JVM each (open, {@code --warmup} operations not reported,
 * {@code --operations} measured), alternating which store goes first from one pair to the next. The OS page cache is
 * shared by both stores (the machine's memory holds both data sets).
 *
 * <p>Usage: {@code BlockCacheYcsb --work DIR [--records 2000000] [--operations 500000] [--warmup 100000]
 * [--threads 16] [--workloads c,b] [--reps 2] [--heap 256m] [--cache-mib 64] [--bloom 10] [--settle 10]
 * [--lattice-block-bytes 0] [--out FILE.md] [--keep true] [--jfr LABEL [--jfr-settings profile|FILE.jfc]]}
 * ({@code --lattice-block-bytes}: Lattice's {@code runBlockBytes}, 0 = its default; {@code --jfr}: a JFR recording
 * of every child whose label, e.g. "lattice c", contains LABEL, with the named JFR settings). Prints each child's lines, {@code RESULT} lines, and a Markdown table (also written
 * to {@code --out}). Not thread-safe.
 */
public final class BlockCacheYcsb {

    private static final List<String> STORES = List.of("lattice", "rocksdb");

    private BlockCacheYcsb() {
    }

    /**
     * @param args see the class comment
     * @throws IllegalStateException if a child fails
     * @throws UncheckedIOException if the work directory cannot be created or the table written
     */
    public static void main(String[] args) {
        Map<String, String> o = new LinkedHashMap<>(Map.of("--records", "2000000", "--operations", "500000",
                "--warmup", "100000", "--threads", "16", "--workloads", "c,b", "--reps", "2", "--heap", "256m",
                "--cache-mib", "64", "--bloom", "10", "--work", "/tmp/block-cache-ycsb"));
        o.put("--settle", "10");
        o.put("--lattice-block-bytes", "0"); // 0: the run store's preferred read size (4 KiB on Chronicle)
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got '" + args[i] + "'");
            }
            o.put(args[i], args[i + 1]);
        }
        Path work = Path.of(o.get("--work"));
        try {
            Files.createDirectories(work);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + work, e);
        }
        String records = o.get("--records");
        long cacheBytes = Long.parseLong(o.get("--cache-mib")) << 20;
        String started = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        String loadStart = loadavg();
        Map<String, Map<String, String>> loads = new LinkedHashMap<>();
        for (String store : STORES) {
            Path dir = work.resolve(store + "-" + records);
            delete(dir);
            Map<String, String> r = new LinkedHashMap<>();
            r.put("load1", load1());
            child(o, List.of("mode=load", "store=" + store, "dir=" + dir, "records=" + records,
                    "threads=" + o.get("--threads"), "cacheBytes=" + cacheBytes, "bloomBits=" + o.get("--bloom"),
                    "settleSeconds=" + o.get("--settle"), "latticeBlockBytes=" + o.get("--lattice-block-bytes")),
                    store + " load", r);
            r.put("diskBytes", Long.toString(size(dir)));
            r.put("load1end", load1());
            loads.put(store, r);
            print("RESULT load " + store, r);
        }
        String[] workloads = o.get("--workloads").split(",");
        int reps = Integer.parseInt(o.get("--reps"));
        List<Map<String, String>> runs = new ArrayList<>();
        for (int rep = 0; rep < reps; rep++) {
            for (int wi = 0; wi < workloads.length; wi++) {
                String w = workloads[wi].trim().toLowerCase(Locale.ROOT);
                List<String> order = (rep + wi) % 2 == 0 ? STORES : List.of(STORES.get(1), STORES.get(0));
                for (int k = 0; k < order.size(); k++) {
                    String store = order.get(k);
                    Path dir = work.resolve(store + "-" + records);
                    Map<String, String> r = new LinkedHashMap<>();
                    r.put("store", store);
                    r.put("workload", w);
                    r.put("rep", Integer.toString(rep));
                    r.put("position", Integer.toString(k));
                    r.put("load1", load1());
                    child(o, List.of("mode=run", "store=" + store, "dir=" + dir, "records=" + records,
                            "threads=" + o.get("--threads"), "cacheBytes=" + cacheBytes,
                            "bloomBits=" + o.get("--bloom"), "workload=" + w, "warmup=" + o.get("--warmup"),
                            "operations=" + o.get("--operations"),
                            "latticeBlockBytes=" + o.get("--lattice-block-bytes")), store + " " + w + " #" + rep, r);
                    r.put("load1end", load1());
                    runs.add(r);
                    print("RESULT run", r);
                }
            }
        }
        String loadEnd = loadavg();
        String table = table(o, started, loadStart, loadEnd, loads, runs, workloads, reps);
        System.out.println(table);
        if (o.containsKey("--out")) {
            try {
                Files.writeString(Path.of(o.get("--out")), table);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + o.get("--out"), e);
            }
        }
        if (!Boolean.parseBoolean(o.getOrDefault("--keep", "false"))) {
            for (String store : STORES) {
                delete(work.resolve(store + "-" + records));
            }
        }
    }

    private static void print(String head, Map<String, String> r) {
        StringBuilder sb = new StringBuilder(head);
        r.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
        System.out.println(sb);
        System.out.flush();
    }

    /** The Markdown report: loads, then one row per workload (medians over the pairs), then every pair. */
    static String table(Map<String, String> o, String started, String loadStart, String loadEnd,
                        Map<String, Map<String, String>> loads, List<Map<String, String>> runs, String[] workloads,
                        int reps) {
        StringBuilder t = new StringBuilder();
        t.append(String.format(Locale.ROOT, "Started %s; %s records, %s client threads, %s measured operations "
                        + "after %s of warm-up per run, block cache %s MiB, child heap -Xmx%s, RocksDB Bloom %s bits "
                        + "per key; %d pair(s) per workload. Load average (1, 5, 15 min) %s at the start, %s at the "
                        + "end.%n%n", started, o.get("--records"), o.get("--threads"), o.get("--operations"),
                o.get("--warmup"), o.get("--cache-mib"), o.get("--heap"), o.get("--bloom"), reps, loadStart,
                loadEnd));
        t.append("| load | Lattice | RocksDB |\n|---|---:|---:|\n");
        row(t, "YCSB load, ops/s (16 threads)", loads, "load.throughput");
        row(t, "load wall time, s", loads, "load.runtimeMs", 1e-3);
        row(t, "wait until background work idle, s", loads, "settleMs", 1e-3);
        row(t, "disk after the load and close, MiB", loads, "diskBytes", 1.0 / (1 << 20));
        row(t, "runs (Lattice, after the load)", loads, "load.liveRuns");
        row(t, "GC pauses / total ms in the load", loads, "load.gcCount", "load.gcMs");
        row(t, "load average at start / end", loads, "load1", "load1end");
        t.append('\n');
        t.append("| workload | throughput Lattice/RocksDB (median) | range | Lattice ops/s | RocksDB ops/s "
                + "| op | p50 us Lattice / RocksDB | p99 us Lattice / RocksDB | Lattice run-store reads per get "
                + "| Lattice block cache hit ratio | RocksDB data-block misses per get | RocksDB block cache hit "
                + "ratio | CPU cores Lattice / RocksDB |\n");
        t.append("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String w0 : workloads) {
            String w = w0.trim().toLowerCase(Locale.ROOT);
            List<Map<String, String>> lat = pick(runs, w, "lattice");
            List<Map<String, String>> rocks = pick(runs, w, "rocksdb");
            double[] ratios = new double[Math.min(lat.size(), rocks.size())];
            for (int i = 0; i < ratios.length; i++) {
                ratios[i] = d(lat.get(i), "throughput") / d(rocks.get(i), "throughput");
            }
            List<String> ops = new ArrayList<>();
            for (String op : List.of("READ", "UPDATE")) {
                if (lat.stream().anyMatch(m -> m.containsKey(op + ".p50Us"))) {
                    ops.add(op);
                }
            }
            for (int k = 0; k < ops.size(); k++) {
                String op = ops.get(k);
                if (k == 0) {
                    t.append(String.format(Locale.ROOT, "| %s | **%.2fx** | %.2f-%.2f | %,.0f | %,.0f ",
                            w.toUpperCase(Locale.ROOT), median(ratios), min(ratios), max(ratios),
                            median(col(lat, "throughput")), median(col(rocks, "throughput"))));
                } else {
                    t.append("| | | | | ");
                }
                t.append(String.format(Locale.ROOT, "| %s | %,.0f / %,.0f | %,.0f / %,.0f ", op,
                        median(col(lat, op + ".p50Us")), median(col(rocks, op + ".p50Us")),
                        median(col(lat, op + ".p99Us")), median(col(rocks, op + ".p99Us"))));
                if (k == 0) {
                    t.append(String.format(Locale.ROOT, "| %.3f | %.3f | %.3f | %.3f | %.2f / %.2f |%n",
                            median(col(lat, "runReadsPerGet")), median(col(lat, "blockCacheHitRatio")),
                            median(col(rocks, "dataBlockReadsPerGet")), median(col(rocks, "blockCacheHitRatio")),
                            median(col(lat, "cpuCores")), median(col(rocks, "cpuCores"))));
                } else {
                    t.append("| | | | | |\n");
                }
            }
        }
        t.append("\nEvery run (in the order run):\n\n| pair | workload | store | ops/s | READ p50 / p99 us "
                + "| UPDATE p99 us | reads per get: run store (Lattice) or data-block misses (RocksDB) "
                + "| block lookups per get | block cache hit ratio | flushes / compactions in the run | GC pauses / ms "
                + "| load average start-end |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Map<String, String> r : runs) {
            boolean lattice = r.get("store").equals("lattice");
            t.append(String.format(Locale.ROOT, "| %d | %s | %s | %,.0f | %,.0f / %,.0f | %s | %.3f | %s | %.3f | %s "
                            + "| %s / %s | %s-%s |%n",
                    Integer.parseInt(r.get("rep")) + 1, r.get("workload").toUpperCase(Locale.ROOT),
                    lattice ? "Lattice" : "RocksDB", d(r, "throughput"), d(r, "READ.p50Us"), d(r, "READ.p99Us"),
                    r.containsKey("UPDATE.p99Us") ? String.format(Locale.ROOT, "%,.0f", d(r, "UPDATE.p99Us")) : "-",
                    d(r, lattice ? "runReadsPerGet" : "dataBlockReadsPerGet"),
                    r.getOrDefault("blockLookupsPerGet", "-"), d(r, "blockCacheHitRatio"),
                    lattice ? r.get("flushes") + " / " + r.get("compactions") : "-",
                    r.get("gcCount"), r.get("gcMs"), r.get("load1"), r.get("load1end")));
        }
        return t.toString();
    }

    private static void row(StringBuilder t, String label, Map<String, Map<String, String>> loads, String key,
                            double scale) {
        t.append("| ").append(label);
        for (String s : STORES) {
            String v = loads.get(s).get(key);
            t.append(" | ").append(v == null ? "-" : String.format(Locale.ROOT, "%,.1f", Double.parseDouble(v) * scale));
        }
        t.append(" |\n");
    }

    private static void row(StringBuilder t, String label, Map<String, Map<String, String>> loads, String key) {
        row(t, label, loads, key, 1);
    }

    private static void row(StringBuilder t, String label, Map<String, Map<String, String>> loads, String k1,
                            String k2) {
        t.append("| ").append(label);
        for (String s : STORES) {
            t.append(" | ").append(loads.get(s).getOrDefault(k1, "-")).append(" / ")
                    .append(loads.get(s).getOrDefault(k2, "-"));
        }
        t.append(" |\n");
    }

    private static List<Map<String, String>> pick(List<Map<String, String>> runs, String w, String store) {
        return runs.stream().filter(r -> r.get("workload").equals(w) && r.get("store").equals(store)).toList();
    }

    private static double d(Map<String, String> r, String key) {
        String v = r.get(key);
        return v == null ? Double.NaN : Double.parseDouble(v);
    }

    private static double[] col(List<Map<String, String>> rs, String key) {
        return rs.stream().mapToDouble(r -> d(r, key)).toArray();
    }

    static double median(double[] v) {
        if (v.length == 0) {
            return Double.NaN;
        }
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }

    private static String load1() {
        return loadavg().split(" ")[0];
    }

    private static String loadavg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    private static void child(Map<String, String> o, List<String> args, String label, Map<String, String> out) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("-Dchronicle") || a.startsWith("--enable-native-access")) {
                cmd.add(a);
            }
        }
        cmd.add("-Xmx" + o.get("--heap"));
        if (o.containsKey("--jfr") && label.contains(o.get("--jfr"))) {
            cmd.add("-XX:StartFlightRecording=filename=" + Path.of(o.get("--work"),
                    label.replaceAll("[^A-Za-z0-9]", "_") + ".jfr") + ",settings="
                    + o.getOrDefault("--jfr-settings", "profile"));
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(BlockCacheYcsbChild.class.getName());
        cmd.addAll(args);
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the child JVM", e);
        }
        long t0 = System.nanoTime();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                System.out.println("  [" + label + "] " + line);
                System.out.flush();
                if (line.startsWith("M ")) {
                    String[] f = line.split(" ", 3);
                    out.put(f[1], f.length > 2 ? f[2] : "");
                }
            }
            if (!p.waitFor(2, TimeUnit.HOURS)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        out.put("childWallMs", Long.toString((System.nanoTime() - t0) / 1_000_000));
        if (p.exitValue() != 0) {
            throw new IllegalStateException(label + " failed (exit " + p.exitValue() + ")");
        }
    }

    /**
     * @param dir a directory
     * @return bytes allocated under it ({@code du -s -B1}), -1 if unknown
     */
    static long size(Path dir) {
        try {
            Process p = new ProcessBuilder("du", "-s", "-B1", dir.toString()).redirectErrorStream(true).start();
            String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return p.waitFor() == 0 ? Long.parseLong(s.split("\\s+")[0]) : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }
}
