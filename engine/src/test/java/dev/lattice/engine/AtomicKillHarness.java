package dev.lattice.engine;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.Providers;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.lattice.engine.AtomicKillTestWriter.CROSS;
import static dev.lattice.engine.AtomicKillTestWriter.CROSS_PARTITIONS;
import static dev.lattice.engine.AtomicKillTestWriter.GROUP_PREFIX;
import static dev.lattice.engine.AtomicKillTestWriter.KINDS;
import static dev.lattice.engine.AtomicKillTestWriter.MULTI;
import static dev.lattice.engine.AtomicKillTestWriter.MULTI_PARTITIONS;
import static dev.lattice.engine.AtomicKillTestWriter.SINGLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The process-kill crash check of atomic writes, shared by the engine's {@link AtomicProcessKillTest} (Chronicle) and
 * the CLI module's {@code AtomicCrashTest} (the remote providers; it reaches this class through the engine's test-jar).
 * Each round starts a child JVM ({@link AtomicKillTestWriter}) on one provider URI, kills it with SIGKILL at a random
 * moment, reopens the store and checks it against every acknowledgement so far:
 * <ul>
 *   <li>replay never fails (the check's open and the next child's open);</li>
 *   <li>every write whose own keys ({@code w<i>-k<j>-..}) are present has all of them, with its values and one
 *       version; every acknowledged write is present, with the version its {@code commit()} returned;</li>
 *   <li>each group of 16 shared keys holds exactly one write's keys (its puts present, its deletes absent, one
 *       version), and that version is at least the highest acknowledged version of a write to the group;</li>
 *   <li>an atomic write over all three trees works after the reopen.</li>
 * </ul>
 * Every third round skips the check after the kill and kills the next child within 300 ms of its open, so the child's
 * own open resolves what the previous kill left prepared and can itself be killed while resolving. A failure writes
 * the WAL after the failed check to {@code wal-after-failure.txt} in the log folder and copies that folder to
 * {@code target/atomic-kill-failures/<time>}.
 *
 * <p>Not thread-safe: one test thread runs it.
 */
public final class AtomicKillHarness {

    /**
     * What a child acknowledged for one write.
     *
     * @param version the version its {@code commit()} returned
     * @param logs how many logs the write touched
     */
    public record Ack(long version, int logs) {
    }

    private final String uri;
    private final Map<String, String> options;
    private final Path logDir;
    private final Random random;
    private final long seed;
    private final long maxDelayMs;
    private final boolean dumpBeforeCheck;
    /** Every acknowledged write of every round so far. */
    private final Map<Long, Ack> acked = new HashMap<>();
    /** Per group: the highest version of an acknowledged write to it, or 0. */
    private final long[] maxAckedGroupVersion = new long[GROUP_PREFIX.length];
    private long totalAcks;
    private long totalResolvedAtOpen;
    /** Acknowledged writes of their own keys in one tree (kind 1) that touched several of its logs. */
    private long multiLogWithinTree;
    private final List<String> summary = new ArrayList<>();

    /**
     * Prepares the rounds; nothing runs until {@link #run(int)}.
     *
     * @param uri the provider URI the child and the checks open
     * @param options provider options (passed to the child as {@code key=value} arguments)
     * @param logDir where the child logs (and WAL dumps) go
     * @param seed seed of the kill delays
     * @param maxDelayMs the longest delay between the child's first acknowledgement and the kill
     * @param dumpBeforeCheck whether to dump the WAL before each check (the state the kill left)
     */
    public AtomicKillHarness(String uri, Map<String, String> options, Path logDir, long seed, long maxDelayMs,
            boolean dumpBeforeCheck) {
        this.dumpBeforeCheck = dumpBeforeCheck;
        this.uri = uri;
        this.options = options;
        this.logDir = logDir;
        this.seed = seed;
        this.random = new Random(seed);
        this.maxDelayMs = maxDelayMs;
    }

