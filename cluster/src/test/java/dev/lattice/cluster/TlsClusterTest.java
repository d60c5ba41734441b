package dev.lattice.cluster;

import dev.lattice.engine.LatticeException;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;
import dev.lattice.engine.WriteOutcomeUnknownException;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two members on 127.0.0.1 whose traffic is TLS with mutual authentication (certificates signed by a test CA,
 * hostname verification on), one embedded PostgreSQL: they form a cluster and serve a tree; nodes without a
 * certificate the cluster trusts (a stranger's self-signed one, one that trusts the cluster but is not trusted by
 * it, plain TCP) never become members and none of their requests is served, although they reach the same storage.
 */
class TlsClusterTest {

    private static final String TREE = "tls-orders";
    private static final Duration WATCH = Duration.ofSeconds(12);

    @TempDir
    static Path dir;
    private static TestKeystores ca;
    private static String uri;
    private static int seed;
    private static final List<LatticeCluster> members = new ArrayList<>();

    @BeforeAll
    static void startMembers() {
        ca = TestKeystores.clusterCa(dir);
        uri = TestCluster.freshPostgresUri();
        seed = TestCluster.freePort();
        int[] ports = {seed, TestCluster.freePort()};
        for (int i = 0; i < ports.length; i++) {
            ClusterTls tls = ClusterTls.of(ca.member("member-" + i), ca.trustStore(), TestKeystores.PASSWORD)
                    .hostnameVerification(true);
            members.add(LatticeCluster.start(TestCluster.node(uri, ports[i], seed, "").tls(tls).build()));
        }
        for (LatticeCluster m : members) {
            assertThat(m.awaitMembers(2, Duration.ofSeconds(60))).as("TLS cluster formed").isTrue();
        }
        members.get(0).tree(TREE, TreeOptions.partitions(4)).put("existing", b("here"));
    }

