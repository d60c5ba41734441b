package dev.lattice.engine;

import dev.lattice.engine.feed.Change;
import dev.lattice.engine.feed.ChangeCursor;
import dev.lattice.engine.feed.ChangePosition;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The change feed under process kills: a child JVM ({@link FeedKillTestWriter}) writes until it is killed with
 * SIGKILL at a random moment; a registered consumer {@code c} is restarted at random points (it closes its lattice
 * without committing what it read since its last commit, and resumes from its stored position). At the end the
 * consumer's sequence per partition (what it processed up to each commit) must equal the log's, decoded here
 * independently with {@link WalRecord#decode} (multi-log writes at their PREPARE with the outcome's version, aborted
 * ones absent): same entries, same order, no gap, no duplicate. A second registered consumer that never moves keeps
 * the whole log for that comparison. With {@code concurrent} the consumer runs while the child writes (a backend
 * several processes share, e.g. PostgreSQL), else between the rounds (Chronicle: one process at a time).
 *
 * <p>Used by {@code FeedProcessKillTest} (Chronicle) and the CLI module's {@code FeedCrashTest} (PostgreSQL).
 */
public final class FeedKillHarness {

    private final String uri;
    private final Map<String, String> options;
    private final Path dir;
    private final long seed;
    private final long maxDelayMs;
    private final boolean concurrent;
    private final Random rnd;
    /** What the consumer processed, per partition, in order. */
    private final Map<Integer, List<Change>> seen = new TreeMap<>();
    private int sessions;
    private int commits;

    /**
     * @param uri the provider URI
     * @param options provider options
     * @param dir where child logs go
     * @param seed random seed (printed)
     * @param maxDelayMs the longest a child writes before it is killed
     * @param concurrent whether the consumer runs while the child writes
     */
    public FeedKillHarness(String uri, Map<String, String> options, Path dir, long seed, long maxDelayMs,
                           boolean concurrent) {
        this.uri = uri;
        this.options = options;
        this.dir = dir;
        this.seed = seed;
        this.maxDelayMs = maxDelayMs;
        this.concurrent = concurrent;
        this.rnd = new Random(seed);
        System.out.println("FeedKillHarness seed " + seed + " on " + uri);
    }

    private Lattice open() {
        return Lattice.open(LatticeConfig.builder().uri(uri).providerOptions(options).build());
    }

