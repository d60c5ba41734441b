package dev.lattice.bench.cli;

import dev.lattice.cli.ExitCodes;
import dev.lattice.cli.Main;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code lattice bench ycsb}: options, bad usage, and a tiny run of the real YCSB client on {@code memory:}. */
class YcsbBenchCommandTest {

    @Test
    void optionsParseWithDefaults() {
        YcsbBenchCommand d = (YcsbBenchCommand) Main.commandLine().parseArgs("bench", "ycsb").subcommand()
                .subcommand().commandSpec().userObject();
        assertThat(d.workload).isEqualTo("a");
        assertThat(d.records).isEqualTo(10_000);
        assertThat(d.operations).isEqualTo(10_000);
        assertThat(d.threads).isEqualTo(1);
        assertThat(d.update).isEqualTo("rmw");

        YcsbBenchCommand b = (YcsbBenchCommand) Main.commandLine().parseArgs("bench", "ycsb", "--workload", "E",
                "--records", "5", "--operations", "7", "--threads", "3", "-p", "fieldcount=2").subcommand()
                .subcommand().commandSpec().userObject();
        assertThat(b.workload).isEqualTo("E");
        assertThat(b.records).isEqualTo(5);
        assertThat(b.operations).isEqualTo(7);
        assertThat(b.threads).isEqualTo(3);
        assertThat(b.extra).containsEntry("fieldcount", "2");
    }

    @Test
    void badUsageIsOneLineAndExitCode2() {
        Cli.Run r = Cli.run("bench", "ycsb", "--workload", "g", "--provider", Cli.freshMemoryUri());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--workload must be one of a, b, c, d, e, f").hasLineCount(1);
        Cli.Run t = Cli.run("bench", "ycsb", "--threads", "0", "--provider", Cli.freshMemoryUri());
        assertThat(t.code()).isEqualTo(ExitCodes.USAGE);
        Cli.Run u = Cli.run("bench", "ycsb", "--provider", "nosuch:x");
        assertThat(u.code()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void tinyRunPrintsYcsbReportsOfBothPhases() {
        Cli.Run r = Cli.run("bench", "ycsb", "--workload", "f", "--records", "100", "--operations", "200",
                "--threads", "2", "--provider", Cli.freshMemoryUri());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("# load phase", "# run phase", "[INSERT], Return=OK, 100",
                "[READ-MODIFY-WRITE], Operations", "[OVERALL], Throughput(ops/sec)", "99thPercentileLatency(us)");
    }
}
