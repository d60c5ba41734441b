package dev.lattice.cli;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeFollower;
import dev.lattice.engine.NoSuchTreeException;
import dev.lattice.engine.TreeInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code lattice tree list|info|drop}: the trees of the catalog and their lifecycle. {@code list} and {@code info}
 * only read the catalog; {@code drop} fences the tree's logs (a running application that writes the tree loses it),
 * records the drop and deletes the tree's logs, runs and checkpoints on every provider it names.
 */
@Command(name = "tree", mixinStandardHelpOptions = true,
        description = "List trees, show one, or drop one (its logs, runs and checkpoints are deleted).",
        subcommands = {TreeCommand.ListTrees.class, TreeCommand.Info.class, TreeCommand.Drop.class})
public final class TreeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /** Creates the command (picocli fills the fields). */
    public TreeCommand() {
    }

    /** Without a subcommand: prints the usage and fails with {@link ExitCodes#USAGE}. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    private static List<Object> row(TreeInfo t) {
        return List.of(t.name(), t.partitions(), t.hashVersion(), t.created(), t.placement().version(),
                t.placement().distinctKeys());
    }

    /** {@code tree list}: every tree with partitions, hash version, creation time and placement. */
    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the trees of the catalog.")
    public static final class ListTrees implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Spec
        CommandSpec spec;

        /** Creates the command (picocli fills the fields). */
        public ListTrees() {
        }

        /** @return {@link ExitCodes#OK} */
        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (LatticeFollower l = Support.openFollower(common)) {
                Table table = new Table("tree", ">partitions", ">hash", "created", ">placement version", "keys");
                for (TreeInfo t : l.treeInfos()) {
                    table.row(row(t).toArray());
                }
                out.print(table.isEmpty() ? "no trees\n" : table.render());
            }
            return ExitCodes.OK;
        }
    }

    /** {@code tree info TREE}: one tree's catalog entry, with the key of every partition. */
    @Command(name = "info", mixinStandardHelpOptions = true, description = "Show one tree's catalog entry.")
    public static final class Info implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TREE", description = "The tree.")
        String tree;

        /** Creates the command (picocli fills the fields). */
        public Info() {
        }

        /** @return {@link ExitCodes#OK}, or throws {@link CliException} with {@link ExitCodes#NOT_FOUND} */
        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (LatticeFollower l = Support.openFollower(common)) {
                TreeInfo t = l.treeInfo(Support.checkTreeName(tree));
                out.println("tree: " + t.name());
                out.println("partitions: " + t.partitions());
                out.println("hash version: " + t.hashVersion());
                out.println("created: " + t.created());
                out.println("placement version: " + t.placement().version());
                out.println("placement: " + t.placement().keys());
            } catch (NoSuchTreeException e) {
                throw new CliException(ExitCodes.NOT_FOUND, e.getMessage());
            }
            return ExitCodes.OK;
        }
    }

    /** {@code tree drop TREE --yes}: drops a tree and purges its storage (repeat to resume a cut-short purge). */
    @Command(name = "drop", mixinStandardHelpOptions = true,
            description = "Drop a tree: it stops opening at once; its logs, runs and checkpoints are deleted. "
                    + "Running it again resumes an interrupted purge.")
    public static final class Drop implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TREE", description = "The tree.")
        String tree;

        @Option(names = "--yes", description = "Confirm: the tree's data is deleted for good.")
        boolean yes;

        /** Creates the command (picocli fills the fields). */
        public Drop() {
        }

        /**
         * @return {@link ExitCodes#OK}; {@link ExitCodes#USAGE} without {@code --yes}; throws {@link CliException}
         *     with {@link ExitCodes#NOT_FOUND} for an unknown tree
         */
        @Override
        public Integer call() {
            Support.checkTreeName(tree);
            if (!yes) {
                throw new CliException(ExitCodes.USAGE, "dropping tree '" + tree + "' deletes its data for good; "
                        + "add --yes to confirm");
            }
            PrintWriter out = spec.commandLine().getOut();
            try (Lattice l = Support.openLattice(common)) {
                int logs = l.dropTree(tree);
                out.println("dropped tree '" + tree + "': " + logs + " log(s) deleted");
            } catch (NoSuchTreeException e) {
                throw new CliException(ExitCodes.NOT_FOUND, e.getMessage());
            }
            return ExitCodes.OK;
        }
    }
}
