package dev.lattice.cluster;

import dev.lattice.engine.LatticeException;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A rolling upgrade on real Pekko nodes in one JVM (three actor systems on 127.0.0.1, one embedded PostgreSQL): two
 * nodes of this release and one of the previous release, simulated by {@link PeerProtocols#LEVEL_SETTING} = 1 (no
 * protocol role; its serializer refuses every operation code above 16, as that release's did, so Pekko drops such
 * messages). Through every node, scans (forward, reverse, ranges, several pages), counts, getAll, multi-partition
 * and cross-tree atomic writes and a range delete give the right answers without waiting for a timeout, because the
 * upgraded nodes see the older member and use the previous level's operations; an idempotency key fails at once,
 * typed, with nothing written. The same scan through a node told to ignore the older member (no fallback) fails
 * after the operation timeout: the simulated node really drops what it cannot read; when the older member is seen only
 * after the opens were sent, the scan falls back after one request timeout. A node of this release answers
 * an operation code it does not know with a typed error; the simulated older node drops it. Then the older node
 * leaves, and scans and counts through the upgraded nodes are one cut again.
 */
class ClusterRollingUpgradeTest {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);
    private final List<LatticeCluster> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        for (LatticeCluster n : nodes) {
            n.close();
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private LatticeCluster start(String uri, int port, int seed, int level) {
        String extra = "pekko.actor.serialize-messages = on\n"
                + (level < PeerProtocols.CURRENT ? PeerProtocols.LEVEL_SETTING + " = " + level + "\n" : "");
        LatticeCluster n = LatticeCluster.start(TestCluster.node(uri, port, seed, extra)
                .requestTimeout(REQUEST_TIMEOUT).operationTimeout(OPERATION_TIMEOUT).scanPageEntries(7).build());
        nodes.add(n);
        return n;
    }

    /** The keys of {@code tree} read through {@code via}, checking that the scan took less than a request timeout. */
    private static List<String> scanned(Tree via, String from, String to, boolean reverse,
                                        Class<? extends ScanCursor> expected) {
        long t0 = System.nanoTime();
        List<String> keys = new ArrayList<>();
        try (ScanCursor c = via.scan(from, to, reverse)) {
            assertThat(c).isInstanceOf(expected);
            c.forEachRemaining(e -> keys.add(e.key() + "=" + s(e.value())));
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(ms).as("the scan waited for no timeout").isLessThan(REQUEST_TIMEOUT.toMillis());
        return keys;
    }

    private static List<String> expected(TreeMap<String, String> m, String from, String to, boolean reverse) {
        List<String> out = new ArrayList<>();
        Map<String, String> sub = from == null ? m : m.subMap(from, true, to, false);
        sub.forEach((k, v) -> out.add(k + "=" + v));
        if (reverse) {
            Collections.reverse(out);
        }
        return out;
    }

    private static long timedCount(Tree via) {
        long t0 = System.nanoTime();
        long n = via.count();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("the count waited for no timeout")
                .isLessThan(REQUEST_TIMEOUT.toMillis());
        return n;
    }

    @Test
    void aClusterMixingTwoAdjacentVersionsKeepsServingAndIsOneCutAgainAfterTheUpgrade() throws Exception {
        String uri = TestCluster.freshPostgresUri();
        int seed = TestCluster.freePort();
        start(uri, seed, seed, PeerProtocols.CURRENT);
        start(uri, TestCluster.freePort(), seed, PeerProtocols.CURRENT);
        LatticeCluster old = start(uri, TestCluster.freePort(), seed, 1);
        for (LatticeCluster n : nodes) {
            assertThat(n.awaitMembers(3, Duration.ofSeconds(60))).as("cluster formed").isTrue();
        }
        assertThat(nodes.get(0).hostProtocolLevel()).as("the older member is seen").isEqualTo(1);
        assertThat(old.services().protocols().own()).isEqualTo(1);

        Tree t0 = nodes.get(0).tree("mixed", TreeOptions.partitions(6));
        nodes.get(0).tree("other", TreeOptions.partitions(3));
        TreeMap<String, String> expected = new TreeMap<>();
        for (int i = 0; i < 90; i++) {
            String k = String.format("k-%03d", i);
            nodes.get(i % 3).tree("mixed").put(k, b("v" + i));
            expected.put(k, "v" + i);
        }
        assertThat(old.hostedPartitions("mixed")).as("the older node owns some partitions").isNotEmpty();

        for (int via = 0; via < 3; via++) {
            LatticeCluster n = nodes.get(via);
            Tree t = n.tree("mixed");
            String who = "through node " + via;
            // atomic writes over several partitions, coordinated wherever the lowest log lives
            Map<String, byte[]> batch = new TreeMap<>();
            for (int i = 0; i < 8; i++) {
                String k = "a" + via + "-" + i;
                batch.put(k, b("atomic" + via));
                expected.put(k, "atomic" + via);
            }
            assertThat(t.putAllAtomic(batch)).as(who).isPositive();
            n.atomic().put(t, "x" + via, b("cross" + via)).put(n.tree("other"), "y" + via, b("cross" + via)).commit();
            expected.put("x" + via, "cross" + via);
            assertThat(nodes.get((via + 1) % 3).tree("other").get("y" + via).map(ClusterRollingUpgradeTest::s))
                    .as(who).hasValue("cross" + via);

            assertThat(scanned(t, null, null, false, PagedScanCursor.class)).as(who)
                    .isEqualTo(expected(expected, null, null, false));
            assertThat(scanned(t, "k-010", "k-070", true, PagedScanCursor.class)).as(who)
                    .isEqualTo(expected(expected, "k-010", "k-070", true));
            assertThat(scanned(t, "a", "b", false, PagedScanCursor.class)).as(who)
                    .isEqualTo(expected(expected, "a", "b", false));
            assertThat(timedCount(t)).as(who).isEqualTo(expected.size());
            List<String> ask = new ArrayList<>(batch.keySet());
            ask.addAll(List.of("k-001", "k-044", "k-089", "missing"));
            Map<String, byte[]> got = t.getAll(ask);
            assertThat(got.keySet()).as(who).containsExactlyInAnyOrderElementsOf(
                    ask.subList(0, ask.size() - 1));
            assertThat(s(got.get("k-044"))).as(who).isEqualTo("v44");
        }
        // a range delete is one atomic write over every partition
        nodes.get(1).tree("mixed").deleteRange("a0", "a1");
        expected.keySet().removeIf(k -> k.startsWith("a0"));
        assertThat(scanned(old.tree("mixed"), null, null, false, PagedScanCursor.class))
                .isEqualTo(expected(expected, null, null, false));
        assertThat(timedCount(nodes.get(1).tree("mixed"))).isEqualTo(expected.size());

        // an idempotency key needs an operation the older node cannot read: refused at once, typed, nothing written
        long t = System.nanoTime();
        assertThatThrownBy(() -> nodes.get(0).atomic().idempotencyKey("order-1").put(t0, "idem", b("x")).commit())
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("ATOMIC_COMMIT_IDEMPOTENT")
                .hasMessageContaining("Rolling upgrades");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t)).isLessThan(REQUEST_TIMEOUT.toMillis());
        assertThat(t0.get("idem")).isEmpty();

        // an unknown operation code: a node of this release answers with a typed error, the older one drops it
        int onNew = nodes.get(0).hostedPartitions("mixed").iterator().next();
        Response refused = unknownOp(nodes.get(1), onNew).toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(refused.ok()).isFalse();
        assertThat(RemoteErrors.toException(refused)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("operation code 99")
                .hasMessageContaining("wire protocol level " + PeerProtocols.CURRENT);
        int onOld = old.hostedPartitions("mixed").iterator().next();
        assertThatThrownBy(() -> unknownOp(nodes.get(1), onOld).toCompletableFuture().get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(TimeoutException.class);

        // the control: without the fallback the scan's held-scan opens to the older owner are dropped
        nodes.get(0).services().protocols().assumeOwnLevel(true);
        try {
            long c0 = System.nanoTime();
            assertThatThrownBy(() -> {
                try (ScanCursor c = t0.scan(null, null, false)) {
                    c.forEachRemaining(e -> { });
                }
            }).isInstanceOf(LatticeException.class).hasMessageContaining("no owner answered");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - c0))
                    .isGreaterThanOrEqualTo(OPERATION_TIMEOUT.toMillis());
        } finally {
            nodes.get(0).services().protocols().assumeOwnLevel(false);
        }
        // the older member seen only after the opens were sent (as one that joins meanwhile): the open that had no
        // answer is refused once the member is seen, and the scan goes on as the previous level's
        nodes.get(0).services().protocols().assumeOwnLevel(true);
        Thread seen = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                return;
            }
            nodes.get(0).services().protocols().assumeOwnLevel(false);
        });
        long r0 = System.nanoTime();
        seen.start();
        List<String> late = new ArrayList<>();
        try (ScanCursor c = t0.scan(null, null, false)) {
            assertThat(c).isInstanceOf(PagedScanCursor.class);
            c.forEachRemaining(e -> late.add(e.key() + "=" + s(e.value())));
        } finally {
            seen.join();
        }
        assertThat(late).isEqualTo(expected(expected, null, null, false));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - r0)).as("one attempt's wait, not the operation's")
                .isLessThan(OPERATION_TIMEOUT.toMillis());

        // the upgrade's last step: the older node leaves (its logs handed off to the upgraded nodes)
        nodes.remove(old);
        old.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (nodes.stream().anyMatch(n -> n.services().protocols().hostLevel() != 2)
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        for (LatticeCluster n : nodes) {
            assertThat(n.hostProtocolLevel()).as("every host upgraded").isEqualTo(PeerProtocols.CURRENT);
            Tree tt = n.tree("mixed");
            tt.count(); // the partitions handed off are hosted again (claim and replay) on first use
            assertThat(scanned(tt, null, null, false, ClusterScanCursor.class))
                    .isEqualTo(expected(expected, null, null, false));
            assertThat(timedCount(tt)).isEqualTo(expected.size());
        }
        assertThat(nodes.get(0).atomic().idempotencyKey("order-1").put(t0, "idem", b("x")).commit().version())
                .isPositive();
        assertThat(t0.get("idem").map(ClusterRollingUpgradeTest::s)).hasValue("x");
    }

    /** Sends a request with operation code 99 (none has it) to partition {@code p} of "mixed" from {@code via}. */
    private static java.util.concurrent.CompletionStage<Response> unknownOp(LatticeCluster via, int p) {
        EntityRef<EntityMessage> ref = ClusterSharding.get(via.system())
                .entityRefFor(LatticeCluster.LOG_ENTITY, new LogAddress("mixed", p).entityId());
        return ref.ask(r -> new UnknownRequest(99, r), Duration.ofSeconds(1));
    }
}
