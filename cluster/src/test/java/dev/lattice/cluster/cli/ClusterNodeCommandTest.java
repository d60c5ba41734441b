package dev.lattice.cluster.cli;

import dev.lattice.cli.ExitCodes;
import dev.lattice.cli.Main;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code lattice cluster node} and {@code demo} argument errors (in-process: each is refused before a node starts,
 * with exit code 2 and one line naming the problem), and a node in a child JVM that leaves cleanly on SIGTERM.
 */
class ClusterNodeCommandTest {

    record Run(int code, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static void usageError(String expected, String... args) {
        Run r = run(args);
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).as(r.toString()).contains(expected).doesNotContain("\tat ");
        assertThat(r.out()).as(r.toString()).doesNotContain("started");
    }

    @Test
    void theClusterModuleAddsTheRealCommand() {
        assertThat((Object) Main.commandLine().getSubcommands().get("cluster").getCommand())
                .isInstanceOf(ClusterCommand.class);
        Run r = run("cluster");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("Usage: lattice cluster").contains("node").contains("demo");
        Run help = run("cluster", "node", "--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("--provider").contains("--seed").contains("--tree").contains("--no-hosting");
        usageError("did you mean 'node'?", "cluster", "nod");
    }

    @Test
    void badNodeOptionsAreUsageErrorsNamingTheProblem() {
        String p = "postgres://127.0.0.1:1/none";
        if (System.getenv("LATTICE_PROVIDER") == null) {
            usageError("--provider is required", "cluster", "node");
        }
        usageError("--port must be in 0..65535, got 70000", "cluster", "node", "--provider", p, "--port", "70000");
        usageError("--port", "cluster", "node", "--provider", p, "--port", "many");
        usageError("--port 0 needs at least one --seed", "cluster", "node", "--provider", p, "--port", "0");
        usageError("--seed 'nohost' is not HOST:PORT", "cluster", "node", "--provider", p, "--seed", "nohost");
        usageError("--seed 'h:99999': port must be in 1..65535", "cluster", "node", "--provider", p, "--seed",
                "h:99999");
        usageError("the actor system must be 'lattice'", "cluster", "node", "--provider", p, "--seed",
                "pekko://other@h:25520");
        usageError("--partitions: partitions must be in 1..", "cluster", "node", "--provider", p, "--tree", "t",
                "--partitions", "0");
        usageError("--tree: tree name 'bad name'", "cluster", "node", "--provider", p, "--tree", "bad name");
        usageError("--tree '_x': names starting with '_' are the engine's", "cluster", "node", "--provider", p,
                "--tree", "_x");
        usageError("is not a duration", "cluster", "node", "--provider", p, "--read-lease", "soon");
        usageError("no such file", "cluster", "node", "--provider", p, "--config", "/nonexistent/node.conf");
        usageError("Unknown option: '--provder'", "cluster", "node", "--provder", p);
    }

    @Test
    void settingsThatOnlyTheNodeCanCheckAreUsageErrorsToo(@TempDir Path dir) throws Exception {
        int port = freePort();
        // the lease must be shorter than the split brain resolver's stable-after (7 s by default)
        usageError("readLease 10000 ms must be shorter than pekko.cluster.split-brain-resolver.stable-after",
                "cluster", "node", "--provider", "memory:cluster-node-test", "--port", "" + port,
                "--read-lease", "10s");
        usageError("no Lattice provider for scheme 'nosuch'", "cluster", "node", "--provider", "nosuch:/x",
                "--port", "" + port);
        Path conf = dir.resolve("bad.conf");
        Files.writeString(conf, "lattice.cluster { read-lease = \"not a duration\" }\n");
        usageError("bad cluster setting", "cluster", "node", "--provider", "memory:cluster-node-test", "--port",
                "" + port, "--config", conf.toString());
    }

    @Test
    void badDemoOptionsAreUsageErrors() {
        usageError("--nodes must be in 3..7", "cluster", "demo", "--nodes", "2");
        usageError("--partitions must be in 2..64, got 1", "cluster", "demo", "--partitions", "1");
    }

    @Test
    void aNodeRunsUntilSigtermThenLeavesCleanly(@TempDir Path dir) throws Exception {
        int port = freePort();
        ChildJvm node = ChildJvm.start(dir, "cluster", "node", "--provider", "memory:node-test", "--port",
                "" + port, "--tree", "orders", "--partitions", "4");
        try {
            assertThat(node.awaitOut("members up: 1", 240)).as(node.describe()).isTrue();
            assertThat(node.out()).contains("node pekko://lattice@127.0.0.1:" + port + " started (hosting), seeds "
                    + "[pekko://lattice@127.0.0.1:" + port + "], provider memory:node-test");
            assertThat(node.err()).contains("memory storage serves one JVM only");
            node.process.destroy(); // SIGTERM
            Integer code = node.await(120);
            assertThat(code).as(node.describe()).isEqualTo(143);
            assertThat(node.out()).contains("leaving the cluster (handing partitions off)").contains("left the cluster");
        } finally {
            node.kill();
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
