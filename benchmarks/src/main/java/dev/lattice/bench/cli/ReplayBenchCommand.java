package dev.lattice.bench.cli;

import dev.lattice.cli.CliException;
import dev.lattice.cli.CommonOptions;
import dev.lattice.cli.ExitCodes;
import dev.lattice.cli.ScratchLocation;
import dev.lattice.cli.Support;
import dev.lattice.cli.Table;
import dev.lattice.cli.Text;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeStats;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.WalStorageProvider;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code lattice bench replay}: the coalesced-append replay benchmark ({@link ReplayBenchmark}), printed as a table
 * (or Markdown with {@code --markdown}). Exit code {@link ExitCodes#VERIFICATION_FAILED} when a reopened tree does
 * not hold exactly the keys written, or replay read more (or less) than the latest checkpoint of each log plus the
 * entries after it.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = {"Coalesced-append replay benchmark: for each N, write N keys one awaited write at a time "
                + "(sequential) and from --writers closed-loop writers (concurrent), then reopen cold and measure "
                + "replay. Reports provider stage/commit calls, keys per stage call, physical bytes, replay wall "
                + "time, entries/bytes/read calls of replay, checkpoint bytes loaded.",
                "Each case runs in a fresh location derived from --provider (chronicle:DIR -> DIR/.bench/CASE, "
                        + "memory:NAME -> memory:NAME.bench.CASE), deleted afterwards unless --keep."})
