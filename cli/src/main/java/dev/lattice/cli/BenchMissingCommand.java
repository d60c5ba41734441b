package dev.lattice.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code lattice bench} when the benchmarks module is not on the class path (a CLI built or run on its own): takes
 * any arguments and fails with {@link ExitCodes#USAGE}, saying how to get the benchmarks. The real command is
 * {@code dev.lattice.bench.cli.BenchCommand} in {@code lattice-benchmarks}; see {@link Main#BENCH_COMMAND_CLASS}.
 */
@Command(name = "bench", description = "Benchmarks (replay, ycsb, fan-out); needs the benchmarks module: "
        + "run ./lattice bench ... from the repository.")
public final class BenchMissingCommand implements Callable<Integer> {

    /** Whatever followed {@code bench}: ignored. */
    @Unmatched
    List<String> ignored;

    /** Creates the command. */
    public BenchMissingCommand() {
    }

    /**
     * @return never
     * @throws CliException (usage) always, naming what to run instead
     */
    @Override
    public Integer call() {
        throw CliException.usage("the benchmarks are not on the class path: run './lattice bench ...' from the "
                + "repository (it builds and uses the benchmarks module, lattice-benchmarks), see docs/cli.md");
    }
}
