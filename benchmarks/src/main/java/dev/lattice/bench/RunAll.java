package dev.lattice.bench;

import dev.lattice.bench.atomic.AtomicHarness;
import dev.lattice.bench.jmh.JmhSuite;
import dev.lattice.bench.peer.Durability;
import dev.lattice.bench.peer.PeerComparison;
import dev.lattice.bench.providers.ProviderYcsb;
import dev.lattice.bench.report.Machine;
import dev.lattice.bench.ycsb.YcsbRunner;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * Regenerates every benchmark table and chart ({@code benchmarks/run-all.sh} runs this): the YCSB A-F and RocksDB
 * peer comparison ({@link PeerComparison}), YCSB per provider ({@link ProviderYcsb}), the JMH suite
 * ({@link JmhSuite}), the atomic-write JMH run ({@link JmhSuite} with atomic sizes) and the atomic-write harness on
 * Chronicle ({@link AtomicHarness}). Writes the PNG charts to
 * {@code --img}, each table to {@code --results}, and replaces the text between the markers
 * {@code <!-- generated:NAME:begin -->} and {@code <!-- generated:NAME:end -->} in {@code --docs} (nothing else of
 * that file is touched; a file without the markers is left alone).
 *
 * <p>Options: {@code --full} (full scale: 100k-record YCSB, more direct calls, 3 repeats, longer JMH and atomic
 * runs), {@code --only ycsb,direct,recovery,providers,jmh,atomic-jmh,atomic-chronicle} ({@code peer} = the first
 * three, {@code atomic} = the last two),
 * {@code --recovery-records N}, {@code --docs FILE} (default {@code docs/benchmarks.md}), {@code --img DIR} (default
 * {@code docs/img}), {@code --work DIR} (default {@code benchmarks/target/bench-data}), {@code --results DIR}
 * (default {@code benchmarks/target/results}). Exit code 0, 2 for bad usage, 1 when a benchmark fails.
 */
public final class RunAll {

    /** Warm-up iteration time of the atomic-write JMH run at small scale, milliseconds. */
    private static final int ATOMIC_JMH_WARMUP_MS = 250;
    /** Measured iteration time of the atomic-write JMH run at small scale, milliseconds. */
    private static final int ATOMIC_JMH_MEASURE_MS = 300;

    private RunAll() {
    }

