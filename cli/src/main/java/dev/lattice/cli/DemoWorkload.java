package dev.lattice.cli;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeStats;
import dev.lattice.engine.PreconditionFailedException;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeEntry;
import dev.lattice.engine.Versioned;
import org.HdrHistogram.Histogram;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The workload behind {@code lattice demo}: concurrent writers and readers on one tree for a fixed time, then close,
 * reopen (timing the replay) and verify every acknowledged write.
 *
 * <h2>Workload</h2>
 * Each writer owns the keys {@code user:N} with {@code N % writers == writer} (like an entity owned by one actor),
 * so it knows the last acknowledged value of each of its keys exactly, and it checks the answer of every
 * conditional write against that model: {@code putIfAbsent} must succeed exactly when the key is absent,
 * {@code putIfVersion} with the version just read must succeed and with a wrong one must fail, {@code delete} must
 * report whether the key was present. Its mix: single puts, {@code putAll} batches, {@code putIfAbsent},
 * {@code putIfVersion} (right and wrong version), deletes, and compare-and-set increments of a few shared
 * {@code counter:N} keys that all writers contend on (read version, {@code putIfVersion}, retry on conflict), and
 * atomic transfers between {@value #ACCOUNTS} shared {@code account:NN} keys (one atomic write with a version
 * precondition on both accounts; a lost race aborts it). Readers run point gets, short ordered scans (checking order,
 * bounds and value shape), counts, and balance audits: one {@code getAll} of every account, whose sum must always be
 * the opening total (a transfer seen in part would change it).
 *
 * <h2>Verification</h2>
 * After reopen, every key any writer touched must hold exactly its last acknowledged value (deleted keys absent),
 * every counter must equal its number of successful increments, the accounts must sum to the opening total, and a
 * full scan must find no other key. The same
 * check runs once before close, against the live tree.
 *
 * <p>A run is used by one thread; the workload threads it starts are joined before {@link #run} returns.
 */
final class DemoWorkload {

    /**
     * What to run.
     *
     * @param uri the provider URI (a fresh location: the tree must not exist yet)
     * @param tree the tree name
     * @param partitions partitions of the tree
     * @param writers writer threads, {@code >= 1}
     * @param readers reader threads, {@code >= 0}
     * @param keys user keys, at least {@code writers}
     * @param counters shared counter keys, {@code >= 0}
     * @param valueBytes size of a user value, in bytes, {@code >= 32}
     * @param duration how long writers and readers run
     * @param seed seed of the operation mix
     */
    record Settings(String uri, String tree, int partitions, int writers, int readers, int keys, int counters,
                    int valueBytes, Duration duration, long seed) {
        Settings {
            Objects.requireNonNull(uri, "uri");
            Objects.requireNonNull(tree, "tree");
            Objects.requireNonNull(duration, "duration");
            if (writers < 1 || readers < 0 || keys < writers || counters < 0 || valueBytes < 32 || partitions < 1
                    || duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("bad demo settings: " + writers + " writers, " + readers
                        + " readers, " + keys + " keys, " + counters + " counters, " + valueBytes + " value bytes, "
                        + partitions + " partitions, " + duration);
            }
        }
    }

    /** Receives progress while the workload runs. Called from one monitoring thread. */
    interface Listener {
        /**
         * About every 200 ms during the timed phase.
         *
         * @param elapsedNanos time since the workload started
         * @param durationNanos the planned duration
         * @param ops operations completed so far
         */
        void tick(long elapsedNanos, long durationNanos, long ops);

        /**
         * A new phase starts (after the timed one): closing, reopening, verifying.
         *
         * @param name the phase
         */
        void phase(String name);
    }

    /**
     * Counts of operations by kind.
     *
     * @param puts single puts
     * @param putAlls putAll calls
     * @param putAllKeys keys written by putAll calls
     * @param putIfAbsent putIfAbsent calls
     * @param putIfVersion putIfVersion calls on owned keys
     * @param deletes deletes
     * @param casIncrements successful counter increments
     * @param casConflicts counter increments that lost the race and retried
     * @param transfers atomic transfers committed
     * @param transferConflicts atomic transfers aborted by their precondition (another transfer won)
     * @param gets point reads
     * @param scans scans
     * @param scannedEntries entries returned by scans
     * @param counts count calls
     * @param audits balance audits (getAll of every account)
     */
    record OpCounts(long puts, long putAlls, long putAllKeys, long putIfAbsent, long putIfVersion, long deletes,
                    long casIncrements, long casConflicts, long transfers, long transferConflicts, long gets,
                    long scans, long scannedEntries, long counts, long audits) {
        long writes() {
            return puts + putAlls + putIfAbsent + putIfVersion + deletes + casIncrements + transfers;
        }

        long reads() {
            return gets + scans + counts + audits;
        }
    }

    /**
     * The outcome of a verification.
     *
     * @param keysChecked keys compared against the model
     * @param present keys expected (and checked) present
     * @param absent keys expected (and checked) absent
     * @param counters counters checked
     * @param increments successful increments those counters must add up to
     * @param accounts accounts checked
     * @param balance the sum of their balances (must be {@code accounts * OPENING_BALANCE})
     * @param failures how many checks failed
     * @param examples up to 10 descriptions of failed checks
     */
    record Verification(long keysChecked, long present, long absent, int counters, long increments, int accounts,
                        long balance, long failures, List<String> examples) {
        boolean ok() {
            return failures == 0;
        }
    }

    /**
     * Everything the summary shows.
     *
     * @param settings what ran
     * @param elapsedNanos wall time of the timed phase
     * @param ops operation counts
     * @param writeLatency latency of write operations, in ns
     * @param readLatency latency of read operations, in ns
     * @param errors unexpected failures of operations (must be empty for a passing run)
     * @param beforeClose the writing lattice's counters at the end of the timed phase
     * @param closeNanos wall time of {@link Lattice#close()} (drain, checkpoint, release)
     * @param reopenNanos wall time of opening the lattice again and opening the tree (replay)
     * @param afterReopen the reopened lattice's counters (replay figures)
     * @param live verification against the live tree before close
     * @param reopened verification after reopen
     */
    record Result(Settings settings, long elapsedNanos, OpCounts ops, Histogram writeLatency, Histogram readLatency,
                  List<String> errors, LatticeStats beforeClose, long closeNanos, long reopenNanos,
                  LatticeStats afterReopen, Verification live, Verification reopened) {
        boolean ok() {
            return errors.isEmpty() && live.ok() && reopened.ok();
        }
    }

    private static final long MAX_LATENCY_NANOS = TimeUnit.MINUTES.toNanos(2);
    /** Shared accounts that atomic transfers move balance between. */
    static final int ACCOUNTS = 16;
    /** Balance of every account when the run starts. */
    static final long OPENING_BALANCE = 1_000;

    private final Settings s;
    private final String[] userKeys;
    private final String[] counterKeys;
    private final List<String> accountKeys = new ArrayList<>();
    private final AtomicLongArray casSuccesses;
    private final LongAdder opsDone = new LongAdder();
    private final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    private final AtomicLong errorCount = new AtomicLong();
    private volatile boolean stop;

    private DemoWorkload(Settings s) {
        this.s = s;
        this.userKeys = new String[s.keys()];
        for (int i = 0; i < s.keys(); i++) {
            userKeys[i] = String.format(Locale.ROOT, "user:%07d", i);
        }
        this.counterKeys = new String[s.counters()];
        for (int i = 0; i < s.counters(); i++) {
            counterKeys[i] = String.format(Locale.ROOT, "counter:%03d", i);
        }
        this.casSuccesses = new AtomicLongArray(s.counters());
        for (int i = 0; i < ACCOUNTS; i++) {
            accountKeys.add(String.format(Locale.ROOT, "account:%02d", i));
        }
    }

    /**
     * Runs the workload, closes, reopens and verifies.
     *
     * @param settings what to run
     * @param listener progress receiver
     * @param tune engine settings applied to both lattices (e.g. partitions)
     * @return the result; {@link Result#ok()} is false when verification or an operation failed
     * @throws CliException (usage) if the provider URI is bad
     * @throws dev.lattice.spi.WalStorageException if the provider fails to open
     * @throws IllegalStateException if the tree already holds data (the location was not fresh)
     */
    static Result run(Settings settings, Listener listener,
                      java.util.function.Consumer<LatticeConfig.Builder> tune) {
        return new DemoWorkload(settings).execute(listener, tune);
    }

    private Result execute(Listener listener, java.util.function.Consumer<LatticeConfig.Builder> tune) {
        Lattice lattice = Support.openLattice(s.uri(), b -> {
            b.partitions(s.partitions());
            tune.accept(b);
        });
        Writer[] writers = new Writer[s.writers()];
        Reader[] readers = new Reader[s.readers()];
        long elapsed;
        LatticeStats beforeClose;
        Verification live;
        long closeNanos;
        try {
            Tree tree = lattice.tree(s.tree(), s.partitions());
            if (tree.count() != 0) {
                throw new IllegalStateException("tree '" + s.tree() + "' on " + s.uri() + " is not empty");
            }
            Map<String, byte[]> opening = new LinkedHashMap<>();
            for (String a : accountKeys) {
                opening.put(a, Long.toString(OPENING_BALANCE).getBytes(StandardCharsets.US_ASCII));
            }
            tree.putAllAtomic(opening);
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers.length; w++) {
                writers[w] = new Writer(w, tree, new SplittableRandom(s.seed() * 31 + w));
                threads.add(new Thread(writers[w], "demo-writer-" + w));
            }
            for (int r = 0; r < readers.length; r++) {
                readers[r] = new Reader(tree, new SplittableRandom(s.seed() * 17 + 1000 + r));
                threads.add(new Thread(readers[r], "demo-reader-" + r));
            }
            long durationNanos = s.duration().toNanos();
            long start = System.nanoTime();
            threads.forEach(Thread::start);
            while (true) {
                long now = System.nanoTime() - start;
                if (now >= durationNanos) {
                    break;
                }
                listener.tick(now, durationNanos, opsDone.sum());
                sleepMillis(Math.min(200, Math.max(1, (durationNanos - now) / 1_000_000)));
            }
            stop = true;
            for (Thread t : threads) {
                join(t);
            }
            elapsed = System.nanoTime() - start;
            listener.tick(elapsed, durationNanos, opsDone.sum());
            beforeClose = lattice.stats();
            listener.phase("checking the live tree");
            live = verify(tree, writers);
            listener.phase("closing (drain, checkpoint)");
        } catch (RuntimeException e) {
            stop = true;
            lattice.close();
            throw e;
        }
        long c0 = System.nanoTime();
        lattice.close();
        closeNanos = System.nanoTime() - c0;

        listener.phase("reopening (replay)");
        long r0 = System.nanoTime();
        try (Lattice reopened = Support.openLattice(s.uri(), b -> {
            b.partitions(s.partitions());
            tune.accept(b);
        })) {
            Tree tree = reopened.tree(s.tree());
            long reopenNanos = System.nanoTime() - r0;
            LatticeStats afterReopen = reopened.stats();
            listener.phase("verifying every acknowledged write");
            Verification v = verify(tree, writers);
            Histogram wl = new Histogram(MAX_LATENCY_NANOS, 2);
            Histogram rl = new Histogram(MAX_LATENCY_NANOS, 2);
            long[] c = new long[15];
            for (Writer w : writers) {
                wl.add(w.latency);
                c[0] += w.puts;
                c[1] += w.putAlls;
                c[2] += w.putAllKeys;
                c[3] += w.putIfAbsent;
                c[4] += w.putIfVersion;
                c[5] += w.deletes;
                c[7] += w.casConflicts;
                c[8] += w.transfers;
                c[9] += w.transferConflicts;
            }
            for (int i = 0; i < casSuccesses.length(); i++) {
                c[6] += casSuccesses.get(i);
            }
            for (Reader r : readers) {
                rl.add(r.latency);
                c[10] += r.gets;
                c[11] += r.scans;
                c[12] += r.scanned;
                c[13] += r.counts;
                c[14] += r.audits;
            }
            OpCounts ops = new OpCounts(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11],
                    c[12], c[13], c[14]);
            List<String> errs = new ArrayList<>(errors);
            if (errorCount.get() > errs.size()) {
                errs.add("... " + (errorCount.get() - errs.size()) + " more");
            }
            return new Result(s, elapsed, ops, wl, rl, errs, beforeClose, closeNanos, reopenNanos, afterReopen,
                    live, v);
        }
    }

    // ------------------------------------------------------------------ values

    private byte[] userValue(String key, int writer, long seq) {
        byte[] head = (key + "|w" + writer + "|s" + seq + "|").getBytes(StandardCharsets.UTF_8);
        byte[] v = Arrays.copyOf(head, Math.max(head.length, s.valueBytes()));
        Arrays.fill(v, head.length, v.length, (byte) ('a' + (int) (seq % 26)));
        return v;
    }

    private static boolean wellFormed(String key, byte[] value) {
        if (key.startsWith("counter:") || key.startsWith("account:")) {
            long min = key.startsWith("account:") ? 0 : 1;
            try {
                return Long.parseLong(new String(value, StandardCharsets.US_ASCII)) >= min;
            } catch (NumberFormatException e) {
                return false;
            }
        }
        byte[] prefix = (key + "|w").getBytes(StandardCharsets.UTF_8);
        return value.length >= prefix.length
                && Arrays.equals(value, 0, prefix.length, prefix, 0, prefix.length);
    }

    private void error(String what) {
        if (errorCount.incrementAndGet() <= 10) {
            errors.add(what);
        }
    }

    // ------------------------------------------------------------------ writers

    /** One writer thread: owns every key {@code user:N} with {@code N % writers == id}. */
    private final class Writer implements Runnable {
        final int id;
        final Tree tree;
        final SplittableRandom rnd;
        final int[] owned;
        /** The last acknowledged value of each owned key touched; null value = acknowledged absent. */
        final Map<String, byte[]> model = new HashMap<>();
        /** Keys whose last write failed: any of these values (null = absent) is acceptable. */
        final Map<String, List<byte[]>> uncertain = new HashMap<>();
        final Histogram latency = new Histogram(MAX_LATENCY_NANOS, 2);
        long seq;
        long puts;
        long putAlls;
        long putAllKeys;
        long putIfAbsent;
        long putIfVersion;
        long deletes;
        long casConflicts;
        long transfers;
        long transferConflicts;

        Writer(int id, Tree tree, SplittableRandom rnd) {
            this.id = id;
            this.tree = tree;
            this.rnd = rnd;
            int n = 0;
            for (int i = id; i < s.keys(); i += s.writers()) {
                n++;
            }
            this.owned = new int[n];
            for (int i = id, j = 0; i < s.keys(); i += s.writers(), j++) {
                owned[j] = i;
            }
        }

        @Override
        public void run() {
            while (!stop) {
                long t0 = System.nanoTime();
                try {
                    step();
                } catch (RuntimeException e) {
                    error("writer " + id + ": " + Main.describe(e));
                }
                latency.recordValue(Math.min(System.nanoTime() - t0, MAX_LATENCY_NANOS));
                opsDone.increment();
            }
        }

        private String pick() {
            return userKeys[owned[rnd.nextInt(owned.length)]];
        }

        private boolean present(String key) {
            return model.get(key) != null;
        }

        private void step() {
            int r = rnd.nextInt(100);
            if (r < 35 || (r >= 95 && counterKeys.length == 0)) {
                String k = pick();
                byte[] v = userValue(k, id, ++seq);
                write(k, v, () -> tree.put(k, v));
                puts++;
            } else if (r < 50) {
                int n = 4 + rnd.nextInt(29);
                Map<String, byte[]> batch = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    String k = pick();
                    batch.put(k, userValue(k, id, ++seq));
                }
                try {
                    tree.putAll(batch);
                    model.putAll(batch);
                } catch (RuntimeException e) {
                    batch.forEach(this::markUncertain);
                    throw e;
                }
                putAlls++;
                putAllKeys += batch.size();
            } else if (r < 62) {
                String k = pick();
                byte[] v = userValue(k, id, ++seq);
                boolean expected = !present(k);
                boolean got = conditional(k, expected ? v : null, () -> tree.putIfAbsent(k, v));
                check(got == expected, "putIfAbsent(" + k + ") returned " + got + ", expected " + expected);
                putIfAbsent++;
            } else if (r < 75) {
                String k = pick();
                Optional<Versioned> cur = tree.getVersioned(k);
                check(cur.isPresent() == present(k), "getVersioned(" + k + ") present=" + cur.isPresent()
                        + " but the model says " + present(k));
                long version = cur.map(Versioned::version).orElse(0L);
                boolean wrong = rnd.nextInt(5) == 0;
                long expectedVersion = wrong ? version + 1 : version;
                byte[] v = userValue(k, id, ++seq);
                boolean got = conditional(k, wrong ? null : v, () -> tree.putIfVersion(k, v, expectedVersion));
                check(got == !wrong, "putIfVersion(" + k + ", v" + expectedVersion + ") returned " + got
                        + " with current version " + version);
                putIfVersion++;
            } else if (r < 90) {
                String k = pick();
                boolean expected = present(k);
                boolean got;
                try {
                    got = tree.delete(k);
                } catch (RuntimeException e) {
                    markUncertain(k, null);
                    throw e;
                }
                model.put(k, null);
                uncertain.remove(k);
                check(got == expected, "delete(" + k + ") returned " + got + ", expected " + expected);
                deletes++;
            } else if (r < 95) {
                transfer();
            } else {
                increment(rnd.nextInt(counterKeys.length));
            }
        }

        /**
         * Moves a random amount between two accounts in one atomic write, conditional on both versions read; a lost
         * race aborts it (nothing written) and counts as a conflict.
         */
        private void transfer() {
            int a = rnd.nextInt(ACCOUNTS);
            int b = (a + 1 + rnd.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
            String from = accountKeys.get(a);
            String to = accountKeys.get(b);
            Versioned vf = tree.getVersioned(from).orElseThrow(() -> new IllegalStateException(from + " is missing"));
            Versioned vt = tree.getVersioned(to).orElseThrow(() -> new IllegalStateException(to + " is missing"));
            long balance = Long.parseLong(new String(vf.value(), StandardCharsets.US_ASCII));
            if (balance == 0) {
                return;
            }
            long amount = 1 + rnd.nextInt((int) Math.min(50, balance));
            long target = Long.parseLong(new String(vt.value(), StandardCharsets.US_ASCII));
            try {
                tree.atomic().expectVersion(from, vf.version()).expectVersion(to, vt.version())
                        .put(from, Long.toString(balance - amount).getBytes(StandardCharsets.US_ASCII))
                        .put(to, Long.toString(target + amount).getBytes(StandardCharsets.US_ASCII))
                        .commit();
                transfers++;
            } catch (PreconditionFailedException e) {
                transferConflicts++;
            }
        }

        /** Compare-and-set increment of a shared counter; retries on a lost race. */
        private void increment(int c) {
            String k = counterKeys[c];
            while (!stop) {
                Optional<Versioned> cur = tree.getVersioned(k);
                long n = cur.map(v -> Long.parseLong(new String(v.value(), StandardCharsets.US_ASCII))).orElse(0L);
                byte[] next = Long.toString(n + 1).getBytes(StandardCharsets.US_ASCII);
                if (tree.putIfVersion(k, next, cur.map(Versioned::version).orElse(0L))) {
                    casSuccesses.incrementAndGet(c);
                    return;
                }
                casConflicts++;
            }
        }

        private void write(String k, byte[] v, Runnable op) {
            try {
                op.run();
            } catch (RuntimeException e) {
                markUncertain(k, v);
                throw e;
            }
            model.put(k, v);
            uncertain.remove(k);
        }

        /** Runs a conditional write; on success the model takes {@code ifWritten} (null: expected no write). */
        private boolean conditional(String k, byte[] ifWritten, java.util.function.BooleanSupplier op) {
            boolean got;
            try {
                got = op.getAsBoolean();
            } catch (RuntimeException e) {
                if (ifWritten != null) {
                    markUncertain(k, ifWritten);
                }
                throw e;
            }
            if (got && ifWritten != null) {
                model.put(k, ifWritten);
                uncertain.remove(k);
            }
            return got;
        }

        private void markUncertain(String k, byte[] attempted) {
            List<byte[]> options = uncertain.computeIfAbsent(k, x -> {
                List<byte[]> l = new ArrayList<>();
                l.add(model.get(x));
                return l;
            });
            options.add(attempted);
        }

        private void check(boolean ok, String what) {
            if (!ok) {
                error("writer " + id + ": " + what);
            }
        }
    }

    // ------------------------------------------------------------------ readers

    /** One reader thread: gets, short scans and counts, checking what it reads for shape and order. */
    private final class Reader implements Runnable {
        final Tree tree;
        final SplittableRandom rnd;
        final Histogram latency = new Histogram(MAX_LATENCY_NANOS, 2);
        long gets;
        long scans;
        long scanned;
        long counts;
        long audits;

        Reader(Tree tree, SplittableRandom rnd) {
            this.tree = tree;
            this.rnd = rnd;
        }

        @Override
        public void run() {
            while (!stop) {
                long t0 = System.nanoTime();
                try {
                    step();
                } catch (RuntimeException e) {
                    error("reader: " + Main.describe(e));
                }
                latency.recordValue(Math.min(System.nanoTime() - t0, MAX_LATENCY_NANOS));
                opsDone.increment();
            }
        }

        private void step() {
            int r = rnd.nextInt(100);
            if (r < 70) {
                String k = counterKeys.length > 0 && rnd.nextInt(10) == 0
                        ? counterKeys[rnd.nextInt(counterKeys.length)] : userKeys[rnd.nextInt(userKeys.length)];
                tree.get(k).ifPresent(v -> {
                    if (!wellFormed(k, v)) {
                        error("reader: get(" + k + ") returned a malformed value");
                    }
                });
                gets++;
            } else if (r < 97) {
                String from = userKeys[rnd.nextInt(userKeys.length)];
                boolean reverse = rnd.nextBoolean();
                String lo = reverse ? null : from;
                String hi = reverse ? from : null;
                String prev = null;
                int n = 0;
                try (ScanCursor c = tree.scan(lo, hi, reverse)) {
                    while (c.hasNext() && n < 50) {
                        TreeEntry e = c.next();
                        n++;
                        if (prev != null && (reverse ? e.key().compareTo(prev) >= 0 : e.key().compareTo(prev) <= 0)) {
                            error("reader: scan out of order: " + prev + " then " + e.key());
                        }
                        if (reverse ? e.key().compareTo(from) >= 0 : e.key().compareTo(from) < 0) {
                            error("reader: scan returned " + e.key() + " outside its range (bound " + from + ")");
                        }
                        if (!wellFormed(e.key(), e.value())) {
                            error("reader: scan returned a malformed value for " + e.key());
                        }
                        prev = e.key();
                    }
                }
                scans++;
                scanned += n;
            } else if (r < 99) {
                audit();
            } else {
                long n = tree.count();
                long max = userKeys.length + counterKeys.length + ACCOUNTS;
                if (n < ACCOUNTS || n > max) {
                    error("reader: count() = " + n + " outside " + ACCOUNTS + ".." + max);
                }
                counts++;
            }
        }

        private void audit() {
            auditOnce(tree, this);
        }
    }

    /** Reader: one getAll of every account must sum to the opening total, whatever transfers run meanwhile. */
    private void auditOnce(Tree tree, Reader reader) {
        Map<String, byte[]> got = tree.getAll(accountKeys);
        long sum = 0;
        for (byte[] v : got.values()) {
            sum += Long.parseLong(new String(v, StandardCharsets.US_ASCII));
        }
        if (got.size() != ACCOUNTS || sum != ACCOUNTS * OPENING_BALANCE) {
            error("reader: an audit saw " + got.size() + " accounts summing to " + sum + ", expected " + ACCOUNTS
                    + " summing to " + ACCOUNTS * OPENING_BALANCE + " (an atomic transfer seen in part)");
        }
        reader.audits++;
    }

    // ------------------------------------------------------------------ verification

    private Verification verify(Tree tree, Writer[] writers) {
        long checked = 0;
        long present = 0;
        long absent = 0;
        long failures = 0;
        List<String> examples = new ArrayList<>();
        Set<String> expectedPresent = new HashSet<>();
        for (Writer w : writers) {
            for (Map.Entry<String, byte[]> e : w.model.entrySet()) {
                String k = e.getKey();
                Optional<byte[]> actual = tree.get(k);
                List<byte[]> options = w.uncertain.get(k);
                boolean ok;
                if (options != null) {
                    ok = options.stream().anyMatch(o -> o == null ? actual.isEmpty()
                            : actual.isPresent() && Arrays.equals(o, actual.get()));
                    actual.ifPresent(v -> expectedPresent.add(k));
                } else if (e.getValue() == null) {
                    ok = actual.isEmpty();
                    absent++;
                } else {
                    ok = actual.isPresent() && Arrays.equals(e.getValue(), actual.get());
                    present++;
                    expectedPresent.add(k);
                }
                checked++;
                if (!ok) {
                    failures++;
                    if (examples.size() < 10) {
                        examples.add("key " + k + ": expected " + (e.getValue() == null ? "absent"
                                : "'" + Text.value(e.getValue(), false) + "'") + ", found "
                                + actual.map(v -> "'" + Text.value(v, false) + "'").orElse("nothing"));
                    }
                }
            }
        }
        long increments = 0;
        for (int c = 0; c < counterKeys.length; c++) {
            long want = casSuccesses.get(c);
            increments += want;
            Optional<byte[]> actual = tree.get(counterKeys[c]);
            long got = actual.map(v -> Long.parseLong(new String(v, StandardCharsets.US_ASCII))).orElse(0L);
            if (got != want) {
                failures++;
                if (examples.size() < 10) {
                    examples.add("counter " + counterKeys[c] + ": " + got + ", expected " + want
                            + " acknowledged increments");
                }
            }
            if (want > 0) {
                expectedPresent.add(counterKeys[c]);
            }
        }
        long balance = 0;
        for (String a : accountKeys) {
            Optional<byte[]> v = tree.get(a);
            if (v.isEmpty()) {
                failures++;
                if (examples.size() < 10) {
                    examples.add("account " + a + " is missing");
                }
            } else {
                balance += Long.parseLong(new String(v.get(), StandardCharsets.US_ASCII));
                expectedPresent.add(a);
            }
        }
        if (balance != ACCOUNTS * OPENING_BALANCE) {
            failures++;
            if (examples.size() < 10) {
                examples.add("accounts sum to " + balance + ", expected " + ACCOUNTS * OPENING_BALANCE
                        + " (an atomic transfer applied in part)");
            }
        }
        long seen = 0;
        try (ScanCursor cur = tree.scan(null, null, false)) {
            while (cur.hasNext()) {
                String k = cur.next().key();
                seen++;
                if (!expectedPresent.contains(k)) {
                    failures++;
                    if (examples.size() < 10) {
                        examples.add("scan found key " + k + " that no acknowledged write left present");
                    }
                }
            }
        }
        if (seen < expectedPresent.size()) {
            failures++;
            examples.add("scan returned " + seen + " keys, expected at least " + expectedPresent.size());
        }
        return new Verification(checked, present, absent, counterKeys.length, increments, ACCOUNTS, balance, failures,
                List.copyOf(examples));
    }

    // ------------------------------------------------------------------ helpers

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(ExitCodes.FAILURE, "interrupted");
        }
    }

    private static void join(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(ExitCodes.FAILURE, "interrupted");
        }
    }
}