    /**
     * Runs the rounds and the final check.
     *
     * @param rounds child JVMs started and killed
     * @return changes the consumer ended with
     * @throws Exception if a child cannot be started or the check fails
     */
    public int run(int rounds) throws Exception {
        for (int p = 0; p < FeedKillTestWriter.PARTITIONS; p++) {
            seen.put(p, new ArrayList<>());
        }
        try (Lattice l = open()) {
            Tree t = l.tree(FeedKillTestWriter.TREE, FeedKillTestWriter.PARTITIONS);
            l.tree(FeedKillTestWriter.OTHER, 2);
            t.changes("c", ChangePosition.beginning()).close();
            t.changes("keep", ChangePosition.beginning()).close(); // holds the whole log for the check
        }
        for (int round = 0; round < rounds; round++) {
            Process child = startChild(round);
            CountDownLatch ready = new CountDownLatch(1);
            Thread out = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream()))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        if (line.startsWith("READY")) {
                            ready.countDown();
                        }
                    }
                } catch (IOException e) {
                    // the child died
                }
            });
            out.start();
            assertThat(ready.await(60, TimeUnit.SECONDS)).as("child of round %d ready (see %s)", round,
                    dir.resolve("feed-child-" + round + ".log")).isTrue();
            long delay = 100 + (long) (rnd.nextDouble() * maxDelayMs);
            if (concurrent) {
                AtomicBoolean stop = new AtomicBoolean();
                AtomicReference<Throwable> failed = new AtomicReference<>();
                Thread consumer = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            session(new Random(rnd.nextLong()), 1 + rnd.nextInt(60));
                        }
                    } catch (Throwable e) {
                        failed.set(e);
                    }
                });
                synchronized (this) {
                    consumer.start();
                }
                Thread.sleep(delay);
                child.destroyForcibly();
                child.waitFor();
                stop.set(true);
                consumer.join();
                if (failed.get() != null) {
                    throw new AssertionError("consumer failed in round " + round, failed.get());
                }
            } else {
                Thread.sleep(delay);
                child.destroyForcibly();
                child.waitFor();
            }
            out.join();
            for (int s = 0, n = 1 + rnd.nextInt(3); s < n; s++) {
                session(rnd, 1 + rnd.nextInt(150));
            }
        }
        return verify();
    }

    /**
     * One consumer life: open, resume from the stored position (dropping what was processed after it), read some
     * batches committing now and then, close without a final commit.
     */
    private synchronized void session(Random r, int batches) {
        sessions++;
        try (Lattice l = open();
             ChangeCursor c = l.changes(FeedKillTestWriter.TREE, "c", ChangePosition.beginning())) {
            resumeAt(c.position());
            for (int i = 0; i < batches; i++) {
                record(c.poll(Duration.ofMillis(1 + r.nextInt(30))));
                if (r.nextInt(5) == 0) {
                    c.commit();
                    commits++;
                }
            }
        }
    }

    private void resumeAt(ChangePosition stored) {
        seen.forEach((p, list) -> list.removeIf(x -> x.offset() > stored.offset(p)));
    }

    private void record(List<Change> batch) {
        for (Change x : batch) {
            List<Change> list = seen.get(x.partition());
            if (!list.isEmpty()) {
                Change last = list.get(list.size() - 1);
                assertThat(x.offset()).as("partition %d after %s", x.partition(), last)
                        .isGreaterThanOrEqualTo(last.offset());
            }
            list.add(x);
        }
    }

    private int verify() {
        try (Lattice l = open()) {
            Tree t = l.tree(FeedKillTestWriter.TREE, FeedKillTestWriter.PARTITIONS); // resolves what a kill left
            l.tree(FeedKillTestWriter.OTHER, 2);
            ((TreeImpl) t).flushNow(30_000);
            try (ChangeCursor c = t.changes("c", ChangePosition.beginning())) {
                resumeAt(c.position());
                while (true) {
                    List<Change> b = c.poll(Duration.ofMillis(500));
                    if (b.isEmpty()) {
                        break;
                    }
                    record(b);
                }
                c.commit();
            }
            WalStorageProvider p = l.provider();
            int total = 0;
            for (int part = 0; part < FeedKillTestWriter.PARTITIONS; part++) {
                List<String> expected = expected(p, new LogId(FeedKillTestWriter.TREE, part));
                List<String> got = new ArrayList<>();
                for (Change x : seen.get(part)) {
                    got.add(describe(x.offset(), x.kind() == Change.Kind.PUT ? "P" : "D", x.key(), x.version(),
                            x.value()));
                }
                assertThat(got).as("partition %d (seed %d, %d sessions, %d commits)", part, seed, sessions, commits)
                        .isEqualTo(expected);
                total += got.size();
            }
            Map<String, FeedChecks.Val> model = new TreeMap<>();
            List<Change> all = new ArrayList<>();
            seen.values().forEach(all::addAll);
            FeedChecks.apply(model, new HashMap<>(), all);
            FeedChecks.assertSameState(model, FeedChecks.scan(t));
            System.out.println("FeedKillHarness: " + total + " changes, " + sessions + " consumer sessions, "
                    + commits + " commits");
            assertThat(total).isPositive();
            return total;
        }
    }

    private static String describe(long offset, String kind, String key, long version, byte[] value) {
        return offset + " " + kind + " " + key + " v" + version + (value == null ? "" : " " + new String(value,
                java.nio.charset.StandardCharsets.UTF_8));
    }

    /** The log's changes, decoded here without the feed's code. */
    private static List<String> expected(WalStorageProvider p, LogId log) {
        LogState st = p.state(log);
        assertThat(st.trimWatermark()).as("%s kept whole by consumer 'keep'", log).isEqualTo(-1);
        List<WalRecord.Decoded> entries = new ArrayList<>();
        long from = -1;
        while (from < st.committedTail()) {
            ReadPage page = p.read(log, from, 10_000, 8L << 20);
            for (LogEntry e : page.entries()) {
                assertThat(e.offset()).isEqualTo(from + 1);
                entries.add(WalRecord.decode(log, e.offset(), e.payload()));
                from = e.offset();
            }
        }
        Map<String, Long> outcome = new HashMap<>(); // txn id -> committed version, or -1 aborted (first wins)
        for (WalRecord.Decoded d : entries) {
            if (d.kind() == WalRecord.KIND_RESOLVE || d.kind() == WalRecord.KIND_DECISION) {
                ByteBuffer b = ByteBuffer.wrap(d.mutations().get(0).value());
                boolean commit = b.get() != 0;
                long v = d.kind() == WalRecord.KIND_RESOLVE ? b.getLong() : d.version();
                outcome.putIfAbsent(d.mutations().get(0).key(), commit ? v : -1);
            }
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            WalRecord.Decoded d = entries.get(i);
            long version = d.version();
            if (d.kind() == WalRecord.KIND_PREPARE) {
                Long o = outcome.get(d.mutations().get(0).key());
                assertThat(o).as("%s@%d: prepared write %s resolved after the reopen", log, i,
                        d.mutations().get(0).key()).isNotNull();
                if (o < 0) {
                    continue;
                }
                version = o;
            } else if (d.kind() != WalRecord.KIND_MUTATIONS && d.kind() != WalRecord.KIND_ATOMIC) {
                continue;
            }
            for (WalRecord.Mutation m : d.mutations()) {
                if (m.op() == WalRecord.Mutation.PUT || m.op() == WalRecord.Mutation.DELETE) {
                    out.add(describe(i, m.op() == WalRecord.Mutation.PUT ? "P" : "D", m.key(), version, m.value()));
                }
            }
        }
        return out;
    }

    private Process startChild(int round) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("--add-opens") || arg.startsWith("--add-exports") || arg.startsWith("-Dchronicle")) {
                cmd.add(arg);
            }
        }
        cmd.add("-Xmx256m");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(FeedKillTestWriter.class.getName());
        cmd.add(uri);
        cmd.add(Long.toString(seed + round));
        options.forEach((k, v) -> cmd.add(k + "=" + v));
        return new ProcessBuilder(cmd).redirectError(dir.resolve("feed-child-" + round + ".log").toFile()).start();
    }
}
