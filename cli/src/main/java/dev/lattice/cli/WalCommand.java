package dev.lattice.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code lattice wal}: groups the log inspection subcommands. */
@Command(name = "wal", mixinStandardHelpOptions = true, description = "Inspect and repair write-ahead logs.",
        subcommands = {WalInspectCommand.class, WalRepairCommand.class})
public final class WalCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /** Creates the command. */
    public WalCommand() {
    }

    /** Without a subcommand: prints the usage and fails with {@link ExitCodes#USAGE}. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }
}
