package dev.lattice.bench.cli;

import dev.lattice.cli.ExitCodes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code lattice bench}: groups the benchmarks. */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Benchmarks.",
        subcommands = {ReplayBenchCommand.class, YcsbBenchCommand.class, FanOutBenchCommand.class})
public final class BenchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /** Creates the command. */
    public BenchCommand() {
    }

    /** Without a subcommand: prints the usage and fails with {@link ExitCodes#USAGE}. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }
}
