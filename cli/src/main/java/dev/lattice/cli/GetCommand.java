package dev.lattice.cli;

import dev.lattice.engine.LatticeFollower;
import dev.lattice.engine.Versioned;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.Optional;
import java.util.concurrent.Callable;

/** {@code lattice get TREE KEY}: prints a value; exit code 3 when the key or tree is absent. */
@Command(name = "get", mixinStandardHelpOptions = true,
        description = "Print a key's value (as text, or hex when it is not printable UTF-8). Exit code 3 if absent. "
                + "Reads as a read-only follower: never takes the tree over from a running application.")
public final class GetCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TREE", description = "Tree name.")
    String tree;

    @Parameters(index = "1", paramLabel = "KEY", description = "The key.")
    String key;

    @Option(names = "--hex", description = "Print the value as hex.")
    boolean hex;

    @Option(names = "--with-version", description = "Print the version after the value, tab-separated.")
    boolean withVersion;

    /** Creates the command (picocli fills the fields). */
    public GetCommand() {
    }

    /**
     * Prints the value.
     *
     * @return {@link ExitCodes#OK}
     * @throws CliException with {@link ExitCodes#NOT_FOUND} when the tree or key is absent, {@link ExitCodes#USAGE}
     *     for a bad tree name or provider URI
     */
    @Override
    public Integer call() {
        try (LatticeFollower follower = Support.openFollower(common)) {
            Optional<Versioned> v = Support.followTree(follower, tree).getVersioned(key);
            if (v.isEmpty()) {
                throw new CliException(ExitCodes.NOT_FOUND, "key '" + key + "' not found in tree '" + tree + "'");
            }
            String text = Text.value(v.get().value(), hex);
            spec.commandLine().getOut().println(withVersion ? text + "\tv" + v.get().version() : text);
        }
        return ExitCodes.OK;
    }
}
