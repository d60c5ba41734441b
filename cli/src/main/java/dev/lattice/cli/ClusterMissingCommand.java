package dev.lattice.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code lattice cluster} when the cluster module is not on the class path (the CLI on its own, which never carries
 * Pekko): takes any arguments and fails with {@link ExitCodes#USAGE}, saying how to get the cluster commands. The
 * real command is {@code dev.lattice.cluster.cli.ClusterCommand} in {@code lattice-cluster}; see
 * {@link Main#CLUSTER_COMMAND_CLASS}. Stateless apart from the ignored arguments.
 */
@Command(name = "cluster", description = "Serve trees from several JVMs (node, demo); needs the cluster module: "
        + "run ./lattice cluster ... from the repository.")
public final class ClusterMissingCommand implements Callable<Integer> {

    /** Whatever followed {@code cluster}: ignored. */
    @Unmatched
    List<String> ignored;

    /** Creates the command. */
    public ClusterMissingCommand() {
    }

    /**
     * @return never
     * @throws CliException (usage) always, naming what to run instead
     */
    @Override
    public Integer call() {
        throw CliException.usage("the cluster module is not on the class path: run './lattice cluster ...' from "
                + "the repository (it builds and uses the cluster module, lattice-cluster), see docs/cluster.md");
    }
}
