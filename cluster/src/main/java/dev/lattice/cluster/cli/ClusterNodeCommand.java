package dev.lattice.cluster.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import dev.lattice.cli.CliException;
import dev.lattice.cli.DurationConverter;
import dev.lattice.cli.ExitCodes;
import dev.lattice.cli.Support;
import dev.lattice.cluster.LatticeCluster;
import dev.lattice.cluster.LatticeClusterConfig;
import dev.lattice.engine.TreeOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;

/**
 * {@code lattice cluster node}: runs one node of a Lattice cluster in the foreground until it leaves (SIGTERM,
 * Ctrl-C: a graceful leave that hands its partitions off) or is downed by the cluster (exit code
 * {@link ExitCodes#FAILURE}). The options become the settings {@link LatticeClusterConfig#fromConfig} reads, over
 * those of {@code --config FILE}, {@code -D} system properties and {@code application.conf}.
 *
 * <p>The cluster's traffic is TLS with mutual authentication ({@code --tls-key-store}, {@code --tls-trust-store},
 * {@code --tls-password-file}, or {@code lattice.cluster.tls.*} in {@code --config}); without them the node refuses
 * to start (usage error) unless {@code --insecure-plain-tcp} is given.
 *
 * <p>It prints one line when it starts (with its transport, e.g. {@code tls-tcp (TLSv1.3, mutual authentication)}), {@code members up: N} when the number of members it sees up changes, and
 * {@code hosting TREE partitions [..]} when the partitions it hosts of a {@code --tree} change (polled every
 * 200 ms). Not thread-safe (one run per instance).
 */
@Command(name = "node", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run one cluster node in the foreground: join the seed nodes, host partitions of the trees "
                + "(unless --no-hosting) and route requests, until SIGTERM or Ctrl-C (a graceful leave: its "
                + "partitions are handed off) or until the cluster downs it (exit code 1).",
                "Every node must use the same --provider (the storage they share), e.g. "
                        + "postgres://db:5432/lattice?user=lattice.",
                "The cluster's traffic is TLS with mutual authentication: --tls-key-store, --tls-trust-store and "
                        + "--tls-password-file (or lattice.cluster.tls.* in --config) are required unless "
                        + "--insecure-plain-tcp is given."},
        footer = {"", "Example: lattice cluster node --provider 'postgres://db:5432/lattice?user=lattice' "
                + "--host 10.0.0.11 --port 25520 --seed 10.0.0.11:25520 --seed 10.0.0.12:25520 --tree orders "
                + "--tls-key-store tls/node-1.p12 --tls-trust-store tls/cluster-truststore.p12 "
                + "--tls-password-file tls/password",
                "(the key stores made by: lattice cluster certs --dir tls --nodes 3)"})
public final class ClusterNodeCommand implements Callable<Integer> {

    /** Highest TCP port. */
    static final int MAX_PORT = 65_535;

    @Spec
    CommandSpec spec;

    @Option(names = "--provider", paramLabel = "URI", defaultValue = "${env:LATTICE_PROVIDER}",
            description = "The storage every node shares (required unless lattice.cluster.provider is in "
                    + "--config; default: $LATTICE_PROVIDER).")
    String provider;

