package dev.lattice.cli;

import dev.lattice.engine.LatticeFollower;
import dev.lattice.engine.Tree;
import dev.lattice.engine.feed.Change;
import dev.lattice.engine.feed.ChangeCursor;
import dev.lattice.engine.feed.ChangePosition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code lattice tail TREE}: prints a tree's committed changes as they happen, read through a read-only follower's
 * change feed, so it never claims a log of the application that writes the tree.
 */
@Command(name = "tail", mixinStandardHelpOptions = true,
        description = "Print a tree's committed changes in log order per partition: PARTITION@OFFSET<TAB>KIND<TAB>KEY"
                + "<TAB>VALUE (and expiry, atomic write id). Reads as a read-only follower: never takes the tree over.")
public final class TailCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TREE", description = "Tree name.")
    String tree;

    @Option(names = "--from", paramLabel = "POSITION", defaultValue = "now",
            description = "Where to start: 'now' (default), 'beginning', or a position printed by an earlier run"
                    + " (v1:o0,o1,...).")
    String from;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "0",
            description = "Stop after N changes (0: no limit).")
    long limit;

    @Option(names = "--idle-exit", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Stop once no change arrived for this long (e.g. 5s); default: follow until interrupted.")
    Duration idleExit;

    @Option(names = "--hex", description = "Print values as hex.")
    boolean hex;

    /** Creates the command (picocli fills the fields). */
    public TailCommand() {
    }

    /**
     * Follows the tree's change feed and prints each change; at the end prints the position to resume from.
     *
     * @return {@link ExitCodes#OK}
     * @throws CliException (usage) for a bad position, tree name or provider; (not found) for a missing tree
     */
    @Override
    public Integer call() {
        ChangePosition start = position(from);
        PrintWriter out = spec.commandLine().getOut();
        try (LatticeFollower follower = Support.openFollower(common)) {
            Tree t = Support.followTree(follower, tree);
            long printed = 0;
            try (ChangeCursor c = t.changes(start)) {
                long idleSince = System.nanoTime();
                while (limit == 0 || printed < limit) {
                    List<Change> batch = c.poll(Duration.ofMillis(200));
                    if (batch.isEmpty()) {
                        if (idleExit != null && System.nanoTime() - idleSince > idleExit.toNanos()) {
                            break;
                        }
                        continue;
                    }
                    idleSince = System.nanoTime();
                    for (Change ch : batch) {
                        out.println(line(ch));
                        printed++;
                    }
                    out.flush();
                }
                spec.commandLine().getErr().println("position: " + c.position());
            }
        }
        return ExitCodes.OK;
    }

    private static ChangePosition position(String text) {
        switch (text) {
            case "now":
                return ChangePosition.now();
            case "beginning":
                return ChangePosition.beginning();
            default:
                try {
                    return ChangePosition.parse(text);
                } catch (IllegalArgumentException e) {
                    throw CliException.usage("--from: " + e.getMessage());
                }
        }
    }

    private String line(Change c) {
        StringBuilder b = new StringBuilder().append(c.partition()).append('@').append(c.offset()).append('\t')
                .append(c.kind()).append('\t').append(c.key());
        switch (c.kind()) {
            case PUT -> b.append('\t').append(Text.value(c.value(), hex));
            case DELETE_RANGE -> b.append('\t').append("..").append(c.toKeyExclusive());
            default -> b.append('\t');
        }
        b.append("\tv").append(c.version());
        if (c.expiresAtMillis() != 0) {
            b.append("\texpires ").append(java.time.Instant.ofEpochMilli(c.expiresAtMillis()));
        }
        if (c.atomicWriteId() != null) {
            b.append("\tatomic ").append(c.atomicWriteId());
        }
        return b.toString();
    }
}
