package dev.lattice.bench.lsm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Trees larger than memory (issue 17), not part of the product: for each store and record count, a child JVM
 * ({@link LargeTreeChild}) with the given heap loads the records, reads them back and is killed with SIGKILL; a second
 * child with the same heap times the open, reads back again and waits for background compaction to settle. Each
 * child writes a GC log; this JVM reports the peak heap after GC, the directory's disk bytes at each step and the
 * children's measurements.
 *
 * <p>Usage: {@code LargeTreeHarness --work DIR [--records 100000,1000000,2000000] [--stores lattice,rocksdb]
 * [--heap 256m] [--value 1000] [--partitions N] [--uri PROVIDER_URI] [--jfr DIR [--jfr-period-ms 10]]
 * [--open-only true]}. Stores: {@code lattice} (Chronicle, page cache), {@code rocksdb}, and Lattice on a remote
 * provider whose server this JVM starts on 127.0.0.1 through test-backends for the case and stops after it:
 * {@code postgres} (zonky embedded PostgreSQL, {@code fsync=on}, {@code synchronous_commit=on}), {@code dynamodb}
 * (dynalite), {@code azure-tables}, {@code azure-blob} (Azurite, in memory); {@code uri} runs Lattice on
 * {@code --uri}, a server started by the caller. {@code --partitions}: the tree's partitions (default: the engine's).
 * For the remote stores disk is not measured; the server's size is ({@code backend.*}: PostgreSQL's
 * {@code pg_database_size}, the emulator's resident set). {@code --jfr}: the Lattice open child records a JFR
 * profile of the timed open only into {@code DIR/<store>-<records>-open.jfr}, execution samples every
 * {@code --jfr-period-ms} (see {@link LargeTreeChild}); {@code --open-only true}: the open child stops after its
 * check (no settle wait). Prints
 * {@code RESULT store records key=value ...} lines. Not thread-safe.
 */
public final class LargeTreeHarness {

    private static final Pattern GC_AFTER = Pattern.compile("->(\\d+)M\\((\\d+)M\\)");

    private LargeTreeHarness() {
    }

