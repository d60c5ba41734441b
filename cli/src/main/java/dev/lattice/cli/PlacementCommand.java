package dev.lattice.cli;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.MovePlan;
import dev.lattice.engine.Placement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code lattice placement show|audit|plan-move|move|reclaim}: named providers and per-log placement. Further
 * providers are registered with {@code --named KEY=URI} (repeatable, see {@link CommonOptions}); {@code --provider}
 * is the {@code default} key.
 */
@Command(name = "placement", mixinStandardHelpOptions = true,
        description = "Show, audit and move where the logs of trees live (named providers).",
        subcommands = {PlacementCommand.Show.class, PlacementCommand.Audit.class, PlacementCommand.PlanMove.class,
                PlacementCommand.Move.class, PlacementCommand.Reclaim.class})
public final class PlacementCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /** Creates the command (picocli fills the fields). */
    public PlacementCommand() {
    }

    /** Without a subcommand: prints the usage and fails with {@link ExitCodes#USAGE}. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    static Map<Integer, String> targets(List<String> specs) {
        Map<Integer, String> out = new LinkedHashMap<>();
        for (String s : specs) {
            int eq = s.indexOf('=');
            try {
                out.put(Integer.parseInt(s.substring(0, eq)), s.substring(eq + 1));
            } catch (RuntimeException e) {
                throw new CliException(ExitCodes.USAGE, "a move target is PARTITION=KEY, e.g. 3=acct-b; got '" + s + "'");
            }
        }
        return out;
    }

    /** {@code placement show [TREE]}: every tree's placement, or one tree's. */
    @Command(name = "show", mixinStandardHelpOptions = true, description = "Print the provider key of every log.")
    public static final class Show implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", arity = "0..1", paramLabel = "TREE", description = "Only this tree.")
        String tree;

        /** Creates the command (picocli fills the fields). */
        public Show() {
        }

        /**
         * @return {@link ExitCodes#OK}, or throws {@link CliException} with {@link ExitCodes#NOT_FOUND}
         */
        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (Lattice l = Support.openLattice(common)) {
                Map<String, Placement> all = l.placements();
                if (tree != null && !all.containsKey(tree)) {
                    throw new CliException(ExitCodes.NOT_FOUND, "tree '" + tree + "' not found");
                }
                out.println("registered keys: " + l.providerKeys());
                all.forEach((name, p) -> {
                    if (tree == null || tree.equals(name)) {
                        out.println(name + " (version " + p.version() + "): " + p.keys());
                    }
                });
            }
            return ExitCodes.OK;
        }
    }

    /** {@code placement audit}: keys that placements name but this process lacks. */
    @Command(name = "audit", mixinStandardHelpOptions = true,
            description = "Check that every key the placements name is registered; exit 1 if not.")
    public static final class Audit implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Spec
        CommandSpec spec;

        /** Creates the command (picocli fills the fields). */
        public Audit() {
        }

        /** @return {@link ExitCodes#OK} when every key resolves, else {@link ExitCodes#FAILURE} */
        @Override
        public Integer call() {
            try (Lattice l = Support.openLattice(common)) {
                Map<String, List<String>> missing = l.auditPlacements();
                PrintWriter out = spec.commandLine().getOut();
                if (missing.isEmpty()) {
                    out.println("ok: every placement resolves with keys " + l.providerKeys());
                    return ExitCodes.OK;
                }
                missing.forEach((t, keys) -> out.println(t + ": missing keys " + keys));
                return ExitCodes.FAILURE;
            }
        }
    }

    /** {@code placement plan-move TREE P=KEY...}: dry run. */
    @Command(name = "plan-move", mixinStandardHelpOptions = true, description = "Dry run of a move.")
    public static final class PlanMove implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TREE", description = "The tree.")
        String tree;

        @Parameters(index = "1..*", arity = "1..*", paramLabel = "PARTITION=KEY", description = "Targets.")
        List<String> targets;

        /** Creates the command (picocli fills the fields). */
        public PlanMove() {
        }

        /** @return {@link ExitCodes#OK} */
        @Override
        public Integer call() {
            try (Lattice l = Support.openForTree(common, tree)) {
                MovePlan plan = l.planMove(tree, targets(targets));
                PrintWriter out = spec.commandLine().getOut();
                out.println("tree " + tree + ", placement version " + plan.placementVersion());
                for (MovePlan.LogMove m : plan.logs()) {
                    out.printf("%s: %s -> %s, offsets %d..%d, %d entries, %d payload bytes, checkpoint %d bytes%n",
                            m.log(), m.from(), m.to(), m.lowestOffset(), m.committedTail(), m.entries(),
                            m.payloadBytes(), m.checkpointBytes());
                }
                if (plan.logs().isEmpty()) {
                    out.println("nothing to move");
                }
            }
            return ExitCodes.OK;
        }
    }

    /** {@code placement move TREE P=KEY...}: executes a move. */
    @Command(name = "move", mixinStandardHelpOptions = true,
            description = "Move logs to other keys, preserving offsets; flips all or nothing.")
    public static final class Move implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TREE", description = "The tree.")
        String tree;

        @Parameters(index = "1..*", arity = "1..*", paramLabel = "PARTITION=KEY", description = "Targets.")
        List<String> targets;

        @Option(names = "--pause-timeout", paramLabel = "DURATION", defaultValue = "30s",
                converter = DurationConverter.class, description = "Drain budget (default ${DEFAULT-VALUE}).")
        Duration pauseTimeout;

        /** Creates the command (picocli fills the fields). */
        public Move() {
        }

        /** @return {@link ExitCodes#OK} */
        @Override
        public Integer call() {
            try (Lattice l = Support.openForTree(common, tree)) {
                Placement p = l.move(tree, targets(targets), pauseTimeout);
                spec.commandLine().getOut().println(tree + " (version " + p.version() + "): " + p.keys());
            }
            return ExitCodes.OK;
        }
    }

    /** {@code placement reclaim TREE PARTITION KEY}: drops a moved-away copy. */
    @Command(name = "reclaim", mixinStandardHelpOptions = true,
            description = "Drop the old copy of a moved log from a key it is no longer placed on.")
    public static final class Reclaim implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TREE", description = "The tree.")
        String tree;

        @Parameters(index = "1", paramLabel = "PARTITION", description = "The partition.")
        int partition;

        @Parameters(index = "2", paramLabel = "KEY", description = "The provider key to reclaim from.")
        String key;

        /** Creates the command (picocli fills the fields). */
        public Reclaim() {
        }

        /** @return {@link ExitCodes#OK}; refusing the key the log is placed on is {@link ExitCodes#FAILURE} */
        @Override
        public Integer call() {
            try (Lattice l = Support.openForTree(common, tree)) {
                long bytes;
                try {
                    bytes = l.reclaim(tree, partition, key);
                } catch (IllegalStateException e) {
                    throw new CliException(ExitCodes.FAILURE, e.getMessage());
                }
                spec.commandLine().getOut().println("reclaimed " + bytes + " payload bytes of " + tree + "/" + partition
                        + " from '" + key + "'");
            }
            return ExitCodes.OK;
        }
    }
}
