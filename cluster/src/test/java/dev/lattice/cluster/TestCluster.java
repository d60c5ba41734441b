package dev.lattice.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.lattice.engine.LatticeConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.UUID;

/** Shared pieces of the cluster tests: one embedded PostgreSQL per test JVM, free ports, node settings. */
final class TestCluster {

    private static EmbeddedPostgres postgres;

    private TestCluster() {
    }

    /** @return a fresh schema on the test JVM's embedded PostgreSQL (started on first use, on 127.0.0.1) */
    static synchronized String freshPostgresUri() {
        if (postgres == null) {
            try {
                postgres = EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            EmbeddedPostgres pg = postgres;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    pg.close();
                } catch (IOException ignored) {
                    // exiting
                }
            }));
        }
        return "postgres://127.0.0.1:" + postgres.getPort() + "/postgres?user=postgres&schema=c"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Pekko settings of a node on 127.0.0.1:{@code port} joining {@code seedPort}, with test-speed failure detection. */
    static Config pekko(int port, int seedPort, String extra) {
        return ConfigFactory.parseString(extra + "\n"
                + "pekko.remote.artery.canonical.hostname = \"127.0.0.1\"\n"
                + "pekko.remote.artery.canonical.port = " + port + "\n"
                + "pekko.cluster.seed-nodes = [\"pekko://lattice@127.0.0.1:" + seedPort + "\"]\n"
                + "pekko.cluster.split-brain-resolver.stable-after = 4s\n"
                + "pekko.cluster.failure-detector.acceptable-heartbeat-pause = 2s\n"
                + "pekko.cluster.failure-detector.heartbeat-interval = 500ms\n"
                + "pekko.cluster.sharding.retry-interval = 500ms\n"
                + "pekko.coordinated-shutdown.exit-jvm = off\n");
    }

    static LatticeClusterConfig.Builder node(String uri, int port, int seedPort, String extra) {
        return LatticeClusterConfig.builder()
                .lattice(LatticeConfig.builder().uri(uri))
                .pekko(pekko(port, seedPort, extra))
                .readLease(java.time.Duration.ofSeconds(1));
    }
}
