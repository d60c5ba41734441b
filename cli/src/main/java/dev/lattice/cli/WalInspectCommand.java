package dev.lattice.cli;

import dev.lattice.engine.lsm.Manifest;
import dev.lattice.engine.lsm.ManifestCodec;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.WalStorageProvider;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code lattice wal inspect [TREE...]}: the state of every log of the given trees (default: all trees, the engine's
 * own {@code _catalog} included), read straight from the provider. Read-only: it opens the provider without the
 * engine and claims no log, so it fences out no writer (a provider that locks its storage, like Chronicle's
 * directory lock, still refuses to open while another process holds it).
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Per log: offsets (lowest, tail), trim watermark, epoch, retained entries and bytes, "
                + "physical bytes, latest checkpoint. Read-only (claims no log).")
public final class WalInspectCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "TREE", arity = "0..*", description = "Trees to inspect (default: all).")
    List<String> trees = new ArrayList<>();

    @Option(names = "--markdown", description = "Print a Markdown table.")
    boolean markdown;

    /** Creates the command (picocli fills the fields). */
    public WalInspectCommand() {
    }

    /**
     * Prints the state of the logs.
     *
     * @return {@link ExitCodes#OK}, or {@link ExitCodes#NOT_FOUND} when none of the named trees has a log
     * @throws CliException with {@link ExitCodes#NOT_FOUND} when a chronicle directory does not exist,
     *     {@link ExitCodes#USAGE} for a bad tree name or URI
     */
    @Override
    public Integer call() {
        URI uri = Support.checkUri(common.provider());
        requireLocalDataExists(uri);
        PrintWriter out = spec.commandLine().getOut();
        try (WalStorageProvider p = Support.openProvider(common.provider())) {
            ProviderDescriptor d = p.describe();
            List<String> names = trees.isEmpty() ? p.trees() : trees;
            out.println("provider " + common.provider() + ": " + d.name() + " " + d.version() + ", durability "
                    + d.durability());
            if (names.isEmpty()) {
                out.println("no trees");
                return ExitCodes.OK;
            }
            Table t = new Table("log", ">lowest", ">tail", ">trim wm", ">epoch", ">entries", ">bytes",
                    ">physical", "checkpoint", "runs");
            boolean missing = false;
            List<String> warnings = new ArrayList<>();
            long cpLimit = d.limits().maxCheckpointBytes();
            for (String tree : names) {
                try {
                    LogId.validateTreeName(tree);
                } catch (IllegalArgumentException e) {
                    throw CliException.usage(e.getMessage());
                }
                List<LogId> logs = p.logs(tree);
                if (logs.isEmpty()) {
                    spec.commandLine().getErr().println("lattice: tree '" + tree + "' has no logs on this provider");
                    missing = true;
                    continue;
                }
                long entries = 0;
                long bytes = 0;
                long physical = 0;
                for (LogId log : logs) {
                    LogState s = p.state(log);
                    Optional<CheckpointInfo> cp = p.checkpoints().latest(log);
                    entries += s.retainedEntries();
                    bytes += s.retainedPayloadBytes();
                    physical = physical < 0 || s.physicalBytes() < 0 ? -1 : physical + s.physicalBytes();
                    long cpBytes = cp.map(CheckpointInfo::sizeBytes).orElse(0L);
                    boolean manifest = cp.isPresent() && cp.get().formatVersion() == ManifestCodec.FORMAT;
                    if (!manifest && cpLimit != Long.MAX_VALUE
                            && cpBytes + s.retainedPayloadBytes() > cpLimit * 8 / 10) {
                        warnings.add("warning: " + log + ": checkpoint " + Text.bytes(cpBytes) + " + log "
                                + Text.bytes(s.retainedPayloadBytes()) + " is near or over the provider's checkpoint"
                                + " limit of " + Text.bytes(cpLimit) + " (maxCheckpointBytes): the engine refuses a"
                                + " checkpoint over it, and the log is then not trimmed");
                    }
                    t.row(log.toString(), s.lowestOffset(), s.committedTail(), s.trimWatermark(), s.epoch(),
                            Text.count(s.retainedEntries()), Text.bytes(s.retainedPayloadBytes()),
                            Text.bytes(s.physicalBytes()),
                            cp.map(c -> String.format(Locale.ROOT, "through %d, %s, epoch %d", c.throughOffset(),
                                    Text.bytes(c.sizeBytes()), c.epoch())).orElse("none"),
                            manifest ? runs(p, log, cp.get()) : "-");
                }
                if (logs.size() > 1) {
                    t.row(tree + " (" + logs.size() + " logs)", "", "", "", "", Text.count(entries),
                            Text.bytes(bytes), Text.bytes(physical), "", "");
                }
            }
            if (!t.isEmpty()) {
                out.print(markdown ? t.markdown() : t.render());
            }
            warnings.forEach(out::println);
            if (missing && names.size() == trees.size() && t.isEmpty()) {
                return ExitCodes.NOT_FOUND;
            }
        }
        return ExitCodes.OK;
    }

    /** The runs a manifest names: count per level and bytes, e.g. {@code L0 2, L1 5: 40.1 MB}. */
    private static String runs(WalStorageProvider p, LogId log, CheckpointInfo cp) {
        try (java.io.InputStream in = p.checkpoints().open(log, cp)) {
            Manifest m = ManifestCodec.decode(log, cp.throughOffset(), in.readAllBytes());
            java.util.TreeMap<Integer, Integer> levels = new java.util.TreeMap<>();
            for (Manifest.RunRef r : m.runs()) {
                levels.merge(r.level(), 1, Integer::sum);
            }
            if (levels.isEmpty()) {
                return "none";
            }
            StringBuilder b = new StringBuilder();
            levels.forEach((level, n) -> b.append(b.length() == 0 ? "" : ", ").append('L').append(level).append(' ')
                    .append(n));
            return b + ": " + Text.bytes(m.runBytes());
        } catch (java.io.IOException | RuntimeException e) {
            return "unreadable manifest: " + e.getMessage();
        }
    }

    /** A {@code chronicle:} directory that does not exist is reported, not created by opening the provider. */
    private static void requireLocalDataExists(URI uri) {
        if (!"chronicle".equalsIgnoreCase(uri.getScheme())) {
            return;
        }
        String ssp = uri.getSchemeSpecificPart();
        int q = ssp.indexOf('?');
        Path dir = Path.of(q >= 0 ? ssp.substring(0, q) : ssp);
        if (!Files.isDirectory(dir)) {
            throw new CliException(ExitCodes.NOT_FOUND, "no lattice data at " + dir.toAbsolutePath().normalize()
                    + " (nothing to inspect)");
        }
    }
}