    /**
     * @param args see the class comment
     * @throws IllegalStateException if a child fails (lost data, exception, out of memory)
     * @throws UncheckedIOException if the work directory cannot be created
     */
    public static void main(String[] args) {
        Map<String, String> o = new LinkedHashMap<>(Map.of("--records", "100000,1000000,2000000",
                "--stores", "lattice,rocksdb", "--heap", "256m", "--value", "1000", "--work", "/tmp/large-tree"));
        for (int i = 0; i + 1 < args.length; i += 2) {
            o.put(args[i], args[i + 1]);
        }
        Path work = Path.of(o.get("--work"));
        try {
            Files.createDirectories(work);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + work, e);
        }
        int value = Integer.parseInt(o.get("--value"));
        String partitions = o.getOrDefault("--partitions", "0");
        for (String rec : o.get("--records").split(",")) {
            for (String store : o.get("--stores").split(",")) {
                int n = Integer.parseInt(rec.trim());
                String label = store + "-" + n + (partitions.equals("0") ? "" : "-p" + partitions);
                Path dir = work.resolve(label);
                delete(dir);
                Map<String, String> r = new LinkedHashMap<>();
                r.put("load1", load1());
                Path gcLoad = work.resolve(label + "-load-gc.log");
                Path gcOpen = work.resolve(label + "-open-gc.log");
                try (RemoteBackend backend = RemoteBackend.start(store, o.get("--uri"),
                        label.replaceAll("[^A-Za-z0-9]", ""))) {
                    String uri = backend == null ? "-" : backend.uri();
                    String kind = backend == null ? store : "lattice";
                    if (backend != null) {
                        r.put("backend", backend.toString().replace(' ', '_'));
                        r.put("backendStartLoad1", load1());
                    }
                    child(kind, store, "load", dir, n, value, o.get("--heap"), gcLoad, "load.", r, uri, partitions,
                            List.of());
                    r.put("diskAfterKill", Long.toString(size(dir)));
                    if (backend != null) {
                        r.put("backend.afterKill", Long.toString(backend.bytes()));
                    }
                    List<String> openProps = new ArrayList<>();
                    if (o.containsKey("--jfr")) {
                        openProps.add("-Dlattice.bench.jfr=" + Path.of(o.get("--jfr")).toAbsolutePath()
                                .resolve(label + "-open.jfr"));
                        openProps.add("-Dlattice.bench.jfrPeriodMs=" + o.getOrDefault("--jfr-period-ms", "10"));
                    }
                    if (Boolean.parseBoolean(o.getOrDefault("--open-only", "false"))) {
                        openProps.add("-Dlattice.bench.openOnly=true");
                    }
                    child(kind, store, "open", dir, n, value, o.get("--heap"), gcOpen, "open.", r, uri, partitions,
                            openProps);
                    if (backend != null) {
                        r.put("backend.afterOpen", Long.toString(backend.bytes()));
                    }
                }
                r.put("load.gcPeakAfterMiB", Long.toString(peakAfterGc(gcLoad)));
                r.put("open.gcPeakAfterMiB", Long.toString(peakAfterGc(gcOpen)));
                r.put("load.fullGcs", Long.toString(fullGcs(gcLoad)));
                r.put("load.gcPeakAfterFullMiB", Long.toString(peakAfterFullGc(gcLoad)));
                r.put("open.gcPeakAfterFullMiB", Long.toString(peakAfterFullGc(gcOpen)));
                r.put("load1end", load1());
                StringBuilder sb = new StringBuilder("RESULT " + store + " " + n);
                r.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
                System.out.println(sb);
                System.out.flush();
                delete(dir);
            }
        }
    }

    private static String load1() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException e) {
            return "?";
        }
    }

    private static void child(String kind, String store, String mode, Path dir, int n, int value, String heap,
                              Path gcLog, String prefix, Map<String, String> out, String uri, String partitions,
                              List<String> props) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("-Dchronicle") || a.startsWith("--enable-native-access")
                    || a.startsWith("--sun-misc")) {
                cmd.add(a);
            }
        }
        cmd.add("-Xmx" + heap);
        // the Azure SDK logs each refused conditional write at ERROR; the providers expect some (head races,
        // docs/providers/azure-tables.md "Options")
        cmd.add("-Dorg.slf4j.simpleLogger.log.com.azure=off");
        cmd.add("-Xlog:gc:file=" + gcLog);
        cmd.addAll(props);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(LargeTreeChild.class.getName());
        cmd.addAll(List.of(kind, mode, dir.toString(), Integer.toString(n), Integer.toString(value), uri,
                partitions));
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the child JVM", e);
        }
        long t0 = System.nanoTime();
        boolean done = false;
        StringBuilder log = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                System.out.println("  [" + store + " " + mode + " " + n + "] " + line);
                log.append(line).append('\n');
                if (line.startsWith("M ")) {
                    String[] f = line.split(" ", 3);
                    if (!f[1].endsWith(".stats") && !f[1].endsWith(".levelstats")) {
                        out.put(prefix + f[1], f[2]);
                    }
                } else if (line.startsWith("LOADED")) {
                    out.put(prefix + "diskLoaded", Long.toString(size(dir)));
                    out.put(prefix + "childWallMs", Long.toString((System.nanoTime() - t0) / 1_000_000));
                    p.destroyForcibly(); // SIGKILL
                    done = true;
                    break;
                } else if (line.equals("SETTLED")) {
                    out.put(prefix + "diskSettled", Long.toString(size(dir)));
                } else if (line.equals("CLOSED")) {
                    done = true;
                }
            }
            if (!p.waitFor(30, TimeUnit.MINUTES)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (!done) {
            throw new IllegalStateException(store + " " + mode + " of " + n + " records failed (exit "
                    + p.exitValue() + ")");
        }
        if (mode.equals("open")) {
            out.put(prefix + "diskClosed", Long.toString(size(dir)));
        }
    }

    /**
     * @param gcLog a {@code -Xlog:gc} file
     * @return the number of full collections in it (0 when the log cannot be read)
     */
    static long fullGcs(Path gcLog) {
        try {
            return Files.readAllLines(gcLog).stream().filter(l -> l.contains("Pause Full")).count();
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * @param gcLog a {@code -Xlog:gc} file
     * @return the largest heap occupancy after a full collection, MiB: the live set at its largest sampled point
     *     (-1 when the log has no full collection); a young pause's figure also counts old-generation garbage
     */
    static long peakAfterFullGc(Path gcLog) {
        long peak = -1;
        try {
            for (String line : Files.readAllLines(gcLog)) {
                Matcher m = GC_AFTER.matcher(line);
                if (line.contains("Pause Full") && m.find()) {
                    peak = Math.max(peak, Long.parseLong(m.group(1)));
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return peak;
    }

    /**
     * @param gcLog a {@code -Xlog:gc} file
     * @return the largest heap occupancy after a collection, MiB (-1 when the log has no collection)
     */
    static long peakAfterGc(Path gcLog) {
        long peak = -1;
        try {
            for (String line : Files.readAllLines(gcLog)) {
                Matcher m = GC_AFTER.matcher(line);
                if (m.find()) {
                    peak = Math.max(peak, Long.parseLong(m.group(1)));
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return peak;
    }

    /**
     * @param dir a directory
     * @return the bytes allocated on disk under it ({@code du -s -B1}; Chronicle's cycle files are sparse)
     */
    static long size(Path dir) {
        try {
            Process p = new ProcessBuilder("du", "-s", "-B1", dir.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (p.waitFor() == 0) {
                return Long.parseLong(out.split("\\s+")[0]);
            }
            return -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * Deletes a directory tree (no-op when absent).
     *
     * @param dir the directory
     * @throws UncheckedIOException if a file cannot be deleted
     */
    static void delete(Path dir) {
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
