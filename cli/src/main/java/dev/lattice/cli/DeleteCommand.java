package dev.lattice.cli;

import dev.lattice.engine.Lattice;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code lattice delete TREE KEY}: removes a key; exit code 3 when it was absent. */
@Command(name = "delete", mixinStandardHelpOptions = true,
        description = "Delete a key (durable when the command returns). Exit code 3 if it was absent.")
public final class DeleteCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TREE", description = "Tree name.")
    String tree;

    @Parameters(index = "1", paramLabel = "KEY", description = "The key.")
    String key;

    /** Creates the command (picocli fills the fields). */
    public DeleteCommand() {
    }

    /**
     * Deletes the key.
     *
     * @return {@link ExitCodes#OK}
     * @throws CliException with {@link ExitCodes#NOT_FOUND} when the tree or key is absent, {@link ExitCodes#USAGE}
     *     for a bad tree name or provider URI
     */
    @Override
    public Integer call() {
        try (Lattice lattice = Support.openForTree(common, tree)) {
            if (!lattice.tree(tree).delete(key)) {
                throw new CliException(ExitCodes.NOT_FOUND, "key '" + key + "' not found in tree '" + tree
                        + "' (nothing deleted)");
            }
            spec.commandLine().getOut().println("deleted " + tree + " " + key);
        }
        return ExitCodes.OK;
    }
}
