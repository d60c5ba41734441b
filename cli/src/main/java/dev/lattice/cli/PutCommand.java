package dev.lattice.cli;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code lattice put TREE KEY VALUE}: writes one key (creating the tree if needed) and prints its version. */
@Command(name = "put", mixinStandardHelpOptions = true,
        description = "Write a value (durable when the command returns); creates the tree if needed.")
public final class PutCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TREE", description = "Tree name ([A-Za-z0-9._-], up to 64 characters).")
    String tree;

    @Parameters(index = "1", paramLabel = "KEY", description = "The key.")
    String key;

    @Parameters(index = "2", paramLabel = "VALUE", description = "The value, as UTF-8 text (or hex with --hex).")
    String value;

    @Option(names = "--hex", description = "VALUE is hex digits (optional 0x prefix).")
    boolean hex;

    @Option(names = "--partitions", paramLabel = "N",
            description = "Partitions of the tree if this creates it (default ${DEFAULT-VALUE}).")
    int partitions = LatticeConfig.DEFAULT_PARTITIONS;

    /** Creates the command (picocli fills the fields). */
    public PutCommand() {
    }

    /**
     * Writes the value and prints its version.
     *
     * @return {@link ExitCodes#OK}
     * @throws CliException with {@link ExitCodes#USAGE} for a bad tree name, value, partition count or URI
     */
    @Override
    public Integer call() {
        Support.checkTreeName(tree);
        byte[] bytes = Text.parseValue(value, hex);
        if (partitions < 1 || partitions > dev.lattice.spi.LogId.MAX_PARTITION + 1) {
            throw CliException.usage("--partitions must be in 1.." + (dev.lattice.spi.LogId.MAX_PARTITION + 1)
                    + ", got " + partitions);
        }
        try (Lattice lattice = Support.openLattice(common)) {
            Tree t = lattice.tree(tree, partitions);
            long version = t.put(key, bytes);
            spec.commandLine().getOut().println("ok " + tree + " " + key + " v" + version);
        }
        return ExitCodes.OK;
    }
}
