package dev.lattice.cluster;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.PartialTree;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 19's fault scenario in several JVMs on 127.0.0.1 sharing one embedded PostgreSQL: three nodes run a mixed
 * workload (puts, conditional writes, one-partition atomic writes, point reads, getAll of the atomic group) through
 * their own cluster trees while one node is killed with SIGKILL, one is frozen with SIGSTOP past the failure
 * detector and resumed with SIGCONT (it must be downed and exit, fenced: none of its reads may be stale), nodes
 * join, and one leaves gracefully (SIGTERM). Then every node's history is checked against the final state
 * ({@link HistoryCheck}). {@code -Dlattice.cluster.rounds=N} repeats the faults N times (CI: 1).
 */
class ClusterFaultTest {

    private final List<NodeProcess> all = new ArrayList<>();

    /** A hand-off to measure: the partitions {@code node} logged {@code marker} for from {@code from} on. */
    private static final class HandOff {
        final String what;
        final NodeProcess node;
        final String marker;
        final long from;
        long to = Long.MAX_VALUE;

        HandOff(String what, NodeProcess node, String marker) {
            this.what = what;
            this.node = node;
            this.marker = marker;
            this.from = System.currentTimeMillis() * 1000;
        }
    }

    /** The next fault starts: hand-offs measured so far end here (later ones are that fault's). */
    private static void closeWindows(List<HandOff> handOffs) {
        long now = System.currentTimeMillis() * 1000;
        for (HandOff h : handOffs) {
            h.to = Math.min(h.to, now);
        }
    }

    @AfterEach
    void cleanUp() {
        for (NodeProcess n : all) {
            if (n.alive()) {
                n.signal("CONT");
                n.destroyForcibly();
            }
        }
    }

    private List<Integer> ports(List<NodeProcess> live) {
        List<Integer> p = new ArrayList<>();
        for (NodeProcess n : live) {
            p.add(n.port);
        }
        return p;
    }

    private NodeProcess join(String name, String uri, List<NodeProcess> live, Path dir, Path stop) {
        int port = TestCluster.freePort();
        List<Integer> seeds = live.isEmpty() ? List.of(port) : ports(live);
        NodeProcess n = NodeProcess.start(name, uri, port, seeds, live.size() + 1, dir, stop);
        all.add(n);
        return n;
    }

    private static void awaitUp(NodeProcess n) {
        assertThat(n.awaitLog("UP " + n.name, 120_000)).as(n.name + " came up:\n" + n.tail()).isTrue();
    }

    @Test
    void killFreezeJoinAndLeaveUnderLoadLoseNothingAndServeNothingStale(@TempDir Path dir) throws Exception {
        int rounds = Integer.getInteger("lattice.cluster.rounds", 1);
        String uri = TestCluster.freshPostgresUri();
        try (Lattice l = Lattice.open(uri)) {
            l.createTree(WorkloadNode.TREE, TreeOptions.partitions(WorkloadNode.PARTITIONS));
        }
        Path stop = dir.resolve("stop");
        List<NodeProcess> live = new ArrayList<>();
        // three nodes: the first seeds itself, the others join it
        int seedPort = TestCluster.freePort();
        NodeProcess first = NodeProcess.start("n0", uri, seedPort, List.of(seedPort), 3, dir, stop);
        all.add(first);
        live.add(first);
        for (int i = 1; i < 3; i++) {
            NodeProcess n = NodeProcess.start("n" + i, uri, TestCluster.freePort(), List.of(seedPort), 3, dir, stop);
            all.add(n);
            live.add(n);
        }
        for (NodeProcess n : live) {
            awaitUp(n);
        }
        int next = 3;
        List<String> report = new ArrayList<>();
        List<Object[]> zombies = new ArrayList<>();
        List<Object[]> kills = new ArrayList<>();
        List<HandOff> handOffs = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            Thread.sleep(6_000);
            NodeProcess killed = live.remove(live.size() - 1);
            closeWindows(handOffs);
            killed.signal("KILL");
            report.add("round " + round + ": SIGKILL " + killed.name);
            kills.add(new Object[] {killed, killed.stoppedAtMillis * 1000});
            Thread.sleep(12_000);
            NodeProcess joined = join("n" + next++, uri, live, dir, stop);
            handOffs.add(new HandOff("join of " + joined.name, joined, "hosted"));
            awaitUp(joined);
            live.add(joined);
            Thread.sleep(5_000);

            NodeProcess frozen = live.remove(0);
            closeWindows(handOffs);
            frozen.signal("STOP");
            Thread.sleep(14_000); // past the failure detector (2 s) and stable-after (4 s): the others down it
            long resumedMicros = System.currentTimeMillis() * 1000;
            frozen.signal("CONT");
            Integer code = frozen.awaitExit(60_000);
            zombies.add(new Object[] {frozen, resumedMicros});
            assertThat(code).as(frozen.name + " resumed after being downed must exit\n" + frozen.tail()).isNotNull();
            report.add("round " + round + ": SIGSTOP/SIGCONT " + frozen.name + " exited " + code);
            NodeProcess joined2 = join("n" + next++, uri, live, dir, stop);
            handOffs.add(new HandOff("join of " + joined2.name, joined2, "hosted"));
            awaitUp(joined2);
            live.add(joined2);
            Thread.sleep(5_000);

            NodeProcess leaving = live.remove(0);
            closeWindows(handOffs);
            handOffs.add(new HandOff("graceful leave of " + leaving.name, leaving, "releasing (hand-off)"));
            leaving.signal("TERM");
            Integer left = leaving.awaitExit(60_000);
            // a JVM ended by SIGTERM exits with 143 after its shutdown hooks (Pekko's leave and hand-off) ran
            assertThat(left).as(leaving.name + " left gracefully\n" + leaving.tail()).isIn(0, 143);
            assertThat(java.nio.file.Files.readString(leaving.log)).as(leaving.name + " was not downed")
                    .doesNotContain("ClusterDowning");
            report.add("round " + round + ": SIGTERM " + leaving.name + " exited " + left);
            NodeProcess joined3 = join("n" + next++, uri, live, dir, stop);
            handOffs.add(new HandOff("join of " + joined3.name, joined3, "hosted"));
            awaitUp(joined3);
            live.add(joined3);
            Thread.sleep(4_000);
        }
        closeWindows(handOffs);
        Files.writeString(stop, "stop");
        for (NodeProcess n : live) {
            assertThat(n.awaitLog("WORKLOAD-DONE", 60_000)).as(n.name + "\n" + n.tail()).isTrue();
        }
        for (NodeProcess n : live) {
            n.signal("TERM");
        }
        for (NodeProcess n : live) {
            assertThat(n.awaitExit(60_000)).as(n.name + " exit\n" + n.tail()).isNotNull();
        }

