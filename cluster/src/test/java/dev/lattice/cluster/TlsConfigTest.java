package dev.lattice.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.lattice.engine.LatticeConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The TLS settings a node gets from {@link ClusterTls}, and the typed errors at start for key stores that are
 * missing, unreadable or do not open. The stores are checked before the engine opens, so the storage URI here
 * (nothing listens on port 1) is never reached when the check works.
 */
class TlsConfigTest {

    private static final String UNREACHABLE = "postgres://127.0.0.1:1/none?user=none";

    @TempDir
    static Path dir;
    private static Path keyStore;
    private static Path trustStore;

    @BeforeAll
    static void stores() {
        Path[] id = TestKeystores.stranger(dir, "config-test");
        keyStore = id[0];
        trustStore = id[1];
    }

    private static LatticeClusterConfig.Builder node() {
        return LatticeClusterConfig.builder().lattice(LatticeConfig.builder().uri(UNREACHABLE));
    }

    @Test
    void producesArteryTlsWithMutualAuthentication() {
        Config c = ClusterTls.of(keyStore, trustStore, "pw").pekkoConfig();
        assertThat(c.getString("pekko.remote.artery.transport")).isEqualTo("tls-tcp");
        assertThat(c.getString("pekko.remote.artery.ssl.ssl-engine-provider"))
                .isEqualTo("org.apache.pekko.remote.artery.tcp.ConfigSSLEngineProvider");
        Config e = c.getConfig(ClusterTls.SSL_ENGINE);
        assertThat(e.getBoolean("require-mutual-authentication")).isTrue();
        assertThat(e.getBoolean("hostname-verification")).isFalse();
        assertThat(e.getString("protocol")).isEqualTo("TLSv1.3");
        assertThat(e.getStringList("enabled-algorithms")).allMatch(s -> s.startsWith("TLS_AES_"));
        assertThat(e.getString("key-store")).isEqualTo(keyStore.toAbsolutePath().toString());
        assertThat(e.getString("trust-store")).isEqualTo(trustStore.toAbsolutePath().toString());
        assertThat(e.getString("key-store-password")).isEqualTo("pw");
        assertThat(e.getString("key-password")).isEqualTo("pw");
        assertThat(e.getString("trust-store-password")).isEqualTo("pw");

        Config v12 = ClusterTls.of(keyStore, trustStore, "pw").protocol("TLSv1.2").hostnameVerification(true)
                .pekkoConfig().getConfig(ClusterTls.SSL_ENGINE);
        assertThat(v12.getString("protocol")).isEqualTo("TLSv1.2");
        assertThat(v12.getStringList("enabled-algorithms")).allMatch(s -> s.startsWith("TLS_ECDHE_"));
        assertThat(v12.getBoolean("hostname-verification")).isTrue();
    }

    @Test
    void tlsGoesOverTheNodesPekkoSettingsAndIsOffUnlessConfigured() {
        Config plain = node().pekko(ConfigFactory.parseString("pekko.remote.artery.canonical.port = 1234")).build()
                .pekko().withFallback(ConfigFactory.load());
        assertThat(plain.getString("pekko.remote.artery.transport")).isEqualTo("tcp");

        Config tls = node().pekko(ConfigFactory.parseString(
                        "pekko.remote.artery.canonical.port = 1234\npekko.remote.artery.transport = tcp"))
                .tls(keyStore, trustStore, TestKeystores.PASSWORD).build().pekko();
        assertThat(tls.getString("pekko.remote.artery.transport")).isEqualTo("tls-tcp");
        assertThat(tls.getInt("pekko.remote.artery.canonical.port")).isEqualTo(1234);
        assertThat(tls.getString(ClusterTls.SSL_ENGINE + ".key-store")).isEqualTo(keyStore.toString());
    }

