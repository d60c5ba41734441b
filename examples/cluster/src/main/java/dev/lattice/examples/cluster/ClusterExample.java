package dev.lattice.examples.cluster;

import com.typesafe.config.ConfigFactory;
import dev.lattice.cluster.LatticeCluster;
import dev.lattice.cluster.LatticeClusterConfig;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One tree served by three Lattice cluster nodes on one shared storage. In production each node is its own JVM on
 * its own machine (the same code, one {@code LatticeCluster.start} per JVM, or {@code lattice cluster node}); here the
 * three run in one JVM, on 127.0.0.1, so the example runs anywhere. Any node serves any key: each call goes to the
 * node that owns the key's partition. Then one node leaves gracefully (its partitions are handed off) and the
 * other two go on serving every key.
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
     */
    public static Map<String, Object> run(String uri) {
        Map<String, Object> seen = new LinkedHashMap<>();
        int[] ports = {freePort(), freePort(), freePort()};
        List<LatticeCluster> nodes = new ArrayList<>();
        try {
            for (int port : ports) {
                nodes.add(LatticeCluster.start(LatticeClusterConfig.builder()
                        .lattice(LatticeConfig.builder().uri(uri))
                        .pekko(ConfigFactory.parseString("""
                                pekko.remote.artery.canonical.hostname = "127.0.0.1"
                                pekko.remote.artery.canonical.port = %d
                                pekko.cluster.seed-nodes = ["pekko://lattice@127.0.0.1:%d"]
                                """.formatted(port, ports[0])))
                        .build()));
            }
            for (LatticeCluster node : nodes) {
                if (!node.awaitMembers(3, Duration.ofSeconds(60))) {
                    throw new IllegalStateException("the cluster did not form within 60 s");
                }
            }
            System.out.println("3 nodes up on 127.0.0.1 ports " + ports[0] + ", " + ports[1] + ", " + ports[2]);

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
