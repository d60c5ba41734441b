package dev.lattice.cluster;

import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeEntry;
import dev.lattice.engine.TreeOptions;
import dev.lattice.engine.Versioned;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Three nodes in one JVM (three actor systems on 127.0.0.1, one embedded PostgreSQL): routing, fan-out, typed
 * errors over the wire (every message is serialized, also between local actors: serialize-messages = on), and a
 * graceful leave that hands the node's logs off without losing a write.
 */
class ClusterInProcessTest {

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

    private void startThree(String uri) {
        int seed = TestCluster.freePort();
        String extra = "pekko.actor.serialize-messages = on";
        nodes.add(LatticeCluster.start(TestCluster.node(uri, seed, seed, extra).build()));
        nodes.add(LatticeCluster.start(TestCluster.node(uri, TestCluster.freePort(), seed, extra).build()));
        nodes.add(LatticeCluster.start(TestCluster.node(uri, TestCluster.freePort(), seed, extra).build()));
        for (LatticeCluster n : nodes) {
            assertThat(n.awaitMembers(3, Duration.ofSeconds(60))).as("cluster formed").isTrue();
        }
    }

    /** Three nodes with a short operation timeout (the idle limit of a held scan) and small scan pages. */
    private void startThreeQuick(String uri, Duration operationTimeout, int pageEntries) {
        int seed = TestCluster.freePort();
        String extra = "pekko.actor.serialize-messages = on";
        for (int i = 0; i < 3; i++) {
            nodes.add(LatticeCluster.start(TestCluster.node(uri, i == 0 ? seed : TestCluster.freePort(), seed, extra)
                    .operationTimeout(operationTimeout).scanPageEntries(pageEntries).build()));
        }
        for (LatticeCluster n : nodes) {
            assertThat(n.awaitMembers(3, Duration.ofSeconds(60))).as("cluster formed").isTrue();
        }
    }

    private Set<Integer> hostedBy(LatticeCluster n, String tree) {
        return n.services().tree(tree).hostedPartitions();
    }

