package dev.lattice.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hints of the CLI (issue 20 part 6): "did you mean" for unknown subcommands, options and schemes, and the URI form
 * in {@code lattice providers}.
 */
class CliHintsTest {

    private static String oneLineError(Cli.Run r) {
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        String err = r.err().strip();
        assertThat(err).as(r.toString()).doesNotContain("\n").doesNotContain("Exception").doesNotContain("\tat ");
        return err;
    }

    @Test
    void aMistypedSubcommandSuggestsTheRealOne() {
        assertThat(oneLineError(Cli.run("gett", "--provider", "memory:x", "t", "k")))
                .isEqualTo("lattice: unknown command 'gett' for 'lattice'; did you mean 'get'? (see 'lattice --help')")
                .doesNotContain("Unmatched");
        assertThat(oneLineError(Cli.run("wal", "inspcet"))).startsWith("lattice: unknown command 'inspcet' for "
                + "'lattice wal'; did you mean 'inspect'?");
        assertThat(oneLineError(Cli.run("frobnicate"))).startsWith("lattice: unknown command 'frobnicate' for "
                + "'lattice'; commands: ").contains("get").contains("providers").doesNotContain("did you mean");
    }

    @Test
    void aMistypedOptionSuggestsTheRealOne() {
        assertThat(oneLineError(Cli.run("get", "--provder", "memory:x", "t", "k")))
                .startsWith("lattice: Unknown option: '--provder'; did you mean '--provider'?")
                .endsWith("(see 'lattice get --help')");
        assertThat(oneLineError(Cli.run("scan", "--provider=memory:x", "--revers", "t")))
                .contains("Unknown option: '--revers'; did you mean '--reverse'?");
    }

    @Test
    void aMistypedSchemeSuggestsTheSchemeNotAnArtifact() {
        String err = oneLineError(Cli.run("get", "--provider", "memroy:x", "t", "k"));
        assertThat(err).startsWith("lattice: no Lattice provider for scheme 'memroy' on the classpath; "
                + "did you mean 'memory'?").doesNotContain("lattice-provider-memroy");
        assertThat(oneLineError(Cli.run("get", "--provider", "chronicel:./x", "t", "k")))
                .contains("did you mean 'chronicle'?");
        assertThat(oneLineError(Cli.run("get", "--provider", "memory:x?maxEntryByte=1", "t", "k")))
                .contains("did you mean 'maxEntryBytes'?");
    }

    @Test
    void providersShowsEachProvidersRealUriForm() {
        Cli.Run r = Cli.run("providers");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("postgres: pass --provider postgres://host[:port]/database?user=...&schema=... to "
                        + "open it")
                .contains("dynamodb: pass --provider dynamodb://<table>?region=...")
                .contains("azure-tables: pass --provider azure-tables://")
                .doesNotContain("postgres:...").doesNotContain("dynamodb:...");
    }

    @Test
    void jdbcAndPostgresqlUrisAreTakenForThePostgresProvider() {
        // parsing and scheme resolution only: the server is down, which the message must say
        Cli.Run r = Cli.run("get", "--provider", "jdbc:postgresql://127.0.0.1:1/db?user=u&connectTimeout=1s",
                "t", "k");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILURE);
        assertThat(r.err()).contains("could not connect to postgres://127.0.0.1:1/db").contains("tried for")
                .doesNotContain("no Lattice provider").doesNotContain("outcome unknown");
    }

    @Test
    void anOpenAgainstAServerThatIsDownSaysItCouldNotConnectToWhatAndHowLong() throws Exception {
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        String uri = "dynamodb://lattice_cli?region=us-east-1&endpoint=http://127.0.0.1:" + closed
                + "&accessKeyId=a&secretAccessKey=hidden-value";
        Cli.Run r = Cli.run("get", "--provider", uri, "t", "k");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILURE);
        assertThat(r.err()).as(r.toString())
                .containsPattern("lattice: could not connect to provider 'dynamodb://lattice_cli\\?region=us-east-1"
                        + "&endpoint=http://127.0.0.1:" + closed + "&accessKeyId=a&secretAccessKey=\\*\\*\\*' "
                        + "\\(tried for \\d+ ms\\): ")
                .contains("Connection refused").doesNotContain("hidden-value");
    }
}
