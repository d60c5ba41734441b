package dev.lattice.cli;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.RepairReport;
import dev.lattice.spi.WalStorageProvider;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * {@code lattice wal repair TREE PARTITION [--truncate]}: the operator's explicit way out of a damaged log (issue 14).
 * Without {@code --truncate} it only reads the log (no claim) and reports the first damaged offset. With
 * {@code --truncate} it claims the log (fencing out any running writer) and calls the provider's
 * {@link WalStorageProvider#repair}, which truncates at the damage, and prints exactly which offsets were lost.
 */
@Command(name = "repair", mixinStandardHelpOptions = true,
        description = "Find the first damaged record of a log (read-only), or with --truncate cut the log there and "
                + "report exactly which offsets are lost (claims the log: stop the application first).")
public final class WalRepairCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TREE", description = "The tree.")
    String tree;

    @Parameters(index = "1", paramLabel = "PARTITION", description = "The partition (0-based).")
    int partition;

    @Option(names = "--truncate", description = "Truncate the log at its first damaged record. Loses every entry "
            + "from there on; prints the lost offsets.")
    boolean truncate;

    /** Creates the command (picocli fills the fields). */
    public WalRepairCommand() {
    }

    /**
     * Checks or repairs the log.
     *
     * @return {@link ExitCodes#OK} when the log is intact or was repaired, {@link ExitCodes#VERIFICATION_FAILED} when
     *     a check without {@code --truncate} found damage, {@link ExitCodes#NOT_FOUND} when the log does not exist
     * @throws CliException (usage) for a bad tree name or partition, or a provider without repair
     */
    @Override
    public Integer call() {
        LogId log;
        try {
            log = new LogId(tree, partition);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        try (WalStorageProvider p = Support.openProvider(common.provider())) {
            if (!p.logs(tree).contains(log)) {
                throw new CliException(ExitCodes.NOT_FOUND, "log " + log + " does not exist on this provider");
            }
            if (!truncate) {
                return check(p, log, out);
            }
            if (!p.describe().has(ProviderFeature.REPAIR)) {
                throw CliException.usage("provider '" + p.describe().name() + "' does not offer wal repair (its logs"
                        + " are not scanned for a torn tail); restore the log from a backup instead");
            }
            Fence f = p.claim(log);
            RepairReport r = p.repair(log, f);
            if (r.isClean()) {
                out.println(log + ": no damage found; committed tail " + r.tailAfter() + " (nothing changed)");
            } else {
                out.println(log + ": truncated at offset " + r.firstLostOffset() + "; lost offsets "
                        + r.firstLostOffset() + ".." + r.lastLostOffset() + " (" + r.lostEntries()
                        + " entries); committed tail " + r.tailBefore() + " -> " + r.tailAfter());
                out.println("damage: " + r.detail());
            }
            return ExitCodes.OK;
        }
    }

    /** Reads every retained entry (no claim) and reports the first damaged one. */
    private Integer check(WalStorageProvider p, LogId log, PrintWriter out) {
        LogState s;
        long from;
        try {
            s = p.state(log);
            from = s.trimWatermark();
            long read = 0;
            while (from < s.committedTail()) {
                ReadPage page = p.read(log, from, 10_000, 8L << 20);
                if (page.isEmpty()) {
                    break;
                }
                for (LogEntry e : page.entries()) {
                    from = e.offset();
                    read++;
                }
            }
            if (from < s.committedTail()) {
                out.println(log + ": DAMAGED: the log ends at offset " + from + " but its committed tail is "
                        + s.committedTail());
                return ExitCodes.VERIFICATION_FAILED;
            }
            out.println(log + ": intact: " + read + " entries read through committed tail " + s.committedTail());
            return ExitCodes.OK;
        } catch (CorruptLogException e) {
            out.println(log + ": DAMAGED at offset " + e.offset() + ": " + e.getMessage());
            out.println("run again with --truncate to cut the log there (entries from offset " + e.offset()
                    + " on are lost)");
            return ExitCodes.VERIFICATION_FAILED;
        }
    }
}