    /**
     * Runs the rounds: start a child, kill it, check the store (see the class comment). Prints one line per round
     * and a summary to stdout.
     *
     * @param rounds how many children to start and kill
     * @throws AssertionError if a check fails; the message names the seed, the URI, the rounds so far, the tail of
     *     the child's log and where the WAL dump and the copied log folder are
     * @throws Exception if a child cannot be started or waiting for it is interrupted
     */
    public void run(int rounds) throws Exception {
        System.out.println("atomic kill test on " + uri + ": " + rounds + " rounds, seed " + seed);
        boolean previousChecked = true;
        for (int round = 0; round < rounds; round++) {
            boolean check = round % 3 != 1 || round == rounds - 1;
            // after an unchecked kill, kill the next child within 300 ms of its open: its open resolved the
            // writes the kill left prepared, and its resolve entries may still be in flight
            long delay = previousChecked ? (long) (random.nextDouble() * maxDelayMs) : random.nextInt(300);
            Path log = logDir.resolve("child-round-" + round + ".log");
            try {
                int[] counts = round(round, delay, !previousChecked, log);
                note(String.format("round %d: kill %d ms after %s, %d acknowledged, %d failed", round, delay,
                        previousChecked ? "the first ack" : "READY", counts[0], counts[1]));
                if (check) {
                    if (dumpBeforeCheck) {
                        note("round " + round + ": WAL before the check: "
                                + dumpWal(logDir.resolve("wal-before-check-round-" + round + ".txt")));
                    }
                    note(String.format("round %d: checked; the reopen resolved %d prepared parts (log, write)",
                            round, verify(round)));
                }
            } catch (AssertionError | RuntimeException e) {
                String dump = dumpWal(logDir.resolve("wal-after-failure.txt"));
                throw new AssertionError(e.getMessage() + "\n(seed " + seed + ", " + uri + "; rounds so far:\n"
                        + String.join("\n", summary) + ")\n--- last lines of the child's log of round " + round
                        + " (" + log + "):\n" + tail(log) + "\n--- WAL after the failure: " + dump
                        + "\n--- kept: " + keep(), e);
            }
            previousChecked = check;
        }
        long[] byKind = new long[KINDS];
        acked.keySet().forEach(id -> byKind[(int) (id % KINDS)]++);
        System.out.println("atomic kill test on " + uri + ": " + totalAcks + " acknowledged writes (by kind: "
                + "single-log " + byKind[0] + ", one tree " + byKind[1] + " of which " + multiLogWithinTree
                + " multi-log, cross-tree " + byKind[2] + ", groups " + byKind[3] + "/" + byKind[4] + "/"
                + byKind[5] + "), " + totalResolvedAtOpen + " prepared parts resolved at a checked reopen");
    }

    /** @return every acknowledged write of every round so far, by write id (a read-only view) */
    public Map<Long, Ack> acked() {
        return Collections.unmodifiableMap(acked);
    }

    /** @return how many writes the children acknowledged over all rounds so far */
    public long totalAcks() {
        return totalAcks;
    }

    /** @return acknowledged writes of their own keys in one tree (kind 1) that touched several of its logs */
    public long multiLogWithinTree() {
        return multiLogWithinTree;
    }

    private void note(String line) {
        summary.add(line);
        System.out.println(line);
    }

