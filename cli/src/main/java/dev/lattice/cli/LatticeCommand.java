package dev.lattice.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** The top-level {@code lattice} command: only holds the subcommands. */
@Command(name = "lattice", mixinStandardHelpOptions = true, versionProvider = LatticeCommand.Version.class,
        description = "Lattice: an embedded ordered key-value engine on a write-ahead-log provider SPI.",
        subcommands = {DemoCommand.class, PutCommand.class, GetCommand.class, ScanCommand.class,
                DeleteCommand.class, WalCommand.class, ProvidersCommand.class, PlacementCommand.class,
                TreeCommand.class, TailCommand.class},
        footer = {"", "Exit codes: 0 ok, 1 failure, 2 bad usage, 3 not found, 4 verification failed."})
public final class LatticeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /** Documented here for the usage help; {@link Main} takes it out of the arguments before parsing. */
    @Option(names = ExtraClasspath.OPTION, paramLabel = "PATH",
            description = "Extra jars or class directories for every command, e.g. a third-party provider "
                    + "(separated by '${sys:path.separator}', dir/* for all jars in dir; also $LATTICE_CLASSPATH).")
    String classpath;

    /** Creates the command (picocli fills the fields). */
    public LatticeCommand() {
    }

    /** Without a subcommand: prints the usage to standard error and fails with {@link ExitCodes#USAGE}. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    /** The version from the jar manifest ({@code Implementation-Version}), or "dev" when run from classes. */
    public static final class Version implements IVersionProvider {

        /** Creates the provider. */
        public Version() {
        }

        /** @return one line, {@code lattice <version>} */
        @Override
        public String[] getVersion() {
            String v = LatticeCommand.class.getPackage().getImplementationVersion();
            return new String[] {"lattice " + (v == null ? "dev" : v)};
        }
    }
}
