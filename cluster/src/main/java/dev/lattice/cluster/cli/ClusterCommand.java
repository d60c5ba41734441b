package dev.lattice.cluster.cli;

import dev.lattice.cli.ExitCodes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/**
 * {@code lattice cluster}: holds {@code node} (run one cluster node in the foreground), {@code certs} (make the CA,
 * trust store and node key stores of a TLS cluster) and {@code demo} (three node JVMs on an embedded PostgreSQL, one
 * killed). Loaded by class name by {@code dev.lattice.cli.Main}; without a
 * subcommand it prints its usage and fails with {@link ExitCodes#USAGE}. Not thread-safe (one run per instance).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "Serve trees from several JVMs (Pekko Cluster Sharding; see docs/cluster.md).",
        subcommands = {ClusterNodeCommand.class, ClusterCertsCommand.class, ClusterDemoCommand.class})
public final class ClusterCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /** Creates the command (picocli fills the fields). */
    public ClusterCommand() {
    }

    /** @return {@link ExitCodes#USAGE}, after printing the usage to standard error */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }
}
