package dev.lattice.bench.cli;

import dev.lattice.cli.ExitCodes;
import dev.lattice.cli.Main;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParseResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code lattice bench} as the CLI finds it when the benchmarks module is on the class path: the real command, its
 * options, and bad usage failing with one line and exit code 2 (moved here from the CLI's CommandParsingTest).
 */
class BenchCommandParsingTest {

    private static Object leaf(ParseResult r) {
        while (r.hasSubcommand()) {
            r = r.subcommand();
        }
        return r.commandSpec().userObject();
    }

    @Test
    void theCliFindsTheBenchCommand() {
        assertThat((Object) Main.commandLine().getSubcommands().get("bench").getCommand()).isInstanceOf(BenchCommand.class);
        Cli.Run r = Cli.run();
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("Usage: lattice").contains("bench");
        assertThat(Cli.run("bench").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("bench").err()).contains("replay").contains("ycsb").contains("fan-out");
    }

    @Test
    void benchReplayOptionsParse() {
        ReplayBenchCommand b = (ReplayBenchCommand) leaf(Main.commandLine().parseArgs("bench", "replay",
                "--sizes", "10,20", "--modes", "CONCURRENT", "--writers", "4", "--partitions", "1",
                "--latency-ms", "2.5", "--checkpoint-every", "100", "--reopen", "crash", "--markdown"));
        assertThat(b.sizes).containsExactly(10, 20);
        assertThat(b.modes).containsExactly(ReplayBenchmark.Mode.CONCURRENT);
        assertThat(b.writers).isEqualTo(4);
        assertThat(b.partitions).isEqualTo(1);
        assertThat(b.latencyMs).isEqualTo(2.5);
        assertThat(b.checkpointEvery).containsExactly(100L);
        assertThat(b.reopen).containsExactly(ReplayBenchmark.Reopen.CRASH);
        assertThat(b.markdown).isTrue();

        ReplayBenchCommand d = (ReplayBenchCommand) leaf(Main.commandLine().parseArgs("bench", "replay"));
        assertThat(d.sizes).containsExactly(1_000, 10_000, 100_000);
        assertThat(d.modes).containsExactly(ReplayBenchmark.Mode.SEQUENTIAL, ReplayBenchmark.Mode.CONCURRENT);
        assertThat(d.writers).isEqualTo(64);
        assertThat(d.partitions).isEqualTo(8);
        assertThat(d.reopen).containsExactly(ReplayBenchmark.Reopen.CLEAN);
        assertThat(d.checkpointEvery).containsExactly(0L);
        ReplayBenchCommand both = (ReplayBenchCommand) leaf(Main.commandLine().parseArgs("bench", "replay",
                "--reopen", "clean,crash", "--checkpoint-every", "0,5000"));
        assertThat(both.reopen).containsExactly(ReplayBenchmark.Reopen.CLEAN, ReplayBenchmark.Reopen.CRASH);
        assertThat(both.checkpointEvery).containsExactly(0L, 5000L);
    }

    @Test
    void badValuesAreUsageErrors() {
        Cli.Run r = Cli.run("bench", "replay", "--provider", Cli.freshMemoryUri(), "--sizes", "0");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--sizes must be numbers in 1..100,000,000");
    }

    @Test
    void helpSucceeds() {
        assertThat(Cli.run("bench", "replay", "--help").out()).contains("--latency-ms").contains("--reopen");
    }

    @Test
    void unknownSchemeIsAClearUsageErrorWithoutStackTrace() {
        Cli.Run r = Cli.run("bench", "replay", "--provider", "nosuch:/x");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err().strip()).as(r.toString())
                .startsWith("lattice: no Lattice provider for scheme 'nosuch'")
                .contains("memory").contains("chronicle")
                .doesNotContain("\n").doesNotContain("Exception").doesNotContain("\tat ");
    }
}