    @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "The address this node binds and other nodes reach it at (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "25520",
            description = "TCP port of the cluster's traffic, 0..65535; 0 picks a free one (default "
                    + "${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--seed", paramLabel = "HOST:PORT",
            description = "A seed node to join, HOST:PORT or pekko://lattice@HOST:PORT (repeatable; the same list "
                    + "on every node; default: this node itself, which starts a new cluster).")
    List<String> seeds = new ArrayList<>();

    @Option(names = "--tree", paramLabel = "NAME",
            description = "A tree to create if missing (with --partitions) and report hosting of (repeatable).")
    List<String> trees = new ArrayList<>();

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "8",
            description = "Partitions of a --tree created here (default ${DEFAULT-VALUE}; an existing tree keeps "
                    + "its count).")
    int partitions;

    @Option(names = "--no-hosting", description = "Route only: host no partition.")
    boolean noHosting;

    @Option(names = "--read-lease", paramLabel = "TIME", converter = DurationConverter.class,
            description = "Bound on stale reads, shorter than the split brain resolver's stable-after (default 2s).")
    Duration readLease;

    @Option(names = "--request-timeout", paramLabel = "TIME", converter = DurationConverter.class,
            description = "How long one attempt waits for a partition owner's answer (default 5s).")
    Duration requestTimeout;

    @Option(names = "--operation-timeout", paramLabel = "TIME", converter = DurationConverter.class,
            description = "How long an operation retries while its partition has no owner (default 30s).")
    Duration operationTimeout;

    @Option(names = "--tls-key-store", paramLabel = "FILE",
            description = "This node's PKCS12 key store: its key and its certificate signed by the cluster's CA "
                    + "(made by 'lattice cluster certs'). With --tls-trust-store and --tls-password-file the "
                    + "cluster's traffic is TLS with mutual authentication (Pekko Artery tls-tcp).")
    Path tlsKeyStore;

    @Option(names = "--tls-trust-store", paramLabel = "FILE",
            description = "The trust store every node uses: the cluster CA's certificate.")
    Path tlsTrustStore;

    @Option(names = "--tls-password-file", paramLabel = "FILE",
            description = "A file whose first line is the password of both stores and of the key.")
    Path tlsPasswordFile;

    @Option(names = "--tls-hostname-verification",
            description = "Also check that a peer's certificate names the address connected to (its SAN; "
                    + "'lattice cluster certs --host').")
    boolean tlsHostnameVerification;

    @Option(names = "--insecure-plain-tcp",
            description = "Run without TLS: the cluster's traffic is not encrypted and any process that reaches "
                    + "the port can join. Without TLS options (or lattice.cluster.tls.* in --config) the node "
                    + "refuses to start unless this is given.")
    boolean insecurePlainTcp;

    @Option(names = "--config", paramLabel = "FILE",
            description = "A HOCON file (application.conf syntax) under these options: lattice.cluster.* (TLS, "
                    + "timeouts) and pekko.* settings.")
    Path config;

    @Option(names = {"-v", "--verbose"}, description = "Log at INFO level and print stack traces of failures.")
    boolean verbose;

    /** Creates the command (picocli fills the fields). */
    public ClusterNodeCommand() {
    }

    /**
     * Starts the node and runs until it stops.
     *
     * @return {@link ExitCodes#OK} after a graceful leave, {@link ExitCodes#FAILURE} when the cluster downed it
     * @throws CliException (usage) for a bad option or setting, naming it; (failure) when the port is taken
     * @throws IllegalArgumentException for a bad provider URI or a read lease not shorter than stable-after
     *     (reported as usage errors)
     */
    @Override
    public Integer call() {
        for (String t : trees) {
            checkTreeName(t);
        }
        TreeOptions options = partitionOptions(partitions);
        Config settings = settings();
        LatticeClusterConfig cfg;
        try {
            cfg = LatticeClusterConfig.fromConfig(settings).build();
        } catch (ConfigException e) {
            throw CliException.usage("bad cluster setting: " + e.getMessage());
        }
        String uri = settings.getString("lattice.cluster.provider");
        PrintWriter out = spec.commandLine().getOut();
        if (uri.startsWith("memory:") || uri.startsWith("chronicle:")) {
            spec.commandLine().getErr().println("lattice: warning: " + uri.substring(0, uri.indexOf(':'))
                    + " storage serves one JVM only; the nodes of a cluster in several JVMs need a shared provider "
                    + "(e.g. postgres://...)");
        }
        if (insecurePlainTcp) {
            spec.commandLine().getErr().println("lattice: warning: --insecure-plain-tcp: the cluster's traffic is "
                    + "not encrypted and any process that reaches port " + port + " can join");
        }
        LatticeCluster node = start(cfg);
        Thread leave = new Thread(() -> {
            out.println("leaving the cluster (handing partitions off)");
            out.flush();
            node.close();
            out.println("left the cluster");
            out.flush();
        }, "lattice-cluster-node-leave");
        Runtime.getRuntime().addShutdownHook(leave);
        try {
            for (String t : trees) {
                node.tree(t, options);
            }
            out.println("node " + node.system().address() + " started (" + (noHosting ? "routing only" : "hosting")
                    + "), transport " + describeTransport(node.system().settings().config()) + ", seeds " + settings.getStringList("pekko.cluster.seed-nodes") + ", provider "
                    + Support.redact(uri));
            out.flush();
            watch(node, out);
        } catch (RuntimeException e) {
            removeHook(leave);
            node.close();
            throw e;
        }
        removeHook(leave);
        if (node.wasDowned()) {
            throw new CliException(ExitCodes.FAILURE, "this node was downed by the cluster (unreachable for longer "
                    + "than the split brain resolver's stable-after, or on the minority side); its partitions "
                    + "moved to the other nodes");
        }
        return ExitCodes.OK;
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or about to: it leaves the cluster
        }
    }

    private LatticeCluster start(LatticeClusterConfig cfg) {
        try {
            return LatticeCluster.start(cfg);
        } catch (ConfigException e) {
            throw CliException.usage("bad cluster setting: " + e.getMessage());
        } catch (RuntimeException e) {
            for (Throwable c = e; c != null; c = c.getCause()) {
                if (c instanceof java.net.BindException) {
                    throw new CliException(ExitCodes.FAILURE, "cannot listen on " + host + ":" + port + ": "
                            + c.getMessage() + " (another node or program uses the port? pick another --port)", e);
                }
            }
            throw e;
        }
    }

    /** Prints membership and hosting changes until the node is closed (left or downed). */
    private void watch(LatticeCluster node, PrintWriter out) {
        int members = -1;
        Map<String, Set<Integer>> hosted = new LinkedHashMap<>();
        while (!node.isClosed()) {
            int up = node.upMembers();
            if (up != members && !node.isClosed()) {
                members = up;
                out.println("members up: " + up);
            }
            for (String t : trees) {
                Set<Integer> now = new TreeSet<>(node.hostedPartitions(t));
                if (!now.equals(hosted.get(t)) && !node.isClosed()) {
                    hosted.put(t, now);
                    out.println("hosting " + t + " partitions " + now);
                }
            }
            out.flush();
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * The node's settings: the options over {@code --config} over {@link ConfigFactory#load()}.
     *
     * @throws CliException (usage) naming a bad option or an unreadable file, or when TLS is neither configured nor
     *     waived by {@code --insecure-plain-tcp}
     */
    Config settings() {
        if (port < 0 || port > MAX_PORT) {
            throw CliException.usage("--port must be in 0.." + MAX_PORT + ", got " + port);
        }
        if (host == null || host.isBlank()) {
            throw CliException.usage("--host must not be empty");
        }
        Config file = ConfigFactory.empty();
        if (config != null) {
            if (!Files.isRegularFile(config)) {
                throw CliException.usage("--config " + config + ": no such file");
            }
            try {
                file = ConfigFactory.parseFile(config.toFile());
            } catch (ConfigException e) {
                throw CliException.usage("--config " + config + ": " + e.getMessage());
            }
        }
        Map<String, Object> own = new LinkedHashMap<>();
        tlsOptions(own);
        if (provider != null && !provider.isBlank()) {
            own.put("lattice.cluster.provider", provider);
        }
        own.put("lattice.cluster.hosting", !noHosting);
        putDuration(own, "lattice.cluster.read-lease", readLease);
        putDuration(own, "lattice.cluster.request-timeout", requestTimeout);
        putDuration(own, "lattice.cluster.operation-timeout", operationTimeout);
        own.put("pekko.remote.artery.canonical.hostname", host);
        own.put("pekko.remote.artery.canonical.port", port);
        String system = "lattice";
        List<String> addresses = new ArrayList<>();
        if (seeds.isEmpty()) {
            if (port == 0) {
                throw CliException.usage("--port 0 needs at least one --seed (a node that starts a new cluster "
                        + "must know its own port)");
            }
            addresses.add(seedAddress(system, host + ":" + port));
        } else {
            for (String s : seeds) {
                addresses.add(seedAddress(system, s));
            }
        }
        own.put("pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(addresses));
        Config merged;
        try {
            merged = ConfigFactory.parseMap(own).withFallback(file).withFallback(ConfigFactory.load()).resolve();
        } catch (ConfigException e) {
            throw CliException.usage("bad cluster setting: " + e.getMessage());
        }
        if (!merged.hasPath("lattice.cluster.provider")) {
            throw CliException.usage("--provider is required: the URI of the storage every node shares, e.g. "
                    + "'postgres://db:5432/lattice?user=lattice' (or lattice.cluster.provider in --config, or "
                    + "$LATTICE_PROVIDER)");
        }
        boolean tls = merged.hasPath("lattice.cluster.tls.key-store")
                || "tls-tcp".equals(merged.getString("pekko.remote.artery.transport"));
        if (!tls && !insecurePlainTcp) {
            throw CliException.usage("TLS is required: give --tls-key-store, --tls-trust-store and "
                    + "--tls-password-file (make them with 'lattice cluster certs'; or lattice.cluster.tls.* in "
                    + "--config), or --insecure-plain-tcp to run the cluster's traffic unencrypted and "
                    + "unauthenticated");
        }
        if (tls && insecurePlainTcp) {
            throw CliException.usage("--insecure-plain-tcp, but the configuration turns TLS on "
                    + "(lattice.cluster.tls.key-store or pekko.remote.artery.transport = tls-tcp): drop one");
        }
        return merged;
    }

    /**
     * Checks the {@code --tls-*} options and puts them as {@code lattice.cluster.tls.*} settings.
     *
     * @throws CliException (usage) if they contradict {@code --insecure-plain-tcp}, one of the three is missing, a
     *     store is not a file, or the password file cannot be read (its content is never in the message)
     */
    private void tlsOptions(Map<String, Object> into) {
        boolean any = tlsKeyStore != null || tlsTrustStore != null || tlsPasswordFile != null
                || tlsHostnameVerification;
        if (!any) {
            return;
        }
        if (insecurePlainTcp) {
            throw CliException.usage("--insecure-plain-tcp contradicts the --tls-* options: choose one");
        }
        String missing = tlsKeyStore == null ? "--tls-key-store" : tlsTrustStore == null ? "--tls-trust-store"
                : tlsPasswordFile == null ? "--tls-password-file" : null;
        if (missing != null) {
            throw CliException.usage("--tls-key-store, --tls-trust-store and --tls-password-file go together: "
                    + missing + " is missing");
        }
        checkStoreFile("--tls-key-store", tlsKeyStore);
        checkStoreFile("--tls-trust-store", tlsTrustStore);
        into.put("lattice.cluster.tls.key-store", tlsKeyStore.toAbsolutePath().toString());
        into.put("lattice.cluster.tls.trust-store", tlsTrustStore.toAbsolutePath().toString());
        into.put("lattice.cluster.tls.password", PasswordFile.read(tlsPasswordFile, "--tls-password-file"));
        into.put("lattice.cluster.tls.hostname-verification", tlsHostnameVerification);
    }

    private static void checkStoreFile(String option, Path file) {
        if (!Files.exists(file)) {
            throw CliException.usage(option + " " + file + ": no such file");
        }
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw CliException.usage(option + " " + file + ": not a readable file");
        }
    }

    /**
     * @param pekko a running node's Pekko configuration
     * @return its transport for the start line, e.g. {@code tls-tcp (TLSv1.3, mutual authentication)}
     */
    static String describeTransport(Config pekko) {
        String transport = pekko.getString("pekko.remote.artery.transport");
        if (!"tls-tcp".equals(transport)) {
            return transport + " (PLAIN: not encrypted, peers not authenticated)";
        }
        String engine = dev.lattice.cluster.ClusterTls.SSL_ENGINE;
        if (!pekko.hasPath(engine + ".protocol")) {
            return transport;
        }
        return transport + " (" + pekko.getString(engine + ".protocol")
                + (pekko.getBoolean(engine + ".require-mutual-authentication") ? ", mutual authentication" : "")
                + (pekko.getBoolean(engine + ".hostname-verification") ? ", hostname verification" : "") + ")";
    }

    private static void putDuration(Map<String, Object> into, String key, Duration d) {
        if (d != null) {
            into.put(key, d.toMillis() + "ms");
        }
    }

    /**
     * A seed node's Pekko address from {@code HOST:PORT} (or {@code [IPv6]:PORT}) or a full
     * {@code pekko://SYSTEM@HOST:PORT}.
     *
     * @param system the actor system's name
     * @param seed the option's value
     * @return the address
     * @throws CliException (usage) naming the value when it is neither form or its port is not 1..65535
     */
    static String seedAddress(String system, String seed) {
        String s = seed.trim();
        String prefix = "pekko://" + system + "@";
        if (s.startsWith("pekko://")) {
            if (!s.startsWith(prefix)) {
                throw CliException.usage("--seed '" + seed + "': the actor system must be '" + system + "', as in "
                        + prefix + "HOST:PORT");
            }
            s = s.substring(prefix.length());
        }
        int colon = s.lastIndexOf(':');
        String h = colon < 0 ? "" : s.substring(0, colon);
        String p = colon < 0 ? "" : s.substring(colon + 1);
        if (h.isEmpty() || h.contains("/") || h.contains("@") || !p.matches("\\d{1,5}")
                || (h.contains(":") && !(h.startsWith("[") && h.endsWith("]")))) {
            throw CliException.usage("--seed '" + seed + "' is not HOST:PORT (e.g. 10.0.0.11:25520) or "
                    + prefix + "HOST:PORT");
        }
        int n = Integer.parseInt(p);
        if (n < 1 || n > MAX_PORT) {
            throw CliException.usage("--seed '" + seed + "': port must be in 1.." + MAX_PORT + ", got " + n);
        }
        return prefix + h + ":" + n;
    }

    private static void checkTreeName(String name) {
        try {
            dev.lattice.spi.LogId.validateTreeName(name);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--tree: " + e.getMessage());
        }
        if (name.startsWith("_")) {
            throw CliException.usage("--tree '" + name + "': names starting with '_' are the engine's");
        }
    }

    private static TreeOptions partitionOptions(int partitions) {
        try {
            return TreeOptions.partitions(partitions);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--partitions: " + e.getMessage());
        }
    }
}