    /** @return {acks, errs} of the round */
    private int[] round(int round, long delayMs, boolean early, Path log) throws Exception {
        long first = (round + 1) * 10_000_000L;
        Process p = startChild(first, log);
        List<String> lines = new ArrayList<>();
        CountDownLatch ready = new CountDownLatch(1);
        CountDownLatch firstAck = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String l;
                while ((l = out.readLine()) != null) {
                    synchronized (lines) {
                        lines.add(l);
                    }
                    if (l.equals("READY $")) {
                        ready.countDown();
                    } else if (l.startsWith("ACK ")) {
                        firstAck.countDown();
                    }
                }
            } catch (IOException e) {
                synchronized (lines) {
                    lines.add("READ-FAILED " + e);
                }
            }
        }, "child-stdout");
        reader.start();
        try {
            if (!ready.await(180, TimeUnit.SECONDS)) {
                fail("round %d: the child did not open (replay failed or hung?); alive=%s", round, p.isAlive());
            }
            if (!early && !firstAck.await(120, TimeUnit.SECONDS)) {
                fail("round %d: the child acknowledged no write in 120 s; alive=%s", round, p.isAlive());
            }
            Thread.sleep(delayMs); // the random kill point (not a timing assertion)
            assertThat(p.isAlive()).as("round %d: the child died before the kill", round).isTrue();
        } finally {
            // SIGKILL on Linux; unlike Process.destroyForcibly it keeps our pipe open
            p.toHandle().destroyForcibly();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            reader.join(60_000);
        }
        int acks = 0;
        int errs = 0;
        List<String> errors = new ArrayList<>();
        synchronized (lines) {
            for (String l : lines) {
                String[] f = l.split(" ");
                if (l.startsWith("ACK ") && f.length == 5 && f[4].equals("$")) {
                    long id = Long.parseLong(f[1]);
                    Ack a = new Ack(Long.parseLong(f[2]), Integer.parseInt(f[3]));
                    assertThat(id).as("acknowledged id in this round's range").isGreaterThanOrEqualTo(first);
                    checkLogs(id, a);
                    assertThat(acked.put(id, a)).as("write %d acknowledged twice", id).isNull();
                    int g = AtomicKillTestWriter.group(id);
                    if (g >= 0) {
                        maxAckedGroupVersion[g] = Math.max(maxAckedGroupVersion[g], a.version());
                    }
                    acks++;
                } else if (l.startsWith("ERR ") && l.endsWith(" $")) {
                    errs++;
                    errors.add(l);
                } else if (!l.equals("READY $") && !l.isEmpty() && !l.startsWith("ACK ") && !l.startsWith("ERR ")) {
                    fail("round %d: unexpected child output: %s", round, l);
                }
                // an ACK or ERR line cut by the kill (no closing $) counts as not acknowledged
            }
        }
        totalAcks += acks;
        assertThat(errors).as("round %d: commits failed in the child (no fault was injected)", round).isEmpty();
        return new int[] {acks, errs};
    }

    private void checkLogs(long id, Ack a) {
        int kind = (int) (id % KINDS);
        if (kind == 0 || kind == 3) {
            assertThat(a.logs()).as("write %d (one tree of 1 partition) touched one log", id).isEqualTo(1);
        } else if (kind == 2 || kind == 5) {
            assertThat(a.logs()).as("write %d (two or three trees) touched several logs", id).isGreaterThan(1);
        } else {
            // 8-16 keys of one tree: several logs unless the hash put them all in one partition
            assertThat(a.logs()).as("write %d", id).isBetween(1, MULTI_PARTITIONS);
            if (kind == 1 && a.logs() > 1) {
                multiLogWithinTree++;
            }
        }
    }

    private Process startChild(long firstId, Path log) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("--add-opens") || arg.startsWith("--add-exports") || arg.startsWith("-Dchronicle")) {
                cmd.add(arg);
            }
        }
        cmd.add("-Xmx256m");
        // which prepared writes the child's open resolves, and how (INFO lines of AtomicWrites)
        cmd.add("-Dorg.slf4j.simpleLogger.log.dev.lattice.engine.AtomicWrites=info");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(AtomicKillTestWriter.class.getName());
        cmd.add(uri);
        cmd.add(Long.toString(firstId));
        options.forEach((k, v) -> cmd.add(k + "=" + v));
        return new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    }

    /**
     * Reopens the store and checks it against every acknowledgement so far.
     *
     * @return the prepared parts of atomic writes (one per log and write) the reopen found and resolved
     */
    private long verify(int round) {
        try (Lattice l = Lattice.open(LatticeConfig.builder().uri(uri).providerOptions(options).build())) {
            Map<String, Tree> trees = new LinkedHashMap<>();
            trees.put(SINGLE, l.tree(SINGLE, 1));
            trees.put(MULTI, l.tree(MULTI, MULTI_PARTITIONS));
            trees.put(CROSS, l.tree(CROSS, CROSS_PARTITIONS));
            assertThat(trees.get(SINGLE).partitions()).isEqualTo(1);
            assertThat(trees.get(MULTI).partitions()).isEqualTo(MULTI_PARTITIONS);
            assertThat(trees.get(CROSS).partitions()).isEqualTo(CROSS_PARTITIONS);
            String ctx = "round " + round + " (seed " + seed + ", " + uri + ")";
            // every key of every tree, by scan
            Map<Long, Map<String, TreeEntry>> own = new TreeMap<>();
            Map<String, TreeEntry> groups = new TreeMap<>();
            trees.forEach((name, t) -> {
                try (ScanCursor c = t.scan(null, null, false)) {
                    while (c.hasNext()) {
                        TreeEntry e = c.next();
                        String k = e.key();
                        if (k.startsWith("w")) {
                            long id = Long.parseLong(k.substring(1, k.indexOf('-')));
                            own.computeIfAbsent(id, x -> new TreeMap<>()).put(name + "/" + k, e);
                        } else if (k.startsWith("g")) {
                            groups.put(name + "/" + k, e);
                        } else {
                            fail("%s: unexpected key %s/%s", ctx, name, k);
                        }
                    }
                }
            });
            // 1. writes of their own keys: all or nothing, acknowledged ones all
            own.forEach((id, seen) -> {
                Set<String> expected = flatten(AtomicKillTestWriter.plan(id));
                Ack ack = acked.get(id);
                String acks = ack == null ? "not acknowledged" : "acknowledged with version " + ack.version();
                assertThat(seen.keySet()).as("%s: write %d (%s) is partially present (%d of %d keys)", ctx, id,
                        acks, seen.size(), expected.size()).isEqualTo(expected);
                long version = sameVersion(ctx, "write " + id, seen);
                seen.forEach((tk, e) -> assertThat(new String(e.value(), StandardCharsets.UTF_8))
                        .as("%s: value of %s", ctx, tk).isEqualTo(id + "/" + e.key()));
                Ack a = acked.get(id);
                if (a != null) {
                    assertThat(version).as("%s: version of acknowledged write %d", ctx, id).isEqualTo(a.version());
                }
            });
            acked.forEach((id, a) -> {
                if (AtomicKillTestWriter.group(id) < 0) {
                    assertThat(own).as("%s: acknowledged write %d (version %d) is missing", ctx, id,
                            a.version()).containsKey(id);
                }
            });
            // 2. groups: one write's keys, not older than the newest acknowledged write to the group
            for (int g = 0; g < GROUP_PREFIX.length; g++) {
                checkGroup(ctx, g, groups, trees);
            }
            // 3. writing still works: one atomic write over the three trees, then its atomic delete
            AtomicWrite w = l.atomic();
            AtomicWrite d = l.atomic();
            Map<String, List<String>> afterKeys = new LinkedHashMap<>();
            trees.forEach((name, t) -> {
                List<String> ks = new ArrayList<>();
                for (int j = 0; j < 6; j++) {
                    String k = "after-" + round + "-" + j;
                    ks.add(k);
                    w.put(t, k, AtomicKillTestWriter.value(round, k));
                    d.delete(t, k);
                }
                afterKeys.put(name, ks);
            });
            AtomicResult r = w.commit();
            assertThat(r.logs()).isGreaterThanOrEqualTo(3);
            afterKeys.forEach((name, ks) -> {
                Tree t = trees.get(name);
                for (String k : ks) {
                    assertThat(t.getVersioned(k)).as("%s: %s/%s written after the reopen", ctx, name, k)
                            .hasValueSatisfying(v -> assertThat(v.version()).isEqualTo(r.version()));
                }
            });
            d.commit();
            afterKeys.forEach((name, ks) -> assertThat(trees.get(name).getAll(ks)).isEmpty());
            long resolved = (long) l.meterRegistry().get("lattice.atomic.resolved.at.open").counter().count();
            totalResolvedAtOpen += resolved;
            return resolved;
        }
    }

    private void checkGroup(String ctx, int g, Map<String, TreeEntry> scanned, Map<String, Tree> trees) {
        Map<String, TreeEntry> seen = new TreeMap<>();
        AtomicKillTestWriter.groupKeys(g).forEach((name, ks) -> {
            for (String k : ks) {
                TreeEntry e = scanned.get(name + "/" + k);
                Versioned v = trees.get(name).getVersioned(k).orElse(null);
                // a point read agrees with the scan
                assertThat(v == null ? null : v.version()).as("%s: point read of %s/%s vs scan", ctx, name, k)
                        .isEqualTo(e == null ? null : e.version());
                if (e != null) {
                    seen.put(name + "/" + k, e);
                }
            }
        });
        String label = "group " + GROUP_PREFIX[g];
        if (seen.isEmpty()) {
            assertThat(maxAckedGroupVersion[g]).as("%s: %s is empty but a write to it was acknowledged", ctx, label)
                    .isZero();
            return;
        }
        Set<Long> ids = new TreeSet<>();
        seen.values().forEach(e -> {
            String v = new String(e.value(), StandardCharsets.UTF_8);
            assertThat(v).as("%s: value of %s", ctx, e.key()).endsWith("/" + e.key());
            ids.add(Long.parseLong(v.substring(0, v.indexOf('/'))));
        });
        assertThat(ids).as("%s: %s holds keys of several writes (a write is partially present)",
                ctx, label).hasSize(1);
        long id = ids.iterator().next();
        assertThat(AtomicKillTestWriter.group(id)).as("%s: %s holds write %d", ctx, label, id).isEqualTo(g);
        Set<String> expected = new TreeSet<>();
        AtomicKillTestWriter.groupKeys(g).forEach((name, ks) -> {
            for (int j = 0; j < ks.size(); j++) {
                String k = ks.get(j);
                int index = Integer.parseInt(k.substring(GROUP_PREFIX[g].length()));
                if (!AtomicKillTestWriter.deletedInGroup(id, index)) {
                    expected.add(name + "/" + k);
                }
            }
        });
        assertThat(seen.keySet()).as("%s: %s holds write %d partially (its puts present, its deletes absent)",
                ctx, label, id).isEqualTo(expected);
        long version = sameVersion(ctx, label, seen);
        assertThat(version).as("%s: %s holds write %d (version %d), older than an acknowledged write to it",
                ctx, label, id, version)
                .isGreaterThanOrEqualTo(maxAckedGroupVersion[g]);
        Ack a = acked.get(id);
        if (a != null) {
            assertThat(version).as("%s: version of acknowledged write %d", ctx, id).isEqualTo(a.version());
        }
    }

    private static long sameVersion(String ctx, String what, Map<String, TreeEntry> seen) {
        Set<Long> versions = new TreeSet<>();
        seen.values().forEach(e -> versions.add(e.version()));
        assertThat(versions).as("%s: %s carries one version", ctx, what).hasSize(1);
        return versions.iterator().next();
    }

    private static Set<String> flatten(Map<String, List<String>> plan) {
        Set<String> s = new TreeSet<>();
        plan.forEach((name, ks) -> ks.forEach(k -> s.add(name + "/" + k)));
        return s;
    }

    /**
     * Writes every log of the store to a file, read straight from the provider (no claim, no replay): its state,
     * its latest checkpoint (bytes in Base64) and every retained entry (payload in Base64, as the engine encoded
     * it).
     *
     * @param file the file to write
     * @return the file, or why it could not be written
     */
    private String dumpWal(Path file) {
        try (WalStorageProvider p = Providers.open(URI.create(uri), options);
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            Base64.Encoder b64 = Base64.getEncoder();
            for (String tree : p.trees()) {
                for (LogId log : p.logs(tree)) {
                    LogState state = p.state(log);
                    out.println("log " + log + " " + state);
                    Optional<CheckpointInfo> cp = p.checkpoints().latest(log);
                    if (cp.isPresent()) {
                        try (InputStream in = p.checkpoints().open(log, cp.get())) {
                            out.println("checkpoint " + cp.get() + " " + b64.encodeToString(in.readAllBytes()));
                        }
                    }
                    long from = state.trimWatermark();
                    while (true) {
                        ReadPage page = p.read(log, from, 1000, 8L << 20);
                        if (page.isEmpty()) {
                            break;
                        }
                        for (LogEntry e : page.entries()) {
                            out.println("entry " + e.offset() + " " + b64.encodeToString(e.payload()));
                        }
                        from = page.nextFromExclusive(from);
                    }
                }
            }
            if (out.checkError()) {
                return "not written (an I/O error while writing " + file + ")";
            }
        } catch (IOException | RuntimeException e) {
            return "not written (" + e + ")";
        }
        try {
            return file + " (" + Files.size(file) + " bytes)";
        } catch (IOException e) {
            return file + " (" + e + ")";
        }
    }

    /**
     * Copies the log folder (child logs and, for a local provider, the data) to
     * {@code target/atomic-kill-failures/<time>} so a failure can be examined after the temporary folder is gone.
     *
     * @return where it was copied, or why it was not
     */
    private String keep() {
        Path to = Path.of("target", "atomic-kill-failures", Long.toString(System.currentTimeMillis()))
                .toAbsolutePath();
        try (var files = Files.walk(logDir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(logDir.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
            return to.toString();
        } catch (IOException | RuntimeException e) {
            return "nothing (" + e + ")";
        }
    }

    /** @return the last 150 lines of a child's log, for a failure message */
    static String tail(Path log) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - 150), all.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
