package dev.lattice.cluster.cli;

import com.typesafe.config.ConfigFactory;
import dev.lattice.cli.CliException;
import dev.lattice.cli.ExitCodes;
import dev.lattice.cluster.LatticeCluster;
import dev.lattice.cluster.LatticeClusterConfig;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.PartialTree;
import dev.lattice.engine.TreeOptions;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code lattice cluster demo}: no configuration. Starts an embedded PostgreSQL on 127.0.0.1 (the storage every node
 * shares), {@code --nodes} node JVMs ({@code lattice cluster node}) on free loopback ports, and joins them itself as
 * a routing-only member, all with TLS and mutual authentication (certificates of a throwaway CA made in the
 * temporary directory, {@link DemoTls}); runs one writer and reader thread per partition through the cluster, kills (SIGKILL) the node hosting the
 * most partitions, keeps the traffic going until every partition is written again, verifies every acknowledged
 * write, prints a report, then shuts everything down and deletes its temporary directory (also on Ctrl-C).
 * Exit code {@link ExitCodes#VERIFICATION_FAILED} if an acknowledged write is missing, a read was wrong, or a
 * partition was not served again within 90 s. Not thread-safe (one run per instance).
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Start an embedded PostgreSQL and 3 node JVMs on 127.0.0.1 (TLS with mutual "
                + "authentication, certificates of a throwaway CA), write and read through the cluster, kill one "
                + "node (SIGKILL), show that reads and writes go on, verify every acknowledged write, print a report, and shut everything down (temporary data removed). About a minute.",
                "Progress goes to standard error, the report to standard output."})
public final class ClusterDemoCommand implements java.util.concurrent.Callable<Integer> {

    /** The demo tree's name. */
    static final String TREE = "demo";
    /** The nodes' read lease: shorter than {@link #STABLE_AFTER}. */
    static final Duration READ_LEASE = Duration.ofSeconds(2);
    /** The split brain resolver's stable-after of the demo's nodes (faster than the 7 s default). */
    static final Duration STABLE_AFTER = Duration.ofSeconds(5);
    /** How long the demo waits after the kill for every partition to be written again. */
    static final Duration RECOVERY_TIMEOUT = Duration.ofSeconds(90);
    private static final int KEYS_PER_PARTITION = 6_000;
    /** How long the nodes and the demo have to form the cluster (generous: a loaded machine starts JVMs slowly). */
    private static final Duration FORM_TIMEOUT = Duration.ofSeconds(240);
    /** How often a node JVM that exits before joining is started again. */
    private static final int RESTARTS = 2;

    @Spec
    CommandSpec spec;

    @Option(names = "--nodes", paramLabel = "N", defaultValue = "3",
            description = "Node JVMs, 3..7 (default ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "8",
            description = "Partitions of the demo tree, 2..64 (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--keep", description = "Keep the temporary directory (the nodes' logs) instead of deleting it.")
    boolean keep;

    @Option(names = {"-v", "--verbose"}, description = "Log at INFO level and print stack traces of failures.")
    boolean verbose;

    private final List<DemoNode> started = new ArrayList<>();
    private PrintWriter progress;
    private DemoTls tls;

    /** Creates the command (picocli fills the fields). */
    public ClusterDemoCommand() {
    }

