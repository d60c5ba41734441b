package dev.lattice.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The picocli model: every subcommand parses its options; bad usage fails with one line and exit code 2. */
class CommandParsingTest {

    private static Object leaf(ParseResult r) {
        while (r.hasSubcommand()) {
            r = r.subcommand();
        }
        return r.commandSpec().userObject();
    }

    @Test
    void demoOptionsParseWithDefaults() {
        CommandLine cl = Main.commandLine();
        DemoCommand d = (DemoCommand) leaf(cl.parseArgs("demo"));
        assertThat(d.duration).isEqualTo(Duration.ofSeconds(15));
        assertThat(d.writers).isEqualTo(8);
        assertThat(d.readers).isEqualTo(2);
        assertThat(d.keys).isEqualTo(10_000);
        assertThat(d.partitions).isEqualTo(8);
        assertThat(d.common.provider()).isEqualTo(
                System.getenv("LATTICE_PROVIDER") != null ? System.getenv("LATTICE_PROVIDER")
                        : CommonOptions.DEFAULT_PROVIDER);

        d = (DemoCommand) leaf(Main.commandLine().parseArgs("demo", "--duration", "1500ms", "--writers", "3",
                "--readers", "0", "--keys", "99", "--provider", "memory:x", "-v"));
        assertThat(d.duration).isEqualTo(Duration.ofMillis(1500));
        assertThat(d.writers).isEqualTo(3);
        assertThat(d.readers).isZero();
        assertThat(d.keys).isEqualTo(99);
        assertThat(d.common.provider()).isEqualTo("memory:x");
        assertThat(d.common.verbose()).isTrue();
    }

    @Test
    void pointCommandsParse() {
        PutCommand p = (PutCommand) leaf(Main.commandLine().parseArgs("put", "t", "k", "v", "--partitions", "2"));
        assertThat(List.of(p.tree, p.key, p.value)).containsExactly("t", "k", "v");
        assertThat(p.partitions).isEqualTo(2);
        GetCommand g = (GetCommand) leaf(Main.commandLine().parseArgs("get", "t", "k", "--hex"));
        assertThat(g.hex).isTrue();
        ScanCommand s = (ScanCommand) leaf(Main.commandLine().parseArgs("scan", "t", "--from", "a", "--to", "b",
                "--reverse", "--limit", "0", "--keys-only"));
        assertThat(List.of(s.from, s.to)).containsExactly("a", "b");
        assertThat(s.reverse).isTrue();
        assertThat(s.limit).isZero();
        DeleteCommand del = (DeleteCommand) leaf(Main.commandLine().parseArgs("delete", "t", "k"));
        assertThat(del.key).isEqualTo("k");
        WalInspectCommand w = (WalInspectCommand) leaf(Main.commandLine().parseArgs("wal", "inspect", "a", "b"));
        assertThat(w.trees).containsExactly("a", "b");
        assertThat(leaf(Main.commandLine().parseArgs("providers"))).isInstanceOf(ProvidersCommand.class);
    }

    @Test
    void unknownOptionIsOneLineUsageError() {
        Cli.Run r = Cli.run("demo", "--no-such-option");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err().strip()).doesNotContain("\n").contains("Unknown option: '--no-such-option'")
                .contains("lattice demo --help");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void badValuesAreUsageErrors() {
        assertThat(Cli.run("demo", "--writers", "many").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("demo", "--duration", "soon").err()).contains("is not a duration");
        Cli.Run r = Cli.run("demo", "--provider", Cli.freshMemoryUri(), "--writers", "0");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--writers must be in 1..1024, got 0");
        r = Cli.run("put", "--provider", Cli.freshMemoryUri(), "bad name", "k", "v");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("tree name 'bad name' must match");
    }

    @Test
    void missingSubcommandPrintsUsageAndFails() {
        Cli.Run r = Cli.run();
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("Usage: lattice").contains("demo").contains("bench");
        assertThat(Cli.run("wal").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(Cli.run("bench").code()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void helpAndVersionSucceed() {
        Cli.Run r = Cli.run("--help");
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("providers").contains("wal").contains("Exit codes");
        Cli.Run v = Cli.run("--version");
        assertThat(v.code()).isZero();
        assertThat(v.out()).startsWith("lattice ");
    }

    @Test
    void unknownSchemeIsAClearUsageErrorWithoutStackTrace() {
        for (String[] args : new String[][] {
                {"demo", "--provider", "nosuch:/x"},
                {"get", "--provider", "nosuch:/x", "t", "k"},
                {"wal", "inspect", "--provider", "nosuch:/x"}}) {
            Cli.Run r = Cli.run(args);
            assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err().strip()).as(r.toString())
                    .startsWith("lattice: no Lattice provider for scheme 'nosuch'")
                    .contains("memory").contains("chronicle")
                    .doesNotContain("\n").doesNotContain("Exception").doesNotContain("\tat ");
        }
    }

    /** The CLI alone: {@code bench} is a stand-in that names the benchmarks module (tests of the real one there). */
    @Test
    void benchWithoutTheBenchmarksModuleIsAUsageErrorThatSaysWhatToRun() {
        assertThat((Object) Main.commandLine().getSubcommands().get("bench").getCommand())
                .isInstanceOf(BenchMissingCommand.class);
        for (String[] args : new String[][] {{"bench"}, {"bench", "replay", "--sizes", "10"}, {"bench", "--help"}}) {
            Cli.Run r = Cli.run(args);
            assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err().strip()).as(r.toString()).doesNotContain("\n")
                    .contains("./lattice bench").contains("lattice-benchmarks");
        }
    }

    /** The CLI alone: {@code cluster} is a stand-in that names the cluster module (its real tests are there). */
    @Test
    void clusterWithoutTheClusterModuleIsAUsageErrorThatSaysWhatToRun() {
        assertThat((Object) Main.commandLine().getSubcommands().get("cluster").getCommand())
                .isInstanceOf(ClusterMissingCommand.class);
        for (String[] args : new String[][] {{"cluster"}, {"cluster", "demo"}, {"cluster", "node", "--port", "1"},
                {"cluster", "--help"}}) {
            Cli.Run r = Cli.run(args);
            assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err().strip()).as(r.toString()).doesNotContain("\n")
                    .contains("./lattice cluster").contains("lattice-cluster");
        }
        assertThat(Cli.run("--help").out()).contains("cluster");
    }

    /** Pekko stays out of the CLI's own class path (it comes with the cluster module only). */
    @Test
    void theCliClassPathHasNoPekko() {
        assertThat(getClass().getClassLoader().getResource("org/apache/pekko/actor/ActorSystem.class")).isNull();
        assertThat(System.getProperty("java.class.path")).doesNotContain("pekko");
    }

    @Test
    void uriWithoutSchemeIsAUsageError() {
        Cli.Run r = Cli.run("get", "--provider", "just-a-path", "t", "k");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("has no scheme");
    }

    @Test
    void verboseAddsTheStackTrace() {
        Cli.Run r = Cli.run("get", "--provider", "nosuch:/x", "t", "k", "--verbose");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("lattice: no Lattice provider").contains("\tat ");
    }

    @Test
    void durationConverterAcceptsUnitsAndRejectsZero() {
        DurationConverter c = new DurationConverter();
        assertThat(c.convert("2")).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.convert("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(c.convert("0.5m")).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.convert("PT3S")).isEqualTo(Duration.ofSeconds(3));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.convert("0s"))
                .hasMessageContaining("must be positive");
    }
}
