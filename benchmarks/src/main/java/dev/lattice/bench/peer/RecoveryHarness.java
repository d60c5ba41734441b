package dev.lattice.bench.peer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Open/recovery time after N records: a child JVM ({@link RecoveryChild}) loads the records and either closes the
 * store ({@code clean}) or is killed with SIGKILL after the last write returned ({@code crash}); this JVM then times
 * opening the store until it can serve reads (Lattice: {@code Lattice.open} plus the tree's replay; RocksDB:
 * {@code RocksDB.open}, which replays its WAL), and checks that every record is there (count, not timed). The open is
 * timed in this (warm) JVM after an untimed open of a small store of the same kind, so class loading and native
 * library loading are not counted. Not thread-safe.
 */
public final class RecoveryHarness {

    private RecoveryHarness() {
    }

    /**
     * One measurement.
     *
     * @param kind the store
     * @param durability the durability setting of the load
     * @param reopen {@code clean} or {@code crash}
     * @param records records loaded
     * @param openMs time to open until reads are served, milliseconds
     * @param diskBytes bytes of the store's directory before the open
     * @param verified true when the reopened store held exactly {@code records} keys
     * @param replayEntries Lattice: log entries replayed by the open (-1 for RocksDB)
     * @param checkpointBytes Lattice: checkpoint bytes loaded by the open (-1 for RocksDB)
     * @param walBytes RocksDB: bytes of its WAL files ({@code *.log}) before the open (-1 for Lattice)
     */
    public record Result(KvStore.Kind kind, Durability durability, String reopen, int records, double openMs,
                         long diskBytes, boolean verified, long replayEntries, long checkpointBytes, long walBytes) {
    }

    /**
     * Loads in a child JVM and times the open here.
     *
     * @param kind the store
     * @param dir an empty directory for the store (deleted afterwards)
     * @param durability the durability of the load
     * @param crash true to SIGKILL the child instead of closing the store
     * @param records records to load
     * @param valueBytes value size
     * @param partitions Lattice partitions
     * @return the measurement
     * @throws IllegalStateException if the child fails or the store cannot be opened
     */
    public static Result run(KvStore.Kind kind, Path dir, Durability durability, boolean crash, int records,
                             int valueBytes, int partitions) {
        warm(kind, dir.resolveSibling(dir.getFileName() + "-warm"), durability, partitions);
        child(kind, dir, durability, crash, records, valueBytes, partitions);
        long disk = size(dir);
        long wal = kind == KvStore.Kind.ROCKSDB ? walBytes(dir) : -1;
        long t0 = System.nanoTime();
        KvStore store = KvStore.open(kind, dir, durability, partitions);
        double openMs = (System.nanoTime() - t0) / 1e6;
        try {
            dev.lattice.engine.LatticeStats st = store.latticeStats();
            long n = store.count();
            return new Result(kind, durability, crash ? "crash" : "clean", records, openMs, disk, n == records,
                    st == null ? -1 : st.replayEntries(), st == null ? -1 : st.replayCheckpointBytes(), wal);
        } finally {
            store.close();
            delete(dir);
        }
    }

    private static void warm(KvStore.Kind kind, Path dir, Durability durability, int partitions) {
        try {
            try (KvStore s = KvStore.open(kind, dir, durability, partitions)) {
                s.put("warm", new byte[1]);
            }
            try (KvStore s = KvStore.open(kind, dir, durability, partitions)) {
                s.get("warm");
            }
        } catch (Exception e) {
            throw new IllegalStateException("warm-up open of " + kind + " failed: " + e, e);
        } finally {
            delete(dir);
        }
    }

    private static void child(KvStore.Kind kind, Path dir, Durability durability, boolean crash, int records,
                              int valueBytes, int partitions) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("-Dchronicle") || a.startsWith("-Xmx")
                    || a.startsWith("--enable-native-access") || a.startsWith("--sun-misc")) {
                cmd.add(a);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(RecoveryChild.class.getName());
        cmd.addAll(List.of(kind.name().toLowerCase(java.util.Locale.ROOT), dir.toString(), Integer.toString(records),
                Integer.toString(valueBytes), durability == Durability.FSYNC ? "fsync" : "page-cache",
                crash ? "crash" : "clean", Integer.toString(partitions)));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the recovery child JVM", e);
        }
        StringBuilder output = new StringBuilder();
        boolean loaded = false;
        boolean closed = false;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                output.append(line).append('\n');
                if (line.startsWith("LOADED")) {
                    loaded = true;
                    if (crash) {
                        p.destroyForcibly(); // SIGKILL on Linux
                        break;
                    }
                } else if (line.equals("CLOSED")) {
                    closed = true;
                }
            }
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IllegalStateException("recovery child did not exit within 10 minutes");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (!loaded || (!crash && !closed)) {
            throw new IllegalStateException("recovery child failed (exit " + p.exitValue() + "): " + output);
        }
    }

    /**
     * @param dir a directory
     * @return the bytes allocated on disk under it ({@code du -s -B1}; Chronicle's cycle files are sparse, so the
     *     apparent size would over-report), or the sum of apparent file sizes where {@code du} is missing
     */
    static long size(Path dir) {
        try {
            Process p = new ProcessBuilder("du", "-s", "-B1", dir.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (p.waitFor() == 0) {
                return Long.parseLong(out.split("\\s+")[0]);
            }
        } catch (IOException | NumberFormatException e) {
            // fall back below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(f -> {
                try {
                    return Files.size(f);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException e) {
            return -1;
        }
    }

    private static long walBytes(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".log")).mapToLong(f -> {
                try {
                    return Files.size(f);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Deletes a directory tree (no-op when absent).
     *
     * @param dir the directory
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
