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
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code lattice cluster certs} (the files it makes, its argument errors), {@code lattice cluster node}'s TLS options
 * (required unless {@code --insecure-plain-tcp}), {@code lattice cluster node} and {@code demo} argument errors (in-process: each is refused before a node starts,
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
        assertThat(help.out()).contains("--provider").contains("--seed").contains("--tree").contains("--no-hosting")
                .contains("--tls-key-store").contains("--tls-trust-store").contains("--tls-password-file")
                .contains("--insecure-plain-tcp");
        assertThat(r.err()).contains("certs");
        Run certsHelp = run("cluster", "certs", "--help");
        assertThat(certsHelp.code()).isZero();
        assertThat(certsHelp.out()).contains("--dir").contains("--nodes").contains("--password-file");
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
                "--read-lease", "10s", "--insecure-plain-tcp");
        usageError("no Lattice provider for scheme 'nosuch'", "cluster", "node", "--provider", "nosuch:/x",
                "--port", "" + port, "--insecure-plain-tcp");
        Path conf = dir.resolve("bad.conf");
        Files.writeString(conf, "lattice.cluster { read-lease = \"not a duration\" }\n");
        usageError("bad cluster setting", "cluster", "node", "--provider", "memory:cluster-node-test", "--port",
                "" + port, "--config", conf.toString(), "--insecure-plain-tcp");
    }

    @Test
    void badDemoOptionsAreUsageErrors() {
        usageError("--nodes must be in 3..7", "cluster", "demo", "--nodes", "2");
        usageError("--partitions must be in 2..64, got 1", "cluster", "demo", "--partitions", "1");
    }

    @Test
    void aNodeRunsWithTlsUntilSigtermThenLeavesCleanly(@TempDir Path dir) throws Exception {
        Path tls = dir.resolve("tls");
        Run certs = run("cluster", "certs", "--dir", tls.toString(), "--nodes", "1");
        assertThat(certs.code()).as(certs.toString()).isZero();
        int port = freePort();
        ChildJvm node = ChildJvm.start(dir, "cluster", "node", "--provider", "memory:node-test", "--port",
                "" + port, "--tree", "orders", "--partitions", "4",
                "--tls-key-store", tls.resolve("node-1.p12").toString(),
                "--tls-trust-store", tls.resolve("cluster-truststore.p12").toString(),
                "--tls-password-file", tls.resolve("password").toString());
        try {
            assertThat(node.awaitOut("members up: 1", 240)).as(node.describe()).isTrue();
            assertThat(node.out()).contains("node pekko://lattice@127.0.0.1:" + port + " started (hosting), "
                    + "transport tls-tcp (TLSv1.3, mutual authentication), seeds "
                    + "[pekko://lattice@127.0.0.1:" + port + "], provider memory:node-test");
            assertThat(node.out() + node.err()).doesNotContain(Files.readString(tls.resolve("password")));
            assertThat(node.err()).contains("memory storage serves one JVM only");
            node.process.destroy(); // SIGTERM
            Integer code = node.await(120);
            assertThat(code).as(node.describe()).isEqualTo(143);
            assertThat(node.out()).contains("leaving the cluster (handing partitions off)").contains("left the cluster");
        } finally {
            node.kill();
        }
    }

    @Test
    void aNodeWithoutTlsOptionsRefusesToStartUnlessInsecurePlainTcpIsGiven(@TempDir Path dir) throws Exception {
        String p = "memory:cluster-node-tls-test";
        usageError("TLS is required: give --tls-key-store, --tls-trust-store and --tls-password-file (make them "
                + "with 'lattice cluster certs'", "cluster", "node", "--provider", p);
        ClusterNodeCommand plain = parse("--provider", p, "--insecure-plain-tcp");
        assertThat(plain.settings().getString("pekko.remote.artery.transport")).isEqualTo("tcp");
        assertThat(plain.settings().hasPath("lattice.cluster.tls")).isFalse();

        Path tls = dir.resolve("tls");
        assertThat(run("cluster", "certs", "--dir", tls.toString(), "--nodes", "1").code()).isZero();
        String ks = tls.resolve("node-1.p12").toString();
        String ts = tls.resolve("cluster-truststore.p12").toString();
        String pw = tls.resolve("password").toString();
        ClusterNodeCommand secure = parse("--provider", p, "--tls-key-store", ks, "--tls-trust-store", ts,
                "--tls-password-file", pw, "--tls-hostname-verification");
        com.typesafe.config.Config c = secure.settings();
        assertThat(c.getString("lattice.cluster.tls.key-store")).isEqualTo(Path.of(ks).toAbsolutePath().toString());
        assertThat(c.getString("lattice.cluster.tls.trust-store")).isEqualTo(Path.of(ts).toAbsolutePath().toString());
        assertThat(c.getString("lattice.cluster.tls.password")).isEqualTo(Files.readString(Path.of(pw)));
        assertThat(c.getBoolean("lattice.cluster.tls.hostname-verification")).isTrue();

        usageError("--insecure-plain-tcp contradicts the --tls-* options", "cluster", "node", "--provider", p,
                "--tls-key-store", ks, "--insecure-plain-tcp");
        usageError("go together: --tls-trust-store is missing", "cluster", "node", "--provider", p,
                "--tls-key-store", ks, "--tls-password-file", pw);
        usageError("go together: --tls-password-file is missing", "cluster", "node", "--provider", p,
                "--tls-key-store", ks, "--tls-trust-store", ts);
        usageError("--tls-key-store /nonexistent/k.p12: no such file", "cluster", "node", "--provider", p,
                "--tls-key-store", "/nonexistent/k.p12", "--tls-trust-store", ts, "--tls-password-file", pw);
        Path shortPw = dir.resolve("short");
        Files.writeString(shortPw, "abc\n");
        usageError("the password (the file's first line) must have at least 6 characters", "cluster", "node",
                "--provider", p, "--tls-key-store", ks, "--tls-trust-store", ts, "--tls-password-file",
                shortPw.toString());
        // a wrong password or a file that is no key store: refused when the node checks its stores, before it starts
        Path wrongPw = dir.resolve("wrong");
        Files.writeString(wrongPw, "not-the-password\n");
        usageError("key store with its password", "cluster", "node", "--provider", p,
                "--port", "" + freePort(), "--tls-key-store", ks, "--tls-trust-store", ts, "--tls-password-file",
                wrongPw.toString());
        usageError("holds no private key", "cluster", "node", "--provider", p, "--port", "" + freePort(),
                "--tls-key-store", ts, "--tls-trust-store", ts, "--tls-password-file", pw);
        // TLS from --config counts; --insecure-plain-tcp then contradicts it
        Path conf = dir.resolve("tls.conf");
        Files.writeString(conf, "lattice.cluster.tls { key-store = \"" + ks + "\", trust-store = \"" + ts
                + "\", password = \"" + Files.readString(Path.of(pw)) + "\" }\n");
        assertThat(parse("--provider", p, "--config", conf.toString()).settings()
                .getString("lattice.cluster.tls.key-store")).isEqualTo(ks);
        usageError("--insecure-plain-tcp, but the configuration turns TLS on", "cluster", "node", "--provider", p,
                "--config", conf.toString(), "--insecure-plain-tcp");
    }

    @Test
    void certsMakesACaATrustStoreAndNodeKeyStoresSignedByIt(@TempDir Path dir) throws Exception {
        Path tls = dir.resolve("tls");
        Run r = run("cluster", "certs", "--dir", tls.toString(), "--nodes", "2", "--host", "127.0.0.1,node-2.example");
        assertThat(r.code()).as(r.toString()).isZero();
        String password = Files.readString(tls.resolve("password"));
        assertThat(password).hasSizeGreaterThanOrEqualTo(20);
        assertThat(r.out() + r.err()).doesNotContain(password);
        assertThat(r.out()).contains("node-1", "node-2", "cluster-truststore.p12", "--tls-password-file");
        assertThat(Files.getPosixFilePermissions(tls.resolve("password"))).containsExactlyInAnyOrder(
                java.nio.file.attribute.PosixFilePermission.OWNER_READ,
                java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
        assertThat(Files.getPosixFilePermissions(tls.resolve("node-1.p12")))
                .doesNotContain(java.nio.file.attribute.PosixFilePermission.OTHERS_READ,
                        java.nio.file.attribute.PosixFilePermission.GROUP_READ);
        try (var files = Files.list(tls)) {
            assertThat(files.map(f -> f.getFileName().toString())).containsExactlyInAnyOrder("ca.p12", "ca.crt",
                    "cluster-truststore.p12", "password", "node-1.p12", "node-2.p12");
        }
        java.security.KeyStore trust = load(tls.resolve("cluster-truststore.p12"), password);
        assertThat(java.util.Collections.list(trust.aliases())).hasSize(1);
        java.security.cert.X509Certificate ca = (java.security.cert.X509Certificate)
                trust.getCertificate(trust.aliases().nextElement());
        assertThat(ca.getBasicConstraints()).isGreaterThanOrEqualTo(0);
        String[] sans = {"127.0.0.1", "node-2.example"};
        for (int i = 1; i <= 2; i++) {
            java.security.KeyStore ks = load(tls.resolve("node-" + i + ".p12"), password);
            assertThat(ks.getKey("node", password.toCharArray())).isInstanceOf(java.security.PrivateKey.class);
            java.security.cert.Certificate[] chain = ks.getCertificateChain("node");
            assertThat(chain).hasSize(2);
            java.security.cert.X509Certificate cert = (java.security.cert.X509Certificate) chain[0];
            cert.verify(ca.getPublicKey()); // signed by the CA
            assertThat(chain[1]).isEqualTo(ca);
            assertThat(cert.getSubjectX500Principal().getName()).isEqualTo("CN=node-" + i);
            assertThat(cert.getExtendedKeyUsage()).contains("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2");
            List<Object> names = new java.util.ArrayList<>();
            for (List<?> n : cert.getSubjectAlternativeNames()) {
                names.add(n.get(1));
            }
            assertThat(names).containsExactly(sans[i - 1]);
        }
        // the same password from a file; the directory must not hold the files yet
        Path pwFile = dir.resolve("pw.txt");
        Files.writeString(pwFile, "operator-secret\nignored second line\n");
        Path other = dir.resolve("other");
        Run given = run("cluster", "certs", "--dir", other.toString(), "--nodes", "1", "--password-file",
                pwFile.toString());
        assertThat(given.code()).as(given.toString()).isZero();
        assertThat(given.out()).doesNotContain("operator-secret");
        assertThat(Files.exists(other.resolve("password"))).isFalse();
        load(other.resolve("node-1.p12"), "operator-secret");
        Run again = run("cluster", "certs", "--dir", other.toString(), "--nodes", "1", "--password-file",
                pwFile.toString());
        assertThat(again.code()).as(again.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(again.err()).contains("already holds ca.p12");
    }

    @Test
    void badCertsOptionsAreUsageErrorsBeforeAnythingIsWritten(@TempDir Path dir) throws Exception {
        String d = dir.resolve("tls").toString();
        usageError("Missing required option: '--dir=DIR'", "cluster", "certs");
        usageError("--nodes must be in 1..100, got 0", "cluster", "certs", "--dir", d, "--nodes", "0");
        usageError("--nodes must be in 1..100, got 101", "cluster", "certs", "--dir", d, "--nodes", "101");
        usageError("--host names 2 host(s) for 3 node(s)", "cluster", "certs", "--dir", d, "--host", "a,b");
        usageError("--host 'bad host!' is not an IP address or DNS name", "cluster", "certs", "--dir", d,
                "--nodes", "1", "--host", "bad host!");
        usageError("--host '300.1.1.1' is not an IP address", "cluster", "certs", "--dir", d, "--nodes", "1",
                "--host", "300.1.1.1");
        usageError("--validity-days must be in 1..10000, got 0", "cluster", "certs", "--dir", d,
                "--validity-days", "0");
        usageError("--password-file /nonexistent/pw: no such file", "cluster", "certs", "--dir", d,
                "--password-file", "/nonexistent/pw");
        Path shortPw = dir.resolve("short");
        Files.writeString(shortPw, "12345");
        usageError("must have at least 6 characters", "cluster", "certs", "--dir", d, "--password-file",
                shortPw.toString());
        usageError("is a file, not a directory", "cluster", "certs", "--dir", shortPw.toString());
        assertThat(Files.exists(Path.of(d))).as("nothing written").isFalse();
        Files.createDirectories(Path.of(d));
        Files.writeString(Path.of(d, "node-2.p12"), "x");
        usageError("already holds node-2.p12", "cluster", "certs", "--dir", d);
        try (var files = Files.list(Path.of(d))) {
            assertThat(files).hasSize(1);
        }
    }

    private static ClusterNodeCommand parse(String... args) {
        ClusterNodeCommand c = new ClusterNodeCommand();
        new picocli.CommandLine(c).parseArgs(args);
        return c;
    }

    private static java.security.KeyStore load(Path file, String password) throws Exception {
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(file)) {
            ks.load(in, password.toCharArray());
        }
        return ks;
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
