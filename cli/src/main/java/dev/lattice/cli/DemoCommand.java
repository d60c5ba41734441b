package dev.lattice.cli;

import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeStats;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code lattice demo}: a mixed concurrent workload on a fresh location derived from {@code --provider} (see
 * {@link ScratchLocation}), then close, reopen with replay, verification of every acknowledged write, and a summary.
 * Exit code {@link ExitCodes#VERIFICATION_FAILED} when verification fails.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Run a mixed workload (concurrent writers and readers: puts, putAll batches, putIfAbsent, "
                + "putIfVersion, deletes, contended compare-and-set counters, gets, scans), close, reopen (replay) "
                + "and verify every acknowledged write; print throughput, latency, WAL calls per entry and replay "
                + "figures.",
                "Data goes to a fresh location derived from --provider (chronicle:DIR -> DIR/.demo/run, "
                        + "memory:NAME -> memory:NAME.demo.run), emptied at the start of every run and kept "
                        + "afterwards for 'lattice wal inspect'."})
public final class DemoCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Option(names = "--duration", paramLabel = "TIME", defaultValue = "15s", converter = DurationConverter.class,
            description = "How long the workload runs, e.g. 15s, 1500ms, 1m (default ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--writers", paramLabel = "N", defaultValue = "8",
            description = "Writer threads (default ${DEFAULT-VALUE}).")
    int writers;

    @Option(names = "--readers", paramLabel = "N", defaultValue = "2",
            description = "Reader threads (default ${DEFAULT-VALUE}).")
    int readers;

    @Option(names = "--keys", paramLabel = "N", defaultValue = "10000",
            description = "Distinct user keys (default ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--counters", paramLabel = "N", defaultValue = "8",
            description = "Shared counters all writers increment by compare-and-set (default ${DEFAULT-VALUE}).")
    int counters;

    @Option(names = "--value-bytes", paramLabel = "BYTES", defaultValue = "100",
            description = "Size of a user value (default ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "" + LatticeConfig.DEFAULT_PARTITIONS,
            description = "Partitions of the demo tree (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Seed of the operation mix (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--no-progress", description = "No progress bar (also off when there is no console).")
    boolean noProgress;

    /** Creates the command (picocli fills the fields). */
    public DemoCommand() {
    }

    /**
     * Runs the demo and prints its summary.
     *
     * @return {@link ExitCodes#OK} when every acknowledged write was verified
     * @throws CliException with {@link ExitCodes#VERIFICATION_FAILED} when verification failed,
     *     {@link ExitCodes#USAGE} for bad options
     */
    @Override
    public Integer call() {
        check(writers >= 1 && writers <= 1024, "--writers must be in 1..1024, got " + writers);
        check(readers >= 0 && readers <= 1024, "--readers must be in 0..1024, got " + readers);
        check(keys >= writers && keys <= 10_000_000, "--keys must be in " + writers + " (--writers)..10,000,000, got "
                + keys);
        check(counters >= 0 && counters <= 1000, "--counters must be in 0..1000, got " + counters);
        check(valueBytes >= 32 && valueBytes <= 1 << 20, "--value-bytes must be in 32..1048576, got " + valueBytes);
        check(partitions >= 1 && partitions <= dev.lattice.spi.LogId.MAX_PARTITION + 1,
                "--partitions must be in 1.." + (dev.lattice.spi.LogId.MAX_PARTITION + 1) + ", got " + partitions);
        Support.checkUri(common.provider());
        ScratchLocation where = ScratchLocation.derive(common.provider(), "demo", "run",
                Long.toString(System.currentTimeMillis(), 36));
        where.prepare();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String tree = where.tree("demo");
        out.printf(Locale.ROOT, "lattice demo: %d writers, %d readers, %s keys, %d counters, %s on %s (tree %s, "
                        + "%d partitions)%n", writers, readers, Text.count(keys), counters,
                Text.seconds(duration.toNanos()), where.where(), tree, partitions);
        out.flush();
        DemoWorkload.Settings settings = new DemoWorkload.Settings(where.uri(), tree, partitions, writers, readers,
                keys, counters, valueBytes, duration, seed);
        DemoWorkload.Result r;
        try (Progress progress = new Progress(err, !noProgress && System.console() != null)) {
            r = DemoWorkload.run(settings, progress, b -> { });
        }
        out.print(summary(r).render());
        if (where.directory() != null) {
            out.println("data kept for inspection: lattice wal inspect --provider " + Support.redact(where.uri()));
        }
        if (!r.errors().isEmpty()) {
            err.println("lattice: " + r.errors().size() + " operation(s) failed or answered wrongly during the run:");
            r.errors().forEach(e -> err.println("  " + e));
        }
        for (DemoWorkload.Verification v : new DemoWorkload.Verification[] {r.live(), r.reopened()}) {
            v.examples().forEach(e -> err.println("  " + e));
        }
        if (!r.ok()) {
            out.println("VERIFICATION FAILED");
            throw new CliException(ExitCodes.VERIFICATION_FAILED, "demo verification failed: "
                    + r.errors().size() + " operation errors, " + r.live().failures() + " wrong values before close, "
                    + r.reopened().failures() + " after reopen");
        }
        out.println("OK: every acknowledged write survived close and replay");
        return ExitCodes.OK;
    }

    /** @return the summary table of a run */
    static Table summary(DemoWorkload.Result r) {
        DemoWorkload.OpCounts o = r.ops();
        LatticeStats w = r.beforeClose();
        LatticeStats rp = r.afterReopen();
        Table t = new Table("metric", "value");
        long total = o.writes() + o.reads();
        t.row("operations", Text.count(total) + " in " + Text.seconds(r.elapsedNanos()) + " (writes "
                + Text.count(o.writes()) + ", reads " + Text.count(o.reads()) + ")");
        t.row("throughput", Text.rate(total, r.elapsedNanos()).replace("/s", " ops/s") + " (writes "
                + Text.rate(o.writes(), r.elapsedNanos()) + ", reads " + Text.rate(o.reads(), r.elapsedNanos()) + ")");
        t.row("write mix", "put " + Text.count(o.puts()) + ", putAll " + Text.count(o.putAlls()) + " ("
                + Text.count(o.putAllKeys()) + " keys), putIfAbsent " + Text.count(o.putIfAbsent())
                + ", putIfVersion " + Text.count(o.putIfVersion()) + ", delete " + Text.count(o.deletes())
                + ", counter CAS " + Text.count(o.casIncrements()) + " (" + Text.count(o.casConflicts())
                + " conflicts), atomic transfer " + Text.count(o.transfers()) + " (" + Text.count(o.transferConflicts())
                + " aborted by their precondition)");
        t.row("read mix", "get " + Text.count(o.gets()) + ", scan " + Text.count(o.scans()) + " ("
                + Text.count(o.scannedEntries()) + " entries), count " + Text.count(o.counts()) + ", balance audit "
                + Text.count(o.audits()));
        t.row("write latency", latency(r.writeLatency()));
        t.row("read latency", latency(r.readLatency()));
        t.row("WAL calls per entry", "stage " + Text.ratio(w.stageCalls(), w.entriesCommitted()) + ", commit "
                + Text.ratio(w.commitCalls(), w.entriesCommitted()) + " (" + Text.count(w.stageCalls()) + " stage, "
                + Text.count(w.commitCalls()) + " commit calls for " + Text.count(w.entriesCommitted())
                + " entries)");
        t.row("batches", Text.count(w.batchesCommitted()) + " committed, "
                + Text.ratio(w.entriesCommitted(), w.batchesCommitted()) + " entries/batch, "
                + Text.bytes(w.bytesCommitted()) + " payload; " + Text.count(w.checkpoints()) + " checkpoints, "
                + Text.count(w.retries()) + " retries, " + Text.count(w.failedBatches()) + " failed batches");
        t.row("close", Text.millis(r.closeNanos()) + " (drain, checkpoint, release)");
        t.row("replay", Text.millis(r.reopenNanos()) + " wall to reopen and open the tree; "
                + Text.count(rp.replayEntries()) + " entries (" + Text.bytes(rp.replayBytes()) + ") in "
                + Text.count(rp.replayReadCalls()) + " read calls, " + Text.bytes(rp.replayCheckpointBytes())
                + " of checkpoints");
        DemoWorkload.Verification v = r.reopened();
        boolean ok = v.ok() && r.live().ok();
        t.row("verification", (ok ? "OK: " : "FAILED (" + Text.count(v.failures() + r.live().failures())
                + " wrong): ") + Text.count(v.keysChecked()) + " keys (" + Text.count(v.present()) + " present, "
                + Text.count(v.absent()) + " absent), " + v.counters() + " counters = "
                + Text.count(v.increments()) + " increments, " + v.accounts() + " accounts sum to "
                + Text.count(v.balance()) + ", "
                + (ok ? "full scan found no unexpected key" : "see the errors on standard error"));
        return t;
    }

    private static String latency(Histogram h) {
        if (h.getTotalCount() == 0) {
            return "n/a";
        }
        return "p50 " + Text.millis(h.getValueAtPercentile(50)) + ", p99 " + Text.millis(h.getValueAtPercentile(99))
                + ", max " + Text.millis(h.getMaxValue());
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw CliException.usage(message);
        }
    }

    /** Renders progress: a progress bar on a console, else a line per quarter of the duration. */
    private static final class Progress implements DemoWorkload.Listener, AutoCloseable {
        private final PrintWriter err;
        private final boolean bar;
        private ProgressBar pb;
        private int quarter;
        private boolean barClosed;

        Progress(PrintWriter err, boolean bar) {
            this.err = err;
            this.bar = bar;
        }

        @Override
        public void tick(long elapsedNanos, long durationNanos, long ops) {
            long ms = Math.min(elapsedNanos, durationNanos) / 1_000_000;
            String extra = Text.count(ops) + " ops, " + Text.rate(ops, elapsedNanos).replace("/s", " ops/s");
            if (bar) {
                if (pb == null) {
                    pb = new ProgressBarBuilder().setTaskName("demo").setInitialMax(durationNanos / 1_000_000)
                            .setStyle(ProgressBarStyle.ASCII).setUnit("s", 1000).setUpdateIntervalMillis(200)
                            .hideEta().continuousUpdate().build();
                }
                pb.stepTo(ms);
                pb.setExtraMessage(extra);
            } else {
                int q = (int) (4 * elapsedNanos / Math.max(1, durationNanos));
                if (q > quarter && q <= 4) {
                    quarter = q;
                    err.println("demo: " + (25 * q) + "% (" + Text.seconds(elapsedNanos) + "), " + extra);
                    err.flush();
                }
            }
        }

        @Override
        public void phase(String name) {
            closeBar();
            err.println("demo: " + name);
            err.flush();
        }

        private void closeBar() {
            if (pb != null && !barClosed) {
                pb.close();
                barClosed = true;
            }
        }

        @Override
        public void close() {
            closeBar();
        }
    }
}