    /**
     * Runs the demo.
     *
     * @return {@link ExitCodes#OK} when every check passed, else {@link ExitCodes#VERIFICATION_FAILED}
     * @throws CliException (usage) for a bad option; (failure) when PostgreSQL or the cluster cannot be started
     */
    @Override
    public Integer call() throws Exception {
        if (nodes < 3 || nodes > 7) {
            throw CliException.usage("--nodes must be in 3..7 (a majority must survive the kill), got " + nodes);
        }
        if (partitions < 2 || partitions > 64) {
            throw CliException.usage("--partitions must be in 2..64, got " + partitions);
        }
        if (!verbose && System.getProperty("org.slf4j.simpleLogger.log.org.apache.pekko") == null) {
            // the kill makes Pekko warn about the lost connection: expected here, so kept out of the output
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.pekko", "error");
        }
        progress = spec.commandLine().getErr();
        Path dir = Files.createTempDirectory("lattice-cluster-demo-");
        AtomicBoolean cleaned = new AtomicBoolean();
        EmbeddedPostgres[] pg = new EmbeddedPostgres[1];
        LatticeCluster[] router = new LatticeCluster[1];
        Runnable cleanup = () -> {
            if (cleaned.compareAndSet(false, true)) {
                shutDown(router[0], pg[0], dir);
            }
        };
        Thread hook = new Thread(cleanup, "lattice-cluster-demo-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            long t0 = System.nanoTime();
            Path tlsDir = dir.resolve("tls");
            say("making throwaway TLS certificates (a cluster CA, " + (nodes + 1) + " key stores) in " + tlsDir
                    + " and starting an embedded PostgreSQL (data in " + dir + ")");
            // keytool is a JVM per step: make the certificates while PostgreSQL starts
            ExecutorService certPool = Executors.newSingleThreadExecutor();
            CompletableFuture<DemoTls> certs = CompletableFuture.supplyAsync(() -> DemoTls.make(tlsDir, nodes),
                    certPool);
            certPool.shutdown();
            pg[0] = EmbeddedPostgres.builder().setDataDirectory(dir.resolve("postgres"))
                    .setCleanDataDirectory(true).start();
            tls = awaitCertificates(certs);
            // a generous connect timeout: on a busy machine a first connection can take longer than the 10 s default
            String uri = "postgres://127.0.0.1:" + pg[0].getPort()
                    + "/postgres?user=postgres&schema=lattice_demo&connectTimeout=60s";
            List<List<String>> keys = createTree(uri);
            List<Integer> ports = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                ports.add(freePort());
            }
            say("starting " + nodes + " node JVMs on 127.0.0.1 ports " + ports + " (lattice cluster node, TLS "
                    + "with mutual authentication)");
            for (int i = 0; i < nodes; i++) {
                started.add(DemoNode.start("node-" + (i + 1), ports.get(i), ports, uri, TREE, partitions, dir,
                        nodeSettings(), tls.nodeOptions(i)));
            }
            router[0] = LatticeCluster.start(LatticeClusterConfig.builder()
                    .lattice(LatticeConfig.builder().uri(uri)).hosting(false).readLease(READ_LEASE)
                    .requestTimeout(Duration.ofSeconds(3)).operationTimeout(RECOVERY_TIMEOUT)
                    .pekko(ConfigFactory.parseString(routerSettings(freePort(), ports))).tls(tls.routerTls())
                    .build());
            awaitCluster(router[0], ports, uri);
            double formed = (System.nanoTime() - t0) / 1e9;
            say(String.format("cluster up: %d nodes and this demo (routing only) after %.1f s", nodes, formed));
            return new DemoRun(this, router[0].tree(TREE), keys, uri, formed,
                    ClusterNodeCommand.describeTransport(router[0].system().settings().config()), tlsDir).run();
        } finally {
            cleanup.run();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook ran the clean-up already
            }
        }
    }

    /**
     * Waits up to {@link #FORM_TIMEOUT} for every node and this demo to be up; a node JVM that exits before (e.g. it
     * could not reach PostgreSQL in time on a busy machine) is started again, at most {@link #RESTARTS} times.
     */
    private void awaitCluster(LatticeCluster router, List<Integer> ports, String uri) {
        long deadline = System.nanoTime() + FORM_TIMEOUT.toNanos();
        int[] restarts = new int[nodes];
        while (!router.awaitMembers(nodes + 1, Duration.ofSeconds(1))) {
            if (System.nanoTime() > deadline) {
                throw failure("the cluster did not form within " + FORM_TIMEOUT.toSeconds() + " s ("
                        + router.upMembers() + " of " + (nodes + 1) + " members up)");
            }
            for (int i = 0; i < nodes; i++) {
                DemoNode n = started.get(i);
                if (n.alive()) {
                    continue;
                }
                if (restarts[i]++ == RESTARTS) {
                    throw failure(n.name + " exited " + (RESTARTS + 1) + " times before joining the cluster");
                }
                say(n.name + " exited before joining (" + n.tail(1).strip() + "); starting it again");
                started.set(i, DemoNode.start(n.name, n.port, ports, uri, TREE, partitions, n.log.getParent(),
                        nodeSettings(), tls.nodeOptions(i)));
            }
        }
    }

    private static DemoTls awaitCertificates(CompletableFuture<DemoTls> certs) throws InterruptedException {
        try {
            return certs.get();
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw new CliException(ExitCodes.FAILURE, "making the demo's TLS certificates failed: "
                    + c.getMessage(), c);
        }
    }

    /** Creates the demo tree in the shared catalog and picks, per partition, the keys that fall in it. */
    private List<List<String>> createTree(String uri) {
        try (Lattice l = Lattice.open(uri)) {
            PartialTree t = l.hostTree(TREE, TreeOptions.partitions(partitions));
            List<List<String>> keys = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                keys.add(new ArrayList<>());
            }
            int full = 0;
            for (int i = 0; full < partitions; i++) {
                String k = String.format("key-%07d", i);
                List<String> mine = keys.get(t.partitionOf(k));
                if (mine.size() < KEYS_PER_PARTITION) {
                    mine.add(k);
                    if (mine.size() == KEYS_PER_PARTITION) {
                        full++;
                    }
                }
            }
            return keys;
        }
    }

    /** Failure detection of the demo's members: faster than Pekko's defaults, as in the cluster's own tests. */
    private static List<String> nodeSettings() {
        return List.of("-Dpekko.cluster.split-brain-resolver.stable-after=" + STABLE_AFTER.toSeconds() + "s",
                "-Dpekko.cluster.failure-detector.acceptable-heartbeat-pause=3s",
                "-Dpekko.cluster.failure-detector.heartbeat-interval=500ms",
                "-Dpekko.cluster.sharding.retry-interval=500ms");
    }

    private static String routerSettings(int port, List<Integer> seeds) {
        StringBuilder sb = new StringBuilder();
        sb.append("pekko.remote.artery.canonical.hostname = \"127.0.0.1\"\n");
        sb.append("pekko.remote.artery.canonical.port = ").append(port).append('\n');
        sb.append("pekko.cluster.seed-nodes = [");
        for (int i = 0; i < seeds.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append("\"pekko://lattice@127.0.0.1:").append(seeds.get(i)).append('"');
        }
        sb.append("]\n");
        sb.append("pekko.stdout-loglevel = OFF\n");
        for (String d : nodeSettings()) {
            sb.append(d.substring(2).replace("=", " = ")).append('\n');
        }
        return sb.toString();
    }

    /** Closes the router, stops the surviving nodes (SIGTERM), PostgreSQL, and deletes the temporary directory. */
    private void shutDown(LatticeCluster router, EmbeddedPostgres pg, Path dir) {
        say("shutting down");
        if (router != null) {
            router.close();
        }
        List<String> exits = new ArrayList<>();
        List<Thread> stops = new ArrayList<>();
        for (DemoNode n : started) {
            if (n.alive()) {
                Thread t = new Thread(() -> {
                    Integer code = n.stop(60_000);
                    synchronized (exits) {
                        exits.add(n.name + (code == null ? " killed (did not leave within 60 s)" : " exited " + code));
                    }
                });
                t.start();
                stops.add(t);
            }
        }
        for (Thread t : stops) {
            try {
                t.join(70_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (pg != null) {
            try {
                pg.close();
            } catch (IOException e) {
                say("stopping PostgreSQL failed: " + e);
            }
        }
        exits.sort(Comparator.naturalOrder());
        if (keep) {
            say("stopped: " + exits + ", PostgreSQL; kept " + dir + " (node logs)");
        } else {
            deleteTree(dir);
            say("stopped: " + exits + ", PostgreSQL; removed " + dir);
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.err.println("lattice: could not remove " + dir + ": " + e.getMessage());
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void say(String line) {
        if (progress != null) {
            progress.println("cluster demo: " + line);
            progress.flush();
        }
    }

    List<DemoNode> nodes() {
        return started;
    }

    int partitions() {
        return partitions;
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    CliException failure(String message) {
        for (DemoNode n : started) {
            say("--- last lines of " + n.name + " (" + (n.alive() ? "running" : "exited") + "):\n" + n.tail(15));
        }
        return new CliException(ExitCodes.FAILURE, message);
    }

    /** @return partitions not in any of the sets */
    static Set<Integer> missing(int partitions, List<Set<Integer>> hosted) {
        Set<Integer> m = new TreeSet<>();
        for (int p = 0; p < partitions; p++) {
            m.add(p);
        }
        for (Set<Integer> h : hosted) {
            m.removeAll(h);
        }
        return m;
    }

    /** The partitions each node reports hosting, by name. */
    Map<String, Set<Integer>> ownership() {
        Map<String, Set<Integer>> m = new java.util.LinkedHashMap<>();
        for (DemoNode n : started) {
            if (n.alive()) {
                m.put(n.name, n.hosting(TREE));
            }
        }
        return m;
    }
}
