package dev.lattice.cluster.cli;

import dev.lattice.cli.CliException;
import dev.lattice.cli.ExitCodes;
import dev.lattice.cluster.ClusterCertificates;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code lattice cluster certs}: makes the key material of a cluster whose traffic is TLS with mutual
 * authentication ({@link ClusterCertificates}): a cluster CA, the trust store every node uses and one PKCS12 key
 * store per node ({@code node-1.p12} ...), in a new or empty directory. The password comes from
 * {@code --password-file} or is generated into {@code DIR/password} (owner-only); it is never printed. Every bad
 * option is refused (exit code {@link ExitCodes#USAGE}) before a file is written. Not thread-safe (one run per
 * instance).
 */
@Command(name = "certs", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Make the certificates of a TLS cluster: a cluster CA (ca.p12: keep it offline), the trust "
                + "store every node uses (cluster-truststore.p12) and one key store per node (node-1.p12 ...; EC "
                + "P-256 keys, certificates signed by the CA for TLS server and client), with the JDK's keytool.",
                "One password opens them all: from --password-file, or generated into DIR/password (readable by "
                        + "its owner only). It is never printed. Existing files are never overwritten."},
        footer = {"", "Example: lattice cluster certs --dir /etc/lattice/tls --nodes 3 "
                + "--host 10.0.0.11,10.0.0.12,10.0.0.13",
                "then on node 1: lattice cluster node --tls-key-store node-1.p12 --tls-trust-store "
                        + "cluster-truststore.p12 --tls-password-file password ..."})
public final class ClusterCertsCommand implements Callable<Integer> {

    /** Most node key stores one run makes. */
    static final int MAX_NODES = 100;
    /** The generated password's file name in {@code --dir}. */
    static final String PASSWORD_FILE = "password";

    @Spec
    CommandSpec spec;

    @Option(names = "--dir", paramLabel = "DIR", required = true,
            description = "Where the files go (created if missing; none of the files may exist yet).")
    Path dir;

    @Option(names = "--nodes", paramLabel = "N", defaultValue = "3",
            description = "Key stores node-1.p12 .. node-N.p12, 1.." + MAX_NODES + " (default ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--host", paramLabel = "HOST", split = ",",
            description = "The nodes' addresses (IP or DNS name), in order, one per node (repeatable or "
                    + "comma-separated): node i's certificate names host i as subject alternative name, which "
                    + "hostname verification checks. Default: none.")
    List<String> hosts = new ArrayList<>();

    @Option(names = "--password-file", paramLabel = "FILE",
            description = "The password of every store and key: the file's first line, at least 6 characters "
                    + "(default: a random one written to DIR/" + PASSWORD_FILE + ").")
    Path passwordFile;

    @Option(names = "--validity-days", paramLabel = "DAYS", defaultValue = "825",
            description = "Validity of the node certificates, 1.." + ClusterCertificates.MAX_VALIDITY_DAYS
                    + " (default ${DEFAULT-VALUE}).")
    int validityDays;

    @Option(names = "--ca-validity-days", paramLabel = "DAYS", defaultValue = "3650",
            description = "Validity of the CA certificate, 1.." + ClusterCertificates.MAX_VALIDITY_DAYS
                    + " (default ${DEFAULT-VALUE}).")
    int caValidityDays;

    @Option(names = {"-v", "--verbose"}, description = "Print stack traces of failures.")
    boolean verbose;

    /** Creates the command (picocli fills the fields). */
    public ClusterCertsCommand() {
    }

