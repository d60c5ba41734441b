package dev.lattice.examples.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.lattice.cluster.ClusterCertificates;
import dev.lattice.cluster.ClusterTls;
import dev.lattice.cluster.LatticeCluster;
import dev.lattice.cluster.LatticeClusterConfig;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * One tree served by three Lattice cluster nodes on one shared storage. In production each node is its own JVM on
 * its own machine (the same code, one {@code LatticeCluster.start} per JVM, or {@code lattice cluster node}); here the
 * three run in one JVM, on 127.0.0.1, so the example runs anywhere. Any node serves any key: each call goes to the
 * node that owns the key's partition. Then one node leaves gracefully (its partitions are handed off) and the
 * other two go on serving every key.
 *
 * <p>The nodes' traffic is TLS with mutual authentication, as it should be in production: the example first makes a
 * throwaway cluster CA, its trust store and one key store per node ({@link ClusterCertificates}, what
 * {@code lattice cluster certs} runs) in a temporary directory, and deletes them at the end. A fourth node without
 * a certificate (plain TCP) then tries to join and is refused.
 *
 * <p>Run: {@code ClusterExample [providerUri]}. Every node must reach the same storage: default
 * {@code memory:cluster-example} (shared within this JVM only); across JVMs use e.g.
 * {@code postgres://127.0.0.1:5432/postgres?user=postgres&schema=orders}.
 */
public final class ClusterExample {

    private ClusterExample() {
    }

    /**
     * @param args optional provider URI
     */
    public static void main(String[] args) {
        String uri = args.length > 0 ? args[0] : "memory:cluster-example";
        Map<String, Object> result = run(uri);
        System.out.println("done: " + result);
    }

    /**
     * Starts three nodes, writes and reads through them, lets one leave, reads again, stops the others.
     *
     * @param uri the storage every node shares
     * @return what the example saw: counts and values read, partitions hosted
     * @throws IllegalStateException if the cluster does not form within a minute
     * @throws dev.lattice.cluster.CertificateToolException if the JDK's keytool is missing or fails
     */
    public static Map<String, Object> run(String uri) {
        Map<String, Object> seen = new LinkedHashMap<>();
        int[] ports = {freePort(), freePort(), freePort()};
        List<LatticeCluster> nodes = new ArrayList<>();
        Path tlsDir = tempDir();
        try {
            // a throwaway cluster CA and one key store per node (in production: lattice cluster certs, once)
            ClusterCertificates ca = ClusterCertificates.createCa(tlsDir, ClusterCertificates.randomPassword(),
                    "Lattice example CA", 1);
            List<ClusterTls> tls = new ArrayList<>();
            for (int n = 1; n <= 3; n++) {
                tls.add(ca.tls(ca.nodeKeyStore("node-" + n, List.of("127.0.0.1"), 1)));
            }
            for (int n = 0; n < 3; n++) {
                nodes.add(LatticeCluster.start(node(uri, ports[n], ports[0]).tls(tls.get(n)).build()));
            }
            for (LatticeCluster node : nodes) {
                if (!node.awaitMembers(3, Duration.ofSeconds(60))) {
                    throw new IllegalStateException("the cluster did not form within 60 s");
                }
            }
            Config pekko = nodes.get(0).system().settings().config();
            String transport = pekko.getString("pekko.remote.artery.transport");
            boolean mutual = pekko.getBoolean(ClusterTls.SSL_ENGINE + ".require-mutual-authentication");
            System.out.println("3 nodes up on 127.0.0.1 ports " + ports[0] + ", " + ports[1] + ", " + ports[2]
                    + ", transport " + transport + (mutual ? " with mutual authentication" : ""));
            seen.put("transport", transport);
            seen.put("mutual authentication", mutual);

            // a node without the cluster's certificate (plain TCP) tries to join: every handshake fails
            LatticeCluster intruder = LatticeCluster.start(node(uri, freePort(), ports[0]).build());
            try {
                boolean joined = intruder.awaitMembers(1, Duration.ofSeconds(8));
                org.apache.pekko.actor.Address address =
                        org.apache.pekko.cluster.typed.Cluster.get(intruder.system()).selfMember().address();
                for (LatticeCluster node : nodes) {
                    // no member lists it, in any status
                    for (org.apache.pekko.cluster.Member m
                            : org.apache.pekko.cluster.typed.Cluster.get(node.system()).state().getMembers()) {
                        joined |= m.address().equals(address);
                    }
                }
                System.out.println("a node without the cluster's certificate (plain TCP) tried to join for 8 s: "
                        + (joined ? "JOINED" : "refused"));
                seen.put("intruder joined", joined);
            } finally {
                intruder.close();
            }

            // the same tree through any node: writes through node 1, reads through node 3
            Tree viaFirst = nodes.get(0).tree("orders", TreeOptions.partitions(6));
            Tree viaThird = nodes.get(2).tree("orders");
            for (int i = 0; i < 30; i++) {
                viaFirst.put(String.format("order-%02d", i), bytes("amount " + (i * 10)));
            }
            String order7 = text(viaThird.get("order-07").orElseThrow());
            System.out.println("order-07 read through node 3: " + order7);
            seen.put("order-07", order7);
            // count and scan fan out to the owners of every partition and merge in key order
            seen.put("count", viaThird.count());
            System.out.println("count through node 3: " + viaThird.count());
            // an atomic write over several partitions: all or nothing
            Tree viaSecond = nodes.get(1).tree("orders");
            viaSecond.putAllAtomic(Map.of("order-00", bytes("paid"), "order-29", bytes("paid")));
            seen.put("order-29", text(viaFirst.get("order-29").orElseThrow()));
            for (int n = 0; n < 3; n++) {
                System.out.println("node " + (n + 1) + " hosts partitions " + nodes.get(n).hostedPartitions("orders"));
            }

            // node 2 leaves: its partitions are drained, checkpointed and handed to the others
            nodes.remove(1).close();
            System.out.println("node 2 left");
            String afterLeave = text(viaThird.get("order-00").orElseThrow());
            System.out.println("order-00 after the leave: " + afterLeave + ", count " + viaFirst.count());
            // the next request to a partition of node 2 hosted it on one of the others
            System.out.println("node 1 hosts " + nodes.get(0).hostedPartitions("orders") + ", node 3 hosts "
                    + nodes.get(1).hostedPartitions("orders"));
            seen.put("order-00 after leave", afterLeave);
            seen.put("count after leave", viaFirst.count());
            return seen;
        } finally {
            for (LatticeCluster node : nodes) {
                node.close();
            }
            deleteTree(tlsDir);
        }
    }

    private static LatticeClusterConfig.Builder node(String uri, int port, int seed) {
        return LatticeClusterConfig.builder()
                .lattice(LatticeConfig.builder().uri(uri))
                .pekko(ConfigFactory.parseString("""
                        pekko.remote.artery.canonical.hostname = "127.0.0.1"
                        pekko.remote.artery.canonical.port = %d
                        pekko.cluster.seed-nodes = ["pekko://lattice@127.0.0.1:%d"]
                        """.formatted(port, seed)));
    }

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("lattice-cluster-example-tls-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("could not remove " + dir + ": " + e.getMessage());
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