    @Test
    void oneTreeServedByThreeNodesAndHandedOffOnLeave() {
        startThree(TestCluster.freshPostgresUri());
        Tree via0 = nodes.get(0).tree("orders", TreeOptions.partitions(6));
        Map<String, String> expected = new TreeMap<>();
        for (int i = 0; i < 300; i++) {
            String k = "o-" + i;
            Tree via = nodes.get(i % 3).tree("orders");
            long version = via.put(k, b("v" + i));
            assertThat(version).isPositive();
            expected.put(k, "v" + i);
        }
        // every node reads every key, whoever owns it
        for (LatticeCluster n : nodes) {
            Tree t = n.tree("orders");
            assertThat(t.partitions()).isEqualTo(6);
            for (Map.Entry<String, String> e : expected.entrySet()) {
                assertThat(t.get(e.getKey()).map(ClusterInProcessTest::s)).as(e.getKey()).hasValue(e.getValue());
            }
        }
        // the partitions are spread: every one hosted exactly once, by more than one node
        Set<Integer> all = new TreeSet<>();
        int hostingNodes = 0;
        for (LatticeCluster n : nodes) {
            Set<Integer> h = hostedBy(n, "orders");
            for (int p : h) {
                assertThat(all.add(p)).as("partition " + p + " hosted twice").isTrue();
            }
            hostingNodes += h.isEmpty() ? 0 : 1;
        }
        assertThat(all).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(hostingNodes).isGreaterThan(1);

        // fan-out reads merge in key order
        Tree via1 = nodes.get(1).tree("orders");
        assertThat(via1.count()).isEqualTo(300);
        List<String> scanned = new ArrayList<>();
        try (ScanCursor c = via1.scan("o-1", "o-5", false)) {
            c.forEachRemaining(e -> scanned.add(e.key()));
        }
        assertThat(scanned).isEqualTo(new ArrayList<>(((TreeMap<String, String>) expected).subMap("o-1", "o-5").keySet()));
        List<String> reversed = new ArrayList<>();
        try (ScanCursor c = via1.scan(null, null, true)) {
            c.forEachRemaining(e -> reversed.add(e.key()));
        }
        List<String> desc = new ArrayList<>(expected.keySet());
        java.util.Collections.reverse(desc);
        assertThat(reversed).isEqualTo(desc);
        Map<String, byte[]> got = via1.getAll(List.of("o-1", "o-2", "o-250", "missing"));
        assertThat(got.keySet()).containsExactly("o-1", "o-2", "o-250");

        // conditional writes, versions, deletes, ttl
        Versioned v = via0.getVersioned("o-7").orElseThrow();
        assertThat(via1.putIfVersion("o-7", b("new"), v.version())).isTrue();
        assertThat(via0.putIfVersion("o-7", b("stale"), v.version())).isFalse();
        assertThat(via0.putIfAbsent("o-7", b("x"))).isFalse();
        assertThat(via0.putIfAbsent("fresh", b("x"))).isTrue();
        assertThat(via1.delete("fresh")).isTrue();
        assertThat(via1.exists("fresh")).isFalse();
        via1.put("short", b("lived"), Duration.ofMinutes(5));
        assertThat(via0.getVersioned("short").orElseThrow().expiresAt()).isPresent();
        expected.put("o-7", "new");

        // putAll fans out; an atomic write within one partition is served
        Map<String, byte[]> batch = new HashMap<>();
        for (int i = 0; i < 50; i++) {
            batch.put("b-" + i, b("b" + i));
            expected.put("b-" + i, "b" + i);
        }
        via0.putAll(batch);
        assertThat(via1.getAll(batch.keySet())).hasSize(50);
        PartitionKeys same = PartitionKeys.samePartition(nodes.get(0).services().tree("orders"), 3);
        Map<String, byte[]> atomic = new HashMap<>();
        for (String k : same.keys()) {
            atomic.put(k, b("atomic"));
            expected.put(k, "atomic");
        }
        assertThat(via1.putAllAtomic(atomic)).isPositive();

        // typed errors over the wire
        String tooLong = "k".repeat(via0.maxKeyBytes() + 1);
        assertThatThrownBy(() -> via1.put(tooLong, b("x"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("limit");
        assertThatThrownBy(() -> via1.put("big", new byte[via0.maxValueBytes() + 1]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maximum-frame-size");
        // an atomic write over partitions on different nodes: all of it, with one version, from every node
        Map<String, byte[]> wide = new HashMap<>();
        for (String k : List.of("o-1", "o-2", "o-3", "o-4", "o-5", "o-6", "o-8", "o-9")) {
            wide.put(k, b("wide"));
            expected.put(k, "wide");
        }
        long wideVersion = via1.putAllAtomic(wide);
        for (LatticeCluster n : nodes) {
            for (String k : wide.keySet()) {
                Versioned got1 = n.tree("orders").getVersioned(k).orElseThrow();
                assertThat(s(got1.value())).isEqualTo("wide");
                assertThat(got1.version()).as(k).isEqualTo(wideVersion);
            }
        }
        // a range delete is atomic across every partition
        for (int i = 0; i < 20; i++) {
            via0.put("zz-" + i, b("gone"));
        }
        via0.put("zzz", b("kept"));
        via1.deleteRange("zz-", "zz-~");
        for (int i = 0; i < 20; i++) {
            assertThat(via0.exists("zz-" + i)).isFalse();
        }
        assertThat(via1.get("zzz").map(ClusterInProcessTest::s)).hasValue("kept");
        expected.put("zzz", "kept");
        // values beyond one message are refused up front, by type; a large putAll and getAll are split
        assertThat(via0.maxValueBytes()).isLessThan(nodes.get(0).services().tree("orders").maxValueBytes());
        Map<String, byte[]> large = new HashMap<>();
        for (int i = 0; i < 12; i++) {
            large.put("L-" + i, new byte[100_000]);
        }
        via0.putAll(large);
        assertThat(via1.getAll(large.keySet())).hasSize(12).allSatisfy((k, val) -> assertThat(val).hasSize(100_000));
        try (ScanCursor c = via1.scan("L-", "L-~", false)) {
            int n = 0;
            while (c.hasNext()) {
                assertThat(c.next().value()).hasSize(100_000);
                n++;
            }
            assertThat(n).isEqualTo(12);
        }
        for (String k : large.keySet()) {
            expected.put(k, null);
        }
        assertThatThrownBy(() -> via1.put(null, b("x"))).isInstanceOf(NullPointerException.class);

        // a graceful leave hands the node's logs off; nothing is lost and the tree keeps serving
        LatticeCluster leaving = nodes.remove(2);
        Set<Integer> itHosted = hostedBy(leaving, "orders");
        leaving.close();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            if (e.getValue() == null) {
                assertThat(via1.get(e.getKey())).as(e.getKey()).isPresent();
                continue;
            }
            assertThat(via1.get(e.getKey()).map(ClusterInProcessTest::s)).as(e.getKey()).hasValue(e.getValue());
        }
        for (int i = 0; i < 30; i++) {
            via0.put("after-" + i, b("a"));
        }
        Set<Integer> now = new TreeSet<>(hostedBy(nodes.get(0), "orders"));
        now.addAll(hostedBy(nodes.get(1), "orders"));
        assertThat(now).containsAll(itHosted);
        assertThat(via1.count()).isEqualTo(expected.size() + 30 + 1); // + the ttl key
        List<TreeEntry> first = new ArrayList<>();
        try (ScanCursor c = via0.scan(null, null, false)) {
            c.forEachRemaining(first::add);
        }
        assertThat(first).hasSize(expected.size() + 31);
    }

    /**
     * Answers are taken on the node's reply threads, not on {@code CompletableFuture}'s default pool, which is a new
     * thread per task on a machine with fewer than 3 CPUs (this machine kind: the ask's stage ran even its
     * non-async callbacks there, one thread started per request, about 3x the CPU of a local put).
     */
    @Test
    void requestsStartNoThreadEach() {
        startThree(TestCluster.freshPostgresUri());
        Tree via0 = nodes.get(0).tree("threads", TreeOptions.partitions(6));
        Set<Integer> local = hostedBy(nodes.get(0), "threads");
        assertThat(local).as("node 0 does not host every partition: some requests go to other nodes").hasSizeLessThan(6);
        for (int i = 0; i < 200; i++) { // warm-up: pools start their threads
            via0.put("w-" + i, b("v"));
            via0.get("w-" + i);
        }
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long started = mx.getTotalStartedThreadCount();
        int requests = 0;
        for (int i = 0; i < 500; i++) { // the blocking calls wait on this thread, the async ones on reply threads
            if (i % 2 == 0) {
                via0.put("k-" + i, b("v" + i));
                assertThat(via0.get("k-" + i).map(ClusterInProcessTest::s)).hasValue("v" + i);
            } else {
                via0.putAsync("k-" + i, b("v" + i)).join();
                assertThat(via0.getAsync("k-" + i).join().map(ClusterInProcessTest::s)).hasValue("v" + i);
            }
            requests += 2;
        }
        long startedDuring = mx.getTotalStartedThreadCount() - started;
        System.out.printf("[cluster threads] %d threads started during %d requests (%d CPUs)%n", startedDuring,
                requests, Runtime.getRuntime().availableProcessors());
        assertThat(startedDuring).as("threads started during %d requests", requests).isLessThan(50);
        // a blocking call is answered on its own thread: nothing is handed to the reply threads
        java.util.concurrent.ThreadPoolExecutor replies =
                (java.util.concurrent.ThreadPoolExecutor) nodes.get(0).services().replies();
        long handedOff = replies.getTaskCount();
        for (int i = 0; i < 100; i++) {
            via0.put("s-" + i, b("v"));
            assertThat(via0.get("s-" + i)).isPresent();
        }
        assertThat(replies.getTaskCount() - handedOff).as("tasks handed to the reply threads by 200 blocking calls")
                .isZero();
    }

    @Test
    void crossTreeAtomicWritesAreWholeWithOneVersionOnEveryNode() throws Exception {
        startThree(TestCluster.freshPostgresUri());
        Tree orders = nodes.get(0).tree("orders", TreeOptions.partitions(6));
        Tree stock = nodes.get(0).tree("stock", TreeOptions.partitions(4));
        stock.put("s-1", b("10"));
        long s2 = stock.put("s-2", b("20"));
        // unbound: every call names its tree; the parts span both trees and several nodes
        dev.lattice.engine.AtomicResult r = nodes.get(1).atomic()
                .put(nodes.get(1).tree("orders"), "o-1", b("order1"))
                .put(nodes.get(1).tree("orders"), "o-2", b("order2"))
                .put(nodes.get(1).tree("stock"), "s-1", b("9"))
                .expectVersion(nodes.get(1).tree("stock"), "s-2", s2)
                .commit();
        assertThat(r.version()).isPositive();
        assertThat(r.keys()).isEqualTo(4);
        assertThat(r.logs()).isGreaterThanOrEqualTo(2);
        for (LatticeCluster n : nodes) {
            for (String k : List.of("o-1", "o-2")) {
                Versioned v = n.tree("orders").getVersioned(k).orElseThrow();
                assertThat(v.version()).as(k).isEqualTo(r.version());
            }
            Versioned s1 = n.tree("stock").getVersioned("s-1").orElseThrow();
            assertThat(s(s1.value())).isEqualTo("9");
            assertThat(s1.version()).isEqualTo(r.version());
            assertThat(n.tree("stock").getVersioned("s-2").orElseThrow().version()).isEqualTo(s2);
        }
        // bound to orders, writing stock too; a failed precondition in one tree writes nothing in either
        Tree ordersVia2 = nodes.get(2).tree("orders");
        Tree stockVia2 = nodes.get(2).tree("stock");
        assertThatThrownBy(() -> ordersVia2.atomic().put("o-3", b("order3")).put(stock, "s-1", b("8")))
                .as("a tree of another node's client").isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ordersVia2.atomic().put("o-3", b("order3")).put(stockVia2, "s-1", b("8"))
                .expectVersion(stockVia2, "s-2", s2 + 1).commit())
                .isInstanceOf(dev.lattice.engine.PreconditionFailedException.class);
        assertThat(orders.get("o-3")).isEmpty();
        assertThat(stock.get("s-1").map(ClusterInProcessTest::s)).hasValue("9");
        // deletes and a range delete across trees, with expectAbsent
        long v2 = ordersVia2.atomic().delete("o-1").deleteRange(stockVia2, "s-", "s-~").expectAbsent("o-7")
                .put("o-7", b("order7")).commit().version();
        for (LatticeCluster n : nodes) {
            assertThat(n.tree("orders").exists("o-1")).isFalse();
            assertThat(n.tree("stock").count()).isZero();
            assertThat(n.tree("orders").getVersioned("o-7").orElseThrow().version()).isEqualTo(v2);
        }
        assertThat(orders.get("o-2").map(ClusterInProcessTest::s)).hasValue("order2");
        // what the builder refuses, before anything is sent
        assertThatThrownBy(() -> nodes.get(0).atomic().commit()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> orders.atomic().put("o-8", b("a")).put("o-8", b("b")).commit())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("twice");
        assertThatThrownBy(() -> orders.atomic().idempotencyKey(""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1..256");
        assertThatThrownBy(() -> nodes.get(0).atomic().put("o-8", b("a")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not bound");
        dev.lattice.engine.AtomicWrite once = orders.atomic().put("o-9", b("x"));
        once.commit();
        assertThatThrownBy(once::commit).isInstanceOf(IllegalStateException.class);
        assertThat(orders.get("o-8")).isEmpty();

        // idempotency keys: a retry from any node re-attaches to the first outcome and writes nothing again
        dev.lattice.engine.AtomicResult first = nodes.get(0).atomic().idempotencyKey("k-1")
                .put(nodes.get(0).tree("orders"), "i-1", b("first"))
                .put(nodes.get(0).tree("stock"), "i-s", b("first")).commit();
        assertThat(first.reattached()).isFalse();
        for (int via = 0; via < 3; via++) {
            dev.lattice.engine.AtomicResult again = nodes.get(via).atomic().idempotencyKey("k-1")
                    .put(nodes.get(via).tree("orders"), "i-1", b("second"))
                    .put(nodes.get(via).tree("stock"), "i-s", b("second")).commit();
            assertThat(again.reattached()).as("retry via node %d", via).isTrue();
            assertThat(again.version()).isEqualTo(first.version());
        }
        assertThat(orders.getVersioned("i-1").orElseThrow().version()).isEqualTo(first.version());
        assertThat(s(stock.get("i-s").orElseThrow())).isEqualTo("first");
        assertThatThrownBy(() -> nodes.get(1).atomic().idempotencyKey("k-1")
                .put(nodes.get(1).tree("orders"), "i-1", b("x"))
                .put(nodes.get(1).tree("stock"), "i-other", b("x")).commit())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("different set of keys");
        assertThat(stock.get("i-other")).isEmpty();
        // a failed precondition is the recorded outcome of its key: the retry is told it aborted
        assertThatThrownBy(() -> ordersVia2.atomic().idempotencyKey("k-2").put("i-2", b("x"))
                .expectVersion(stockVia2, "i-s", first.version() + 100).commit())
                .isInstanceOf(dev.lattice.engine.PreconditionFailedException.class);
        assertThatThrownBy(() -> orders.atomic().idempotencyKey("k-2").put("i-2", b("x"))
                .expectVersion(stock, "i-s", first.version() + 100).commit())
                .isInstanceOf(dev.lattice.engine.AtomicWriteAbortedException.class)
                .hasMessageContaining("k-2");
        assertThat(orders.get("i-2")).isEmpty();
        // one tree, several partitions, bound builder
        List<String> two = new ArrayList<>();
        for (int i = 0; two.size() < 2; i++) {
            String k = "j-" + i;
            if (two.isEmpty() || nodes.get(0).services().tree("orders").partitionOf(k)
                    != nodes.get(0).services().tree("orders").partitionOf(two.get(0))) {
                two.add(k);
            }
        }
        long jv = orders.atomic().idempotencyKey("k-3").put(two.get(0), b("1")).put(two.get(1), b("1")).commit()
                .version();
        dev.lattice.engine.AtomicResult jr = ordersVia2.atomic().idempotencyKey("k-3").put(two.get(0), b("1"))
                .put(two.get(1), b("1")).commit();
        assertThat(jr.reattached()).isTrue();
        assertThat(jr.version()).isEqualTo(jv);

        // putAll with a ttl: one expiry for every key, written per partition
        Map<String, byte[]> ttlBatch = new java.util.HashMap<>();
        for (int i = 0; i < 20; i++) {
            ttlBatch.put("t-" + i, b("t" + i));
        }
        orders.putAll(ttlBatch, Duration.ofMinutes(5));
        Set<Object> expiries = new java.util.HashSet<>();
        for (String k : ttlBatch.keySet()) {
            Versioned tv = nodes.get(2).tree("orders").getVersioned(k).orElseThrow();
            assertThat(s(tv.value())).isEqualTo("t" + k.substring(2));
            expiries.add(tv.expiresAt().orElseThrow());
        }
        assertThat(expiries).as("one expiry for the whole putAll").hasSize(1);
        assertThatThrownBy(() -> orders.putAll(Map.of("t-x", b("x")), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(orders.get("t-x")).isEmpty();

        // a getAll over several partitions never sees part of a multi-partition atomic write made meanwhile
        List<String> spread = spreadKeys("orders", 4);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger written = new java.util.concurrent.atomic.AtomicInteger();
        Thread writer = groupWriter(spread, stop, written, 0);
        writer.start();
        try {
            Tree reader = nodes.get(1).tree("orders");
            long end = System.nanoTime() + 8_000_000_000L;
            int reads = 0;
            while (System.nanoTime() < end || reads < 20) {
                Map<String, byte[]> got = reader.getAll(spread);
                Set<String> values = new TreeSet<>();
                got.values().forEach(v -> values.add(s(v)));
                assertThat(got.isEmpty() || (got.size() == spread.size() && values.size() == 1))
                        .as("getAll saw " + values + " over " + got.keySet()).isTrue();
                reads++;
            }
            System.out.println("[cluster] getAll over 4 partitions: " + reads + " reads beside " + written.get()
                    + " atomic writes, none partial");
        } finally {
            stop.set(true);
            writer.join(30_000);
        }
        assertThat(written.get()).as("writes made meanwhile").isGreaterThan(5);
    }

    /** Keys "g-..." of {@code n} different partitions of the tree {@code name}, by its own hash. */
    private List<String> spreadKeys(String name, int n) {
        return spreadKeys(name, n, "g-");
    }

    /** Keys "{@code prefix}..." of {@code n} different partitions of the tree {@code name}, by its own hash. */
    private List<String> spreadKeys(String name, int n, String prefix) {
        List<String> spread = new ArrayList<>();
        Set<Integer> seen = new TreeSet<>();
        for (int i = 0; spread.size() < n; i++) {
            if (seen.add(nodes.get(0).services().tree(name).partitionOf(prefix + i))) {
                spread.add(prefix + i);
            }
        }
        return spread;
    }

    /** {@link #groupWriter(int, List, String, java.util.concurrent.atomic.AtomicBoolean,
     * java.util.concurrent.atomic.AtomicInteger, long)} through node 0, values "gen-N". */
    private Thread groupWriter(List<String> spread, java.util.concurrent.atomic.AtomicBoolean stop,
                               java.util.concurrent.atomic.AtomicInteger written, long pauseMillis) {
        return groupWriter(0, spread, "gen-", stop, written, pauseMillis);
    }

    /**
     * A writer (through node {@code node}) of one multi-partition atomic write of the group after another (every key
     * gets the value {@code valuePrefix} + the write's number), until stopped, {@code pauseMillis} apart (0: none).
     * Beside writers that never pause, nearly every validation round of a scan or count sees a new prepare; before
     * the prepare holds ({@link CutHolds}) such a scan starved (beside one writer on a quiet machine: 1,309 rounds
     * in 30 s, then LatticeSaturatedException; beside the three writers of the tests below, 262 to 280 rounds, and
     * the count 1,019 to 1,530, on 2 loaded cores), which the scan and count tests below check no longer happens.
     */
    private Thread groupWriter(int node, List<String> spread, String valuePrefix,
                               java.util.concurrent.atomic.AtomicBoolean stop,
                               java.util.concurrent.atomic.AtomicInteger written, long pauseMillis) {
        return new Thread(() -> {
            Tree w = nodes.get(node).tree("orders");
            for (int gen = 0; !stop.get(); gen++) {
                Map<String, byte[]> m = new HashMap<>();
                for (String k : spread) {
                    m.put(k, b(valuePrefix + gen));
                }
                w.putAllAtomic(m);
                written.incrementAndGet();
                pause(pauseMillis);
            }
        });
    }

    private static void pause(long millis) {
        if (millis > 0) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits until {@code written} grew by {@code n} (the writers' partitions are hosted and warm). */
    private static void awaitWrites(java.util.concurrent.atomic.AtomicInteger written, int n) {
        long end = System.nanoTime() + 60_000_000_000L;
        while (written.get() < n && System.nanoTime() < end) {
            pause(20);
        }
        assertThat(written.get()).as("writes made while warming up").isGreaterThanOrEqualTo(n);
    }

    /** Atomic writes per second of {@code written} over the next {@code millis}. */
    private static double rate(java.util.concurrent.atomic.AtomicInteger written, long millis) {
        int before = written.get();
        long t0 = System.nanoTime();
        pause(millis);
        return (written.get() - before) * 1e9 / (System.nanoTime() - t0);
    }

    /** How many writers never pause beside the scans and counts below, one through each node. */
    private static final int WRITERS = 3;

    @Test
    void scansAcrossPartitionsNeverSeeAMultiPartitionAtomicWritePartially() throws Exception {
        startThree(TestCluster.freshPostgresUri());
        Tree orders = nodes.get(0).tree("orders", TreeOptions.partitions(6));
        for (int i = 0; i < 60; i++) {
            orders.put("f-" + i, b("filler")); // keys around the groups in every partition
        }
        // each writer writes a group of its own over 4 partitions, all of it in one atomic write, never pausing
        List<List<String>> groups = new ArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger written = new java.util.concurrent.atomic.AtomicInteger();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            groups.add(spreadKeys("orders", 4, "g" + w + "-"));
            writers.add(groupWriter(w, groups.get(w), "w" + w + "-gen-", stop, written, 0));
        }
        writers.forEach(Thread::start);
        try {
            awaitWrites(written, 30);
            double alone = rate(written, 3_000);
            Tree reader = nodes.get(1).tree("orders");
            long end = System.nanoTime() + 8_000_000_000L;
            int scans = 0;
            int rounds = 0;
            int maxRounds = 0;
            int held = 0;
            long maxMillis = 0;
            int writtenBefore = written.get();
            long t0 = System.nanoTime();
            while (System.nanoTime() < end || scans < 20) {
                List<Map<String, String>> seen = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    seen.add(new TreeMap<>());
                }
                int entries = 0;
                long s0 = System.nanoTime();
                try (ScanCursor c = reader.scan(null, null, scans % 2 == 1)) {
                    ClusterScanCursor cc = (ClusterScanCursor) c;
                    rounds += cc.rounds();
                    maxRounds = Math.max(maxRounds, cc.rounds());
                    held += cc.held() ? 1 : 0;
                    while (c.hasNext()) {
                        TreeEntry e = c.next();
                        entries++;
                        if (e.key().startsWith("g")) {
                            seen.get(e.key().charAt(1) - '0').put(e.key(), s(e.value()));
                        }
                    }
                }
                maxMillis = Math.max(maxMillis, (System.nanoTime() - s0) / 1_000_000);
                assertThat(entries).as("scan " + scans).isGreaterThanOrEqualTo(60);
                for (int w = 0; w < WRITERS; w++) {
                    Map<String, String> group = seen.get(w);
                    Set<String> values = new TreeSet<>(group.values());
                    assertThat(group.isEmpty() || (group.size() == 4 && values.size() == 1))
                            .as("scan " + scans + " saw writer " + w + "'s group as " + group).isTrue();
                }
                scans++;
            }
            long elapsed = System.nanoTime() - t0;
            double beside = (written.get() - writtenBefore) * 1e9 / elapsed;
            System.out.printf("[cluster] scans over 6 partitions beside %d unpaced writers of 4-partition atomic"
                            + " writes: %d scans, %.2f rounds a scan (at most %d), %d with prepare holds, %d ms a"
                            + " scan (at most %d); writers %.0f atomic writes/s alone, %.0f/s beside the scans;"
                            + " none partial%n", WRITERS, scans, (double) rounds / scans, maxRounds, held,
                    elapsed / 1_000_000 / scans, maxMillis, alone, beside);
            assertThat(written.get() - writtenBefore).as("writes made beside the scans").isGreaterThan(5 * WRITERS);
        } finally {
            stop.set(true);
            for (Thread t : writers) {
                t.join(30_000);
            }
        }
    }

    @Test
    void countsAcrossPartitionsNeverCountAMultiPartitionAtomicWritePartially() throws Exception {
        startThree(TestCluster.freshPostgresUri());
        // a count across partitions is one cut too: writers add 4 new keys (over several partitions) per atomic
        // write, never pausing, so every count of the "c" keys is a multiple of 4
        nodes.get(0).tree("counted", TreeOptions.partitions(6));
        java.util.concurrent.atomic.AtomicBoolean stopAdding = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger added = new java.util.concurrent.atomic.AtomicInteger();
        List<Thread> adders = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            Tree counted = nodes.get(w).tree("counted");
            String prefix = "c-" + w + "-";
            adders.add(new Thread(() -> {
                for (int gen = 0; !stopAdding.get(); gen++) {
                    Map<String, byte[]> m = new HashMap<>();
                    for (int j = 0; j < 4; j++) {
                        m.put(prefix + gen + "-" + j, b("c"));
                    }
                    counted.putAllAtomic(m);
                    added.incrementAndGet();
                }
            }));
        }
        adders.forEach(Thread::start);
        try {
            awaitWrites(added, 30);
            double alone = rate(added, 2_000);
            Tree countReader = nodes.get(2).tree("counted");
            long end = System.nanoTime() + 6_000_000_000L;
            int counts = 0;
            long maxMillis = 0;
            int addedBefore = added.get();
            long t0 = System.nanoTime();
            while (System.nanoTime() < end || counts < 10) {
                long c0 = System.nanoTime();
                long n = countReader.count();
                maxMillis = Math.max(maxMillis, (System.nanoTime() - c0) / 1_000_000);
                assertThat(n % 4).as("count %d of keys added 4 per atomic write", n).isZero();
                counts++;
            }
            long elapsed = System.nanoTime() - t0;
            System.out.printf("[cluster] counts over 6 partitions beside %d unpaced writers of 4 new keys per atomic"
                            + " write: %d counts, %d ms a count (at most %d); writers %.0f atomic writes/s alone,"
                            + " %.0f/s beside the counts; none partial%n", WRITERS, counts,
                    elapsed / 1_000_000 / counts, maxMillis, alone, (added.get() - addedBefore) * 1e9 / elapsed);
            assertThat(added.get() - addedBefore).as("atomic writes made beside the counts").isGreaterThan(5);
        } finally {
            stopAdding.set(true);
            for (Thread t : adders) {
                t.join(30_000);
            }
        }
    }

    @Test
    void aHeldScanFailsTypedWhenIdlePastTheTimeoutOrWhenItsPartitionIsHandedOff() throws Exception {
        startThreeQuick(TestCluster.freshPostgresUri(), Duration.ofSeconds(4), 10);
        Tree via0 = nodes.get(0).tree("orders", TreeOptions.partitions(6));
        // each node opens the tree once, one after the other, before the putAll reaches every partition at once:
        // processes that open a tree concurrently for the first time can fence each other's catalog claim (an
        // engine race outside this test's subject, seen once as FencedException on _catalog/0)
        for (LatticeCluster n : nodes) {
            n.services().tree("orders");
        }
        Map<String, byte[]> batch = new HashMap<>();
        for (int i = 0; i < 1200; i++) {
            batch.put(String.format("k-%05d", i), b("v" + i));
        }
        via0.putAll(batch);
        nodes.get(1).tree("orders").count(); // every partition hosted

        // a scan read to its end and a scan closed early release their sessions; both return what was written
        List<String> all = new ArrayList<>();
        try (ScanCursor c = via0.scan(null, null, false)) {
            c.forEachRemaining(e -> all.add(e.key()));
        }
        assertThat(all).hasSize(1200).isSorted();
        try (ScanCursor c = via0.scan(null, "k-00100", true)) {
            assertThat(c.next().key()).isEqualTo("k-00099");
        }

        // idle past the session timeout: the owners closed the snapshots; the next page fails by type
        ScanCursor idle = via0.scan(null, null, false);
        assertThat(idle.next().key()).isEqualTo("k-00000");
        Thread.sleep(4_000 * 2 + 1_000); // the timeout, and the sweep that runs every half of it
        assertThatThrownBy(() -> {
            while (idle.hasNext()) {
                idle.next();
            }
        }).isInstanceOf(dev.lattice.engine.ScanSessionLostException.class).hasMessageContaining("idle");
        idle.close();

        // a partition handed off under a held scan: the rest of it cannot be read from the same snapshot
        int leaver = hostedBy(nodes.get(2), "orders").isEmpty() ? 1 : 2;
        assertThat(hostedBy(nodes.get(leaver), "orders")).as("node " + leaver + " hosts a partition").isNotEmpty();
        ScanCursor moved = via0.scan(null, null, false);
        assertThat(moved.next().key()).isEqualTo("k-00000");
        nodes.remove(leaver).close();
        assertThatThrownBy(() -> {
            while (moved.hasNext()) {
                moved.next();
            }
        }).isInstanceOf(dev.lattice.engine.ScanSessionLostException.class);
        moved.close();
        // a new scan reads everything from the new owners
        try (ScanCursor c = nodes.get(1).tree("orders").scan(null, null, false)) {
            int n = 0;
            while (c.hasNext()) {
                c.next();
                n++;
            }
            assertThat(n).isEqualTo(1200);
        }
    }
}
