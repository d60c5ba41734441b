package dev.lattice.cluster;

import com.typesafe.config.ConfigFactory;

import java.util.concurrent.TimeUnit;

/**
 * Runs one cluster node until it leaves or is downed: configured by {@code application.conf} and {@code -D}
 * system properties ({@link LatticeClusterConfig#fromConfig}), for example
 * {@code -Dlattice.cluster.provider=postgres://... -Dpekko.remote.artery.canonical.port=25520
 * -Dpekko.cluster.seed-nodes.0=pekko://lattice@127.0.0.1:25520}. SIGTERM leaves the cluster gracefully (the node's
 * logs are handed off); a node downed by the split brain resolver exits with status 1.
 */
public final class ClusterNodeMain {

    private ClusterNodeMain() {
    }

    /**
     * @param args ignored (settings come from the configuration)
     * @throws InterruptedException if interrupted while running
     */
    public static void main(String[] args) throws InterruptedException {
        LatticeCluster node = LatticeCluster.start(LatticeClusterConfig.fromConfig(ConfigFactory.load()).build());
        System.out.println("lattice cluster node started at " + node.system().address());
        while (!node.isClosed()) {
            TimeUnit.MILLISECONDS.sleep(200);
        }
        System.out.println("lattice cluster node stopped");
        System.exit(node.wasDowned() ? 1 : 0);
    }
}