    @AfterAll
    static void stopMembers() {
        for (LatticeCluster m : members) {
            m.close();
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static Set<Address> seenBy(LatticeCluster n) {
        Set<Address> out = new HashSet<>();
        for (Member m : Cluster.get(n.system()).state().getMembers()) {
            out.add(m.address());
        }
        return out;
    }

    private static Address address(LatticeCluster n) {
        return Cluster.get(n.system()).selfMember().address();
    }

    @Test
    void membersWithTheClustersCertificatesFormAClusterAndServeATree() {
        for (LatticeCluster m : members) {
            assertThat(m.system().settings().config().getString("pekko.remote.artery.transport")).isEqualTo("tls-tcp");
            assertThat(m.system().settings().config().getBoolean(
                    ClusterTls.SSL_ENGINE + ".require-mutual-authentication")).isTrue();
        }
        Tree via0 = members.get(0).tree(TREE);
        Tree via1 = members.get(1).tree(TREE);
        for (int i = 0; i < 40; i++) {
            (i % 2 == 0 ? via0 : via1).put("k-" + i, b("v" + i));
        }
        for (int i = 0; i < 40; i++) {
            assertThat((i % 2 == 0 ? via1 : via0).get("k-" + i).map(TlsClusterTest::s)).as("k-" + i)
                    .hasValue("v" + i);
        }
        // both members host partitions, so requests did cross the TLS connection
        Set<Integer> hosted0 = members.get(0).services().tree(TREE).hostedPartitions();
        Set<Integer> hosted1 = members.get(1).services().tree(TREE).hostedPartitions();
        assertThat(hosted0).isNotEmpty();
        assertThat(hosted1).isNotEmpty();
        Set<Integer> all = new HashSet<>(hosted0);
        all.addAll(hosted1);
        assertThat(all).containsExactlyInAnyOrder(0, 1, 2, 3);
    }

    /** The control for the refusals below: a node started the same way, but with a certificate of the CA, joins. */
    @Test
    void aThirdNodeWithACertificateOfTheClustersCaJoinsAndIsServed() {
        ClusterTls tls = ClusterTls.of(ca.member("member-2"), ca.trustStore(), TestKeystores.PASSWORD)
                .hostnameVerification(true);
        LatticeCluster third = LatticeCluster.start(TestCluster.node(uri, TestCluster.freePort(), seed, "")
                .tls(tls).build());
        try {
            assertThat(third.awaitMembers(3, Duration.ofSeconds(60))).as("third member up").isTrue();
            for (LatticeCluster m : members) {
                assertThat(seenBy(m)).contains(address(third));
            }
            third.tree(TREE).put("third-key", b("joined"));
            assertThat(members.get(0).tree(TREE).get("third-key").map(TlsClusterTest::s)).hasValue("joined");
            assertThat(third.tree(TREE).get("existing").map(TlsClusterTest::s)).hasValue("here");
        } finally {
            third.close();
        }
        for (LatticeCluster m : members) {
            assertThat(m.tree(TREE).get("third-key").map(TlsClusterTest::s)).hasValue("joined");
        }
    }

    @Test
    void aStrangersCertificateIsRefused() {
        Path[] stranger = TestKeystores.stranger(dir, "member-9");
        refused(ClusterTls.of(stranger[0], stranger[1], TestKeystores.PASSWORD), "stranger-key");
    }

    @Test
    void aNodeThatTrustsTheClusterButIsNotTrustedByItIsRefused() {
        Path[] stranger = TestKeystores.stranger(dir, "half-stranger");
        refused(ClusterTls.of(stranger[0], ca.trustStore(), TestKeystores.PASSWORD), "half-stranger-key");
    }

    @Test
    void aNodeWithoutTlsIsRefused() {
        refused(null, "plain-key");
    }

    /**
     * Starts an outsider with {@code tls} (null: plain TCP) that joins the members' seed; checks for {@link #WATCH}
     * that no member ever lists it (in any status) and that it is never up, then that its put and get are not
     * served and that the put did not land.
     */
    private static void refused(ClusterTls tls, String key) {
        Set<Address> cluster = new HashSet<>();
        for (LatticeCluster m : members) {
            cluster.add(address(m));
        }
        LatticeCluster outsider = LatticeCluster.start(TestCluster.node(uri, TestCluster.freePort(), seed, "")
                .tls(tls).requestTimeout(Duration.ofSeconds(1)).operationTimeout(Duration.ofSeconds(3)).build());
        try {
            Address outsiderAddress = address(outsider);
            assertThat(cluster).doesNotContain(outsiderAddress);
            long end = System.nanoTime() + WATCH.toNanos();
            while (System.nanoTime() < end) {
                for (LatticeCluster m : members) {
                    assertThat(seenBy(m)).as("members as " + address(m) + " sees them").doesNotContain(outsiderAddress)
                            .containsAll(cluster);
                }
                assertThat(Cluster.get(outsider.system()).selfMember().status()).isNotEqualTo(MemberStatus.up());
                assertThat(seenBy(outsider)).as("the outsider's view").doesNotContainAnyElementsOf(cluster);
                sleep(200);
            }
            assertThat(outsider.awaitMembers(1, Duration.ofSeconds(1))).isFalse();
            assertThat(outsider.upMembers()).isZero();

            Tree t = outsider.tree(TREE);
            assertThatThrownBy(() -> t.put(key, b("intruded"))).isInstanceOf(WriteOutcomeUnknownException.class);
            assertThatThrownBy(() -> t.get("existing")).isInstanceOf(LatticeException.class)
                    .hasMessageContaining("no owner answered");
            assertThat(outsider.services().tree(TREE).hostedPartitions()).isEmpty();
        } finally {
            outsider.close();
        }
        for (LatticeCluster m : members) {
            assertThat(m.tree(TREE).get(key)).as(key + " through " + address(m)).isEmpty();
            assertThat(m.tree(TREE).get("existing").map(TlsClusterTest::s)).hasValue("here");
            assertThat(m.awaitMembers(2, Duration.ofSeconds(10))).isTrue();
        }
        members.get(1).tree(TREE).put("after-" + key, b("served"));
        assertThat(members.get(0).tree(TREE).get("after-" + key).map(TlsClusterTest::s)).hasValue("served");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