        HistoryCheck check = new HistoryCheck();
        for (NodeProcess n : all) {
            if (Files.exists(n.history)) {
                check.load(n.history);
            }
        }
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < WorkloadNode.KEYS; i++) {
            keys.add("k" + i);
        }
        List<String> group = groupKeys(uri);
        try (Lattice l = Lattice.open(uri)) {
            Tree t = l.tree(WorkloadNode.TREE);
            check.check(t::getVersioned, keys, group);
            check.checkWide(t::getVersioned, wideKeys(uri));
        }
        for (Object[] k : kills) {
            report.add(failover(check, (NodeProcess) k[0], (Long) k[1]));
        }
        for (HandOff h : handOffs) {
            report.add("write pause per partition handed off on the " + h.what + ": "
                    + HandOffPauses.summary(HandOffPauses.pauses(check, h.node.log, h.marker, h.from, h.to)));
        }
        for (Object[] z : zombies) {
            HistoryCheck own = new HistoryCheck();
            own.load(((NodeProcess) z[0]).history);
            long after = (Long) z[1];
            long reads = own.reads.stream().filter(r -> r.start() > after).count();
            long acked = own.writes.values().stream().filter(w -> w.start() > after && w.outcome().equals("OK"))
                    .count();
            report.add(((NodeProcess) z[0]).name + " after SIGCONT: " + reads + " reads served, " + acked
                    + " writes acknowledged (all checked below)");
        }
        System.out.println("[cluster-fault] " + String.join("; ", report) + "; " + check.summary());
        if (!check.violations.isEmpty() || !check.wideAnomalies.isEmpty()) {
            keepEvidence(dir);
        }
        assertThat(check.writes.values().stream().filter(w -> w.outcome().equals("OK")).count())
                .as("acknowledged writes").isGreaterThan(100);
        assertThat(check.reads).as("reads").hasSizeGreaterThan(100);
        assertThat(check.violations).as(check.summary()).isEmpty();
        assertThat(check.wideAnomalies).as("partial visibility of multi-partition atomic writes").isEmpty();
    }

    /** Copies the nodes' logs and histories to target/ (the temporary directory is deleted after the test). */
    private static void keepEvidence(Path dir) throws java.io.IOException {
        Path keep = Path.of("target", "cluster-fault-evidence-" + System.currentTimeMillis());
        Files.createDirectories(keep);
        try (java.util.stream.Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (Files.isRegularFile(f)) {
                    Files.copy(f, keep.resolve(f.getFileName()));
                }
            }
        }
        System.out.println("[cluster-fault] logs and histories kept in " + keep.toAbsolutePath());
    }

    private static List<String> wideKeys(String uri) {
        try (Lattice l = Lattice.open(uri)) {
            return WorkloadNode.wideKeys(l.hostTree(WorkloadNode.TREE, TreeOptions.partitions(WorkloadNode.PARTITIONS)));
        }
    }

    /**
     * Failover as the workload saw it: for each partition the killed node hosted, the time from the SIGKILL to the
     * first write on that partition acknowledged after it (by any node).
     */
    private static String failover(HistoryCheck check, NodeProcess killed, long killMicros) throws Exception {
        java.util.Set<Integer> hosted = new java.util.TreeSet<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(WorkloadNode.TREE + "/(\\d+): hosted")
                .matcher(Files.readString(killed.log));
        while (m.find()) {
            hosted.add(Integer.parseInt(m.group(1)));
        }
        List<Long> millis = new ArrayList<>();
        for (int p : hosted) {
            long first = Long.MAX_VALUE;
            for (HistoryCheck.Write w : check.writes.values()) {
                if (w.partition() == p && w.outcome().equals("OK") && w.start() > killMicros && w.end() < first) {
                    first = w.end();
                }
            }
            if (first != Long.MAX_VALUE) {
                millis.add((first - killMicros) / 1000);
            }
        }
        java.util.Collections.sort(millis);
        return "failover after SIGKILL " + killed.name + " (partitions " + hosted + "): first acknowledged write per"
                + " partition after " + millis + " ms" + (millis.isEmpty() ? "" : " (p50 " + millis.get(millis.size() / 2)
                + " ms, max " + millis.get(millis.size() - 1) + " ms)");
    }

    /** The atomic group's keys, chosen by the tree's hash as the nodes chose them. */
    private static List<String> groupKeys(String uri) {
        try (Lattice l = Lattice.open(uri)) {
            PartialTree t = l.hostTree(WorkloadNode.TREE, TreeOptions.partitions(WorkloadNode.PARTITIONS));
            return PartitionKeys.samePartition(t, 3).keys();
        }
    }
}