    /**
     * Makes the files and prints what it made (never the password).
     *
     * @return {@link ExitCodes#OK}
     * @throws CliException (usage) for a bad option, an existing file or an unreadable password file, before
     *     anything is written; (failure) when keytool fails
     */
    @Override
    public Integer call() {
        if (nodes < 1 || nodes > MAX_NODES) {
            throw CliException.usage("--nodes must be in 1.." + MAX_NODES + ", got " + nodes);
        }
        checkDays("--validity-days", validityDays);
        checkDays("--ca-validity-days", caValidityDays);
        if (!hosts.isEmpty() && hosts.size() != nodes) {
            throw CliException.usage("--host names " + hosts.size() + " host(s) for " + nodes + " node(s): give one "
                    + "per node, in order, or none");
        }
        List<String> sans = new ArrayList<>();
        for (String h : hosts) {
            try {
                sans.add(ClusterCertificates.san(h));
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--host " + e.getMessage());
            }
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw CliException.usage("--dir " + dir + " is a file, not a directory");
        }
        String password = passwordFile == null ? ClusterCertificates.randomPassword()
                : PasswordFile.read(passwordFile, "--password-file");
        List<String> files = new ArrayList<>(List.of(ClusterCertificates.CA_KEY_STORE,
                ClusterCertificates.CA_CERTIFICATE, ClusterCertificates.TRUST_STORE));
        if (passwordFile == null) {
            files.add(PASSWORD_FILE);
        }
        for (int i = 1; i <= nodes; i++) {
            files.add(name(i) + ".p12");
        }
        for (String f : files) {
            if (Files.exists(dir.resolve(f))) {
                throw CliException.usage("--dir " + dir + " already holds " + f + " (certificates are never "
                        + "overwritten: pick an empty directory)");
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        ClusterCertificates ca = make(() -> ClusterCertificates.createCa(dir, password, "Lattice cluster CA",
                caValidityDays));
        Path pw = passwordFile == null ? dir.toAbsolutePath().resolve(PASSWORD_FILE) : passwordFile.toAbsolutePath();
        if (passwordFile == null) {
            ClusterCertificates.writePasswordFile(pw, password);
        }
        List<Path> stores = nodeStores(ca, sans);
        out.println("cluster CA   " + ca.caKeyStore() + " (the CA's private key: keep it offline, nodes do not need "
                + "it), " + ca.caCertificate());
        out.println("trust store  " + ca.trustStore() + " (the same on every node)");
        for (int i = 0; i < nodes; i++) {
            out.println(String.format("%-12s %s (key and certificate signed by the CA%s)", name(i + 1),
                    stores.get(i), sans.isEmpty() ? "" : "; SAN " + sans.get(i)));
        }
        out.println("password     " + pw + (passwordFile == null ? " (generated, readable by its owner only)"
                : " (given)") + "; it opens every store and key");
        out.println("start node-1 with: lattice cluster node --tls-key-store " + stores.get(0) + " --tls-trust-store "
                + ca.trustStore() + " --tls-password-file " + pw + " ...");
        out.flush();
        return ExitCodes.OK;
    }

    private List<Path> nodeStores(ClusterCertificates ca, List<String> sans) {
        // keytool is a JVM per step: run the nodes side by side
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(nodes,
                Math.max(2, Runtime.getRuntime().availableProcessors())));
        try {
            List<Future<Path>> made = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                String name = name(i + 1);
                List<String> hostsOf = sans.isEmpty() ? List.of() : List.of(hosts.get(i));
                made.add(pool.submit(() -> ca.nodeKeyStore(name, hostsOf, validityDays)));
            }
            List<Path> out = new ArrayList<>();
            for (Future<Path> f : made) {
                out.add(make(f::get));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    static String name(int i) {
        return "node-" + i;
    }

    private static void checkDays(String option, int days) {
        if (days < 1 || days > ClusterCertificates.MAX_VALIDITY_DAYS) {
            throw CliException.usage(option + " must be in 1.." + ClusterCertificates.MAX_VALIDITY_DAYS + ", got "
                    + days);
        }
    }

    /** A step that may fail; its failure becomes a {@link CliException}. */
    private interface Step<T> {
        T run() throws Exception;
    }

    /**
     * Runs a step.
     *
     * @throws CliException (failure) when keytool fails or a file cannot be written, naming the problem
     */
    private static <T> T make(Step<T> step) {
        try {
            return step.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(ExitCodes.FAILURE, "interrupted while making the certificates", e);
        } catch (Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof CliException ce) {
                throw ce;
            }
            throw new CliException(ExitCodes.FAILURE, "making the certificates failed: " + cause.getMessage(),
                    cause);
        }
    }
}