public final class ReplayBenchCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Option(names = "--sizes", paramLabel = "N", split = ",", defaultValue = "1000,10000,100000",
            description = "Keys per case, comma-separated (default ${DEFAULT-VALUE}).")
    List<Integer> sizes;

    @Option(names = "--modes", paramLabel = "MODE", split = ",", defaultValue = "sequential,concurrent",
            description = "Write modes, comma-separated: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    List<ReplayBenchmark.Mode> modes;

    @Option(names = "--writers", paramLabel = "N", defaultValue = "64",
            description = "Closed-loop writer threads of the concurrent mode (default ${DEFAULT-VALUE}).")
    int writers;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "" + LatticeConfig.DEFAULT_PARTITIONS,
            description = "Partitions (logs) per tree (default ${DEFAULT-VALUE}, the engine default; 1 shows "
                    + "coalescing best).")
    int partitions;

    @Option(names = "--latency-ms", paramLabel = "MS", defaultValue = "0",
            description = "Injected latency per provider call, in ms (fractions allowed), through "
                    + "the test kit's LatencyProvider (default ${DEFAULT-VALUE}).")
    double latencyMs;

    @Option(names = "--checkpoint-every", paramLabel = "ENTRIES", split = ",", defaultValue = "0",
            description = "Checkpoint a partition every ENTRIES committed entries; comma-separated to run several "
                    + "(default 0 = the engine's, " + LatticeConfig.DEFAULT_CHECKPOINT_ENTRIES + ").")
    List<Long> checkpointEvery;

    @Option(names = "--reopen", paramLabel = "HOW", split = ",", defaultValue = "clean",
            description = "clean: close (checkpoints) then reopen; crash: abandon the lattice at a quiet moment "
                    + "without close, then reopen; comma-separated to run both (default ${DEFAULT-VALUE}).")
    List<ReplayBenchmark.Reopen> reopen;

    @Option(names = "--value-bytes", paramLabel = "BYTES", defaultValue = "100",
            description = "Value size (default ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--markdown", description = "Print a Markdown table (times as ratios to the first case).")
    boolean markdown;

    @Option(names = "--keep", description = "Keep each case's data instead of deleting it.")
    boolean keep;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "20000",
            description = "Keys of the unreported warm-up cases run first, so that the JIT has compiled the write "
                    + "and replay paths; 0 for none (default ${DEFAULT-VALUE}).")
    int warmup;

    /** Creates the command (picocli fills the fields). */
    public ReplayBenchCommand() {
    }

    /**
     * Runs the cases and prints the table.
     *
     * @return {@link ExitCodes#OK} when every case verified
     * @throws CliException with {@link ExitCodes#VERIFICATION_FAILED} when a case did not,
     *     {@link ExitCodes#USAGE} for bad options
     */
    @Override
    public Integer call() {
        if (sizes.isEmpty() || sizes.stream().anyMatch(n -> n < 1 || n > 100_000_000)) {
            throw CliException.usage("--sizes must be numbers in 1..100,000,000, got " + sizes);
        }
        if (modes.isEmpty()) {
            throw CliException.usage("--modes must name sequential and/or concurrent");
        }
        if (writers < 1 || writers > 4096) {
            throw CliException.usage("--writers must be in 1..4096, got " + writers);
        }
        if (partitions < 1 || partitions > dev.lattice.spi.LogId.MAX_PARTITION + 1) {
            throw CliException.usage("--partitions must be in 1.." + (dev.lattice.spi.LogId.MAX_PARTITION + 1)
                    + ", got " + partitions);
        }
        if (!(latencyMs >= 0 && latencyMs <= 10_000)) {
            throw CliException.usage("--latency-ms must be in 0..10000, got " + latencyMs);
        }
        if (checkpointEvery.isEmpty() || checkpointEvery.stream().anyMatch(c -> c < 0)) {
            throw CliException.usage("--checkpoint-every must be >= 1 (0 = engine default), got " + checkpointEvery);
        }
        if (reopen.isEmpty()) {
            throw CliException.usage("--reopen must name clean and/or crash");
        }
        if (warmup < 0) {
            throw CliException.usage("--warmup must be >= 0, got " + warmup);
        }
        if (valueBytes < 16 || valueBytes > 1 << 20) {
            throw CliException.usage("--value-bytes must be in 16..1048576, got " + valueBytes);
        }
        Support.checkUri(common.provider());
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Duration latency = Duration.ofNanos(Math.round(latencyMs * 1_000_000));
        ReplayBenchmark.Settings settings = new ReplayBenchmark.Settings(common.provider(), sizes, modes, writers,
                partitions, latency, checkpointEvery, reopen, valueBytes, keep, warmup,
                Long.toString(System.currentTimeMillis(), 36));
        String descriptor = describe(settings);
        List<ReplayBenchmark.CaseResult> results = ReplayBenchmark.run(settings, m -> {
            err.println("bench: " + m);
            err.flush();
        });
        out.println("lattice bench replay, " + LocalDate.now(ZoneOffset.UTC) + ", " + descriptor);
        out.println("settings: partitions " + partitions + ", writers " + writers + " (concurrent mode), latency "
                + (latency.isZero() ? "none" : latencyMs + " ms per provider call") + ", values "
                + valueBytes + " B, warm-up " + Text.count(warmup) + " keys; JVM " + System.getProperty("java.version") + ", "
                + Runtime.getRuntime().availableProcessors() + " cores");
        out.print(markdown ? table(results, true).markdown() : table(results, false).render());
        if (markdown) {
            ReplayBenchmark.CaseResult base = results.get(0);
            out.println();
            out.println("Write and replay times are ratios to those of the first case of this run ("
                    + base.mode().label() + ", N = " + Text.count(base.n()) + ", reopen "
                    + base.reopen().name().toLowerCase(Locale.ROOT) + "); write speed vs seq is the sequential "
                    + "case's write time over this case's, for the same N, reopen and checkpoint setting.");
        }
        long bad = results.stream().filter(r -> !r.verified()).count();
        if (bad > 0) {
            for (ReplayBenchmark.CaseResult r : results) {
                String c = "lattice: case " + r.mode().label() + " N=" + r.n() + " reopen "
                        + r.reopen().name().toLowerCase(Locale.ROOT) + ": ";
                if (!r.dataVerified()) {
                    err.println(c + "reopened tree has " + r.keysAfterReopen() + " keys (expected " + r.n() + "), "
                            + r.sampleMismatches() + " sampled values differ");
                }
                if (!r.replayBounded()) {
                    err.println(c + "replay read " + r.replayed().replayEntries() + " entries and "
                            + r.replayed().replayCheckpointBytes() + " checkpoint bytes; the storage held "
                            + r.entriesAfterCheckpoint() + " entries after the latest checkpoints of "
                            + r.latestCheckpointBytes() + " bytes");
                }
            }
            throw new CliException(ExitCodes.VERIFICATION_FAILED, bad + " case(s) failed verification after reopen");
        }
        return ExitCodes.OK;
    }

    /** Opens a throw-away instance for the provider's name, version and durability. */
    private static String describe(ReplayBenchmark.Settings settings) {
        ScratchLocation probe = ScratchLocation.derive(settings.baseUri(), "bench", "describe", settings.runId());
        probe.prepare();
        try (WalStorageProvider p = Support.openProvider(probe.uri())) {
            ProviderDescriptor d = p.describe();
            return "provider " + Support.redact(settings.baseUri()) + " (" + d.name() + " " + d.version() + ", durability "
                    + d.durability() + ")";
        } finally {
            probe.wipe();
        }
    }

    /**
     * @param results the cases
     * @param relative times as ratios to the first case instead of milliseconds
     * @return the table
     */
    static Table table(List<ReplayBenchmark.CaseResult> results, boolean relative) {
        Table t = new Table("case", ">N", "reopen", ">ckpt every", ">parts", ">writers", relative ? ">write time (x)" : ">write ms",
                ">write speed vs seq", ">stage calls", ">commit calls", ">keys/stage", ">stage/key", ">commit/key",
                ">physical", relative ? ">replay time (x)" : ">replay ms", ">replay entries", ">replay bytes",
                ">after ckpt", ">read calls", ">checkpoint bytes", "verified");
        Map<String, Long> sequential = new HashMap<>();
        for (ReplayBenchmark.CaseResult r : results) {
            if (r.mode() == ReplayBenchmark.Mode.SEQUENTIAL) {
                sequential.put(sameSetup(r), r.writeNanos());
            }
        }
        ReplayBenchmark.CaseResult base = results.get(0);
        for (ReplayBenchmark.CaseResult r : results) {
            LatticeStats w = r.written();
            LatticeStats rp = r.replayed();
            Long seq = sequential.get(sameSetup(r));
            t.row(r.mode().label(), Text.count(r.n()), r.reopen().name().toLowerCase(Locale.ROOT),
                    Text.count(r.checkpointEvery() > 0 ? r.checkpointEvery()
                            : LatticeConfig.DEFAULT_CHECKPOINT_ENTRIES),
                    r.partitions(), r.writers(),
                    relative ? Text.ratio(r.writeNanos(), base.writeNanos()) : ms(r.writeNanos()),
                    seq == null ? "n/a" : Text.ratio(seq, r.writeNanos()),
                    Text.count(w.stageCalls()), Text.count(w.commitCalls()),
                    Text.ratio(w.entriesCommitted(), w.stageCalls()),
                    Text.ratio(w.stageCalls(), w.entriesCommitted()),
                    Text.ratio(w.commitCalls(), w.entriesCommitted()),
                    Text.bytes(r.physicalBytes()),
                    relative ? Text.ratio(r.replayNanos(), base.replayNanos()) : ms(r.replayNanos()),
                    Text.count(rp.replayEntries()), Text.bytes(rp.replayBytes()),
                    Text.count(r.entriesAfterCheckpoint()), Text.count(rp.replayReadCalls()),
                    Text.bytes(rp.replayCheckpointBytes()), r.verified() ? "yes" : "NO");
        }
        return t;
    }

    /** Cases that differ only in their write mode. */
    private static String sameSetup(ReplayBenchmark.CaseResult r) {
        return r.n() + "/" + r.reopen() + "/" + r.checkpointEvery();
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%,.1f", nanos / 1e6);
    }
}