    /**
     * @param args see the class comment
     */
    public static void main(String[] args) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        System.setProperty("java.awt.headless", "true");
        YcsbRunner.quietDbWrapperNotice(true);
        boolean full = false;
        List<String> only = List.of("ycsb", "direct", "recovery", "providers", "jmh", "atomic-jmh",
                "atomic-chronicle");
        Integer recoveryRecords = null;
        Path docs = Path.of("docs/benchmarks.md");
        Path img = Path.of("docs/img");
        Path work = Path.of("benchmarks/target/bench-data");
        Path results = Path.of("benchmarks/target/results");
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--full" -> full = true;
                    case "--only" -> only = parts(args[++i]);
                    case "--recovery-records" -> recoveryRecords = Integer.parseInt(args[++i]);
                    case "--docs" -> docs = Path.of(args[++i]);
                    case "--img" -> img = Path.of(args[++i]);
                    case "--work" -> work = Path.of(args[++i]);
                    case "--results" -> results = Path.of(args[++i]);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (recoveryRecords != null && recoveryRecords < 0) {
                throw new IllegalArgumentException("--recovery-records must be >= 0");
            }
        } catch (RuntimeException e) {
            System.err.println("run-all: " + e.getMessage() + " (options: --full --only "
                    + "ycsb,direct,recovery,providers,jmh,atomic-jmh,atomic-chronicle "
                    + "--recovery-records N --docs F --img D --work D --results D)");
            System.exit(2);
            return;
        }
        String scale = full ? "full" : "small";
        long t0 = System.nanoTime();
        try {
            Files.createDirectories(results);
            if (only.contains("ycsb") || only.contains("direct") || only.contains("recovery")) {
                PeerComparison.Settings s = new PeerComparison.Settings(work, img,
                        only.contains("ycsb") ? List.of("a", "b", "c", "d", "e", "f") : List.of(), List.of(1, 16, 64),
                        full ? 100_000 : 5_000, full ? 100_000 : 10_000, Durability.PAGE_CACHE,
                        only.contains("direct") ? List.of(Durability.PAGE_CACHE, Durability.FSYNC) : List.of(),
                        full ? 200_000 : 100_000, full ? 20_000 : 2_000, full ? 500_000 : 50_000, 1_000,
                        !only.contains("recovery") ? 0
                                : recoveryRecords != null ? recoveryRecords : 1_000_000,
                        8, full ? 3 : 2);
                PeerComparison.Report r = PeerComparison.run(s, RunAll::progress);
                String[][] images = {{"ycsb", "img/peer-ycsb-throughput.png", "YCSB throughput ratio"},
                    {"direct", "img/peer-direct-throughput.png", "Direct put/get ratios"},
                    {"recovery", "img/peer-recovery.png", "Open/recovery time"}};
                for (String[] part : images) {
                    String md = r.parts().get(part[0]);
                    if (md != null) {
                        publish(docs, results, part[0], header(part[0], scale) + md + "\n![" + part[2] + "]("
                                + part[1] + ")\n");
                    }
                }
            }
            if (only.contains("providers")) {
                ProviderYcsb.Settings s = new ProviderYcsb.Settings(work, img, ProviderYcsb.PROVIDERS,
                        List.of("a", "b", "c", "d", "e", "f"), 16, full ? 10_000 : 1_000, full ? 20_000 : 3_000);
                ProviderYcsb.Report r = ProviderYcsb.run(s, RunAll::progress);
                publish(docs, results, "providers", header("providers", scale) + r.markdown()
                        + "\n![YCSB per provider](img/providers-ycsb.png)\n");
            }
            if (only.contains("jmh")) {
                JmhSuite.Settings s = new JmhSuite.Settings(full ? 2 : 1, full ? 5 : 2, full ? 1000 : 500,
                        full ? 10 : 4, full ? 1000 : 500, List.of(1, 2), new ArrayList<>(JmhSuite.OPERATIONS.keySet()),
                        List.of(), 100_000, true, img);
                JmhSuite.Report r = JmhSuite.run(s, RunAll::progress);
                publish(docs, results, "jmh", header("jmh", scale) + r.markdown()
                        + "\n![JMH p50 per operation](img/jmh-p50.png)\n");
            }
            if (only.contains("atomic-jmh")) {
                JmhSuite.Settings s = new JmhSuite.Settings(full ? 2 : 1, full ? 5 : 2, full ? 1000 : ATOMIC_JMH_WARMUP_MS,
                        full ? 10 : 3, full ? 1000 : ATOMIC_JMH_MEASURE_MS, List.of(1, 2), List.of("put"), List.of(2, 16, 64),
                        100_000, true, img);
                JmhSuite.Report r = JmhSuite.run(s, RunAll::progress);
                publish(docs, results, "atomic-jmh", header("atomic-jmh", scale) + r.atomicMarkdown()
                        + "\n![JMH p50 per atomic write](img/jmh-atomic-p50.png)\n");
            }
            if (only.contains("atomic-chronicle")) {
                AtomicHarness.Settings s = new AtomicHarness.Settings(work, img, "chronicle", Durability.PAGE_CACHE,
                        List.of(AtomicHarness.Shape.values()), List.of(2, 16, 64), full ? List.of(1, 8, 64) : List.of(1, 8), full ? 2_000 : 250,
                        full ? 10_000 : 1_000, 100_000, 100);
                AtomicHarness.Report r = AtomicHarness.run(s, RunAll::progress);
                publish(docs, results, "atomic-chronicle", header("atomic-chronicle", scale) + r.markdown()
                        + "\n![Atomic writes on Chronicle, keys per second](img/atomic-chronicle-keys.png)\n");
            }
        } catch (RuntimeException | IOException e) {
            System.err.println("run-all: failed: " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        progress(String.format("done in %.0f s", (System.nanoTime() - t0) / 1e9));
        System.exit(0);
    }

    private static List<String> parts(String arg) {
        List<String> out = new ArrayList<>();
        for (String p : arg.split(",")) {
            switch (p) {
                case "peer" -> out.addAll(List.of("ycsb", "direct", "recovery"));
                case "atomic" -> out.addAll(List.of("atomic-jmh", "atomic-chronicle"));
                case "ycsb", "direct", "recovery", "providers", "jmh", "atomic-jmh", "atomic-chronicle" -> out.add(p);
                default -> throw new IllegalArgumentException("--only takes ycsb, direct, recovery, providers, jmh, "
                        + "atomic-jmh, atomic-chronicle (peer = the first three, atomic = the last two), got " + p);
            }
        }
        return out;
    }

    private static String header(String name, String scale) {
        return "_Generated by `benchmarks/run-all.sh" + (scale.equals("full") ? " --full" : "") + "` on "
                + LocalDate.now(ZoneOffset.UTC) + " (" + scale + " scale, part `" + name + "`)._\n\n";
    }

    private static void progress(String line) {
        System.err.println("run-all: " + line + " (load average " + String.format("%.1f", Machine.loadAverage())
                + ")");
    }

    /**
     * Writes the table to the results directory and between its markers in the docs file.
     *
     * @param docs the docs file (may lack the markers)
     * @param results the results directory
     * @param name the part's name
     * @param md its Markdown
     * @throws UncheckedIOException if a file cannot be written
     */
    static void publish(Path docs, Path results, String name, String md) {
        try {
            Files.writeString(results.resolve(name + ".md"), md, StandardCharsets.UTF_8);
            System.out.println(md);
            if (!Files.exists(docs)) {
                return;
            }
            String text = Files.readString(docs, StandardCharsets.UTF_8);
            String replaced = replaceBetweenMarkers(text, name, md);
            if (replaced == null) {
                progress(docs + " has no generated:" + name + " markers; left unchanged");
                return;
            }
            Files.writeString(docs, replaced, StandardCharsets.UTF_8);
            progress("updated the " + name + " tables in " + docs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param text the document
     * @param name the marker name
     * @param body the new text between the markers
     * @return the document with the text replaced, or null when the markers are missing or out of order
     */
    static String replaceBetweenMarkers(String text, String name, String body) {
        String begin = "<!-- generated:" + name + ":begin -->";
        String end = "<!-- generated:" + name + ":end -->";
        int b = text.indexOf(begin);
        int e = text.indexOf(end);
        if (b < 0 || e < b) {
            return null;
        }
        return text.substring(0, b + begin.length()) + "\n" + body + (body.endsWith("\n") ? "" : "\n")
                + text.substring(e);
    }
}