    @Test
    void readFromTypesafeConfigAsClusterNodeMainDoes() {
        Config file = ConfigFactory.parseString("lattice.cluster {\n"
                + "  provider = \"" + UNREACHABLE + "\"\n"
                + "  tls { key-store = \"" + keyStore + "\", trust-store = \"" + trustStore + "\"\n"
                + "        password = \"" + TestKeystores.PASSWORD + "\", protocol = TLSv1.2, hostname-verification = on }\n"
                + "}\npekko.remote.artery.canonical.port = 4321\n");
        LatticeClusterConfig c = LatticeClusterConfig.fromConfig(file).build();
        assertThat(c.tls().keyStore()).isEqualTo(keyStore.toAbsolutePath());
        assertThat(c.tls().trustStore()).isEqualTo(trustStore.toAbsolutePath());
        assertThat(c.tls().protocol()).isEqualTo("TLSv1.2");
        assertThat(c.tls().hostnameVerification()).isTrue();
        Config pekko = c.pekko();
        assertThat(pekko.getString("pekko.remote.artery.transport")).isEqualTo("tls-tcp");
        assertThat(pekko.getInt("pekko.remote.artery.canonical.port")).isEqualTo(4321);

        Config plain = ConfigFactory.parseString("lattice.cluster.provider = \"" + UNREACHABLE + "\"");
        assertThat(LatticeClusterConfig.fromConfig(plain).build().tls()).isNull();
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> ClusterTls.of(keyStore, trustStore, "")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("password");
        assertThatThrownBy(() -> ClusterTls.of(keyStore, trustStore, "pw").protocol("SSLv3"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SSLv3");
        assertThatThrownBy(() -> ClusterTls.of(null, trustStore, "pw")).isInstanceOf(NullPointerException.class);
        assertThat(ClusterTls.of(keyStore, trustStore, "s3cret").toString()).doesNotContain("s3cret")
                .contains(keyStore.toString());
    }

    @Test
    void missingKeyStoreFailsAtStartNamingThePath() {
        Path missing = dir.resolve("no-such-keystore.p12");
        LatticeClusterConfig c = node().tls(missing, trustStore, TestKeystores.PASSWORD).build();
        assertThatThrownBy(() -> LatticeCluster.start(c)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(missing.toString()).hasMessageContaining("key-store")
                .hasMessageContaining("no such file");
    }

    @Test
    void missingTrustStoreFailsAtStartNamingThePath() {
        Path missing = dir.resolve("no-such-truststore.p12");
        LatticeClusterConfig c = node().tls(keyStore, missing, TestKeystores.PASSWORD).build();
        assertThatThrownBy(() -> LatticeCluster.start(c)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(missing.toString()).hasMessageContaining("trust-store");
    }

    @Test
    void unreadableOrWrongStoresFailAtStartNamingThePath() {
        // a directory is no key store
        assertThatThrownBy(() -> LatticeCluster.start(node().tls(dir, trustStore, TestKeystores.PASSWORD).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(dir.toString())
                .hasMessageContaining("not a readable file");
        // the wrong password does not open it
        assertThatThrownBy(() -> LatticeCluster.start(node().tls(keyStore, trustStore, "wrong-password").build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(keyStore.toString())
                .hasMessageContaining("cannot be opened");
        // a trust store has no private key to present
        assertThatThrownBy(() -> LatticeCluster.start(node().tls(trustStore, trustStore, TestKeystores.PASSWORD)
                .build())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(trustStore.toString())
                .hasMessageContaining("no private key");
    }

    @Test
    void storesSetByHandInThePekkoSettingsAreCheckedToo() {
        Path missing = dir.resolve("hand-written.p12");
        Config hand = ConfigFactory.parseString("pekko.remote.artery.transport = tls-tcp\n"
                + ClusterTls.SSL_ENGINE + ".key-store = \"" + missing + "\"\n"
                + ClusterTls.SSL_ENGINE + ".trust-store = \"" + trustStore + "\"\n");
        assertThatThrownBy(() -> LatticeCluster.start(node().pekko(hand).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(missing.toString());
    }
}
