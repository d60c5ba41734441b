package dev.lattice.cluster.cli;

import dev.lattice.cli.ExitCodes;
import dev.lattice.engine.Tree;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The phases of one {@code lattice cluster demo} run once the cluster is up: traffic until every partition has an
 * owner, the kill of the node hosting the most partitions, traffic until every partition is written again, the
 * check of every acknowledged write, and the report. Not thread-safe (one run).
 */
final class DemoRun {

    private final ClusterDemoCommand demo;
    private final Tree tree;
    private final List<List<String>> keys;
    private final String uri;
    private final double formedSeconds;
    private final String routerTransport;
    private final java.nio.file.Path tlsDir;
    private final List<String[]> report = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    DemoRun(ClusterDemoCommand demo, Tree tree, List<List<String>> keys, String uri, double formedSeconds,
            String routerTransport, java.nio.file.Path tlsDir) {
        this.demo = demo;
        this.tree = tree;
        this.keys = keys;
        this.uri = uri;
        this.formedSeconds = formedSeconds;
        this.routerTransport = routerTransport;
        this.tlsDir = tlsDir;
    }

    /** @return the exit code: {@link ExitCodes#OK}, or {@link ExitCodes#VERIFICATION_FAILED} */
    int run() {
        int partitions = keys.size();
        ClusterDemoWorkload work = new ClusterDemoWorkload(tree, keys);
        row("cluster", String.format(Locale.ROOT, "%d node JVMs + this demo (routing only) on 127.0.0.1, formed in "
                + "%.1f s; storage: embedded PostgreSQL %s", demo.nodes().size(), formedSeconds, uri));
        tls();
        row("tree", ClusterDemoCommand.TREE + ", " + partitions + " partitions; one writer/reader thread per "
                + "partition through the cluster's routing tree");
        demo.say("writing and reading through the cluster until every partition has an owner");
        work.start();
        try {
            return phases(work, partitions);
        } finally {
            work.stop();
        }
    }

    private int phases(ClusterDemoWorkload work, int partitions) {
        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline
                && !ClusterDemoCommand.missing(partitions, new ArrayList<>(demo.ownership().values())).isEmpty()) {
            ClusterDemoWorkload.sleep(200);
        }
        // a node that joined late gets partitions by rebalancing (every 10 s): wait a while for every node to host
        // some, so that the kill leaves partitions on the others
        long balanceBy = System.currentTimeMillis() + 45_000;
        while (System.currentTimeMillis() < balanceBy && !balanced(partitions)) {
            ClusterDemoWorkload.sleep(200);
        }
        ClusterDemoWorkload.sleep(2_000);
        Map<String, Set<Integer>> before = demo.ownership();
        DemoNode victim = null;
        for (DemoNode n : demo.nodes()) {
            Set<Integer> h = before.getOrDefault(n.name, Set.of());
            if (!h.isEmpty() && (victim == null || h.size() >= before.get(victim.name).size())) {
                victim = n;
            }
        }
        if (victim == null) {
            throw demo.failure("no node reported hosting a partition of '" + ClusterDemoCommand.TREE + "' within 60 s");
        }
        Set<Integer> affected = new TreeSet<>(before.get(victim.name));
        row("before the kill", owners(before) + "; " + fmt(work.acked().size()) + " writes acknowledged");
        demo.say("killing " + victim.name + " (pid " + victim.pid() + ", SIGKILL); it hosts partitions " + affected);
        victim.kill();
        long killAt = System.currentTimeMillis();
        row("killed", victim.name + " (pid " + victim.pid() + ", SIGKILL) with partitions " + affected);
        demo.say("traffic goes on; waiting for " + victim.name + "'s partitions to move (failure detection, "
                + "split brain resolver's stable-after " + ClusterDemoCommand.STABLE_AFTER.toSeconds()
                + " s, claim and replay)");
        long recoverBy = killAt + ClusterDemoCommand.RECOVERY_TIMEOUT.toMillis();
        long recoveredAt = -1;
        while (System.currentTimeMillis() < recoverBy && recoveredAt < 0) {
            long last = 0;
            for (int p = 0; p < partitions && last >= 0; p++) {
                long t = work.firstAckStartedAfter(p, killAt);
                last = t < 0 ? -1 : Math.max(last, t);
            }
            recoveredAt = last;
            ClusterDemoWorkload.sleep(200);
        }
        failover(work, affected, killAt, recoveredAt, partitions);
        demo.say("every partition is written again; a few more seconds of traffic");
        ClusterDemoWorkload.sleep(3_000);
        work.stop();
        Map<String, Set<Integer>> after = demo.ownership();
        long settle = System.currentTimeMillis() + 10_000;
        while (System.currentTimeMillis() < settle
                && !ClusterDemoCommand.missing(partitions, new ArrayList<>(after.values())).isEmpty()) {
            ClusterDemoWorkload.sleep(200);
            after = demo.ownership();
        }
        row("after the kill", owners(after));
        row("reads", fmt(work.reads()) + " answered, " + work.violations().size() + " wrong, "
                + fmt(work.readFailures()) + " failed (no owner within the operation timeout)");
        if (!work.violations().isEmpty()) {
            problems.add("reads returned a value other than the acknowledged one: "
                    + work.violations().subList(0, Math.min(5, work.violations().size())));
        }
        demo.say("verifying every acknowledged write through the cluster");
        verify(work);
        print(victim);
        return problems.isEmpty() ? ExitCodes.OK : ExitCodes.VERIFICATION_FAILED;
    }

    /**
     * The report's {@code tls} row: the transport each node JVM printed when it started (waiting up to 30 s for the
     * lines: a node prints it just after it joined) and the demo's own; anything but {@code tls-tcp} with mutual
     * authentication is a problem.
     */
    private void tls() {
        String expected = "tls-tcp (TLSv1.3, mutual authentication)";
        Map<String, String> seen = new java.util.LinkedHashMap<>();
        long deadline = System.currentTimeMillis() + 30_000;
        while (true) {
            seen.clear();
            for (DemoNode n : demo.nodes()) {
                seen.put(n.name, n.transport());
            }
            if (!seen.containsValue(null) || System.currentTimeMillis() > deadline) {
                break;
            }
            ClusterDemoWorkload.sleep(200);
        }
        seen.put("this demo", routerTransport);
        List<String> off = new ArrayList<>();
        for (Map.Entry<String, String> e : seen.entrySet()) {
            if (!expected.equals(e.getValue())) {
                off.add(e.getKey() + ": " + (e.getValue() == null ? "no start line" : e.getValue()));
            }
        }
        if (off.isEmpty()) {
            row("tls", "on: " + String.join(", ", seen.keySet()) + " all run Pekko Artery " + expected
                    + "; certificates of a throwaway CA made in " + tlsDir);
        } else {
            row("tls", "NOT on for every member: " + String.join("; ", off));
            problems.add("not every member runs TLS with mutual authentication: " + off);
        }
    }

    /** @return true when every partition has an owner and every node hosts at least one */
    private boolean balanced(int partitions) {
        Map<String, Set<Integer>> now = demo.ownership();
        if (!ClusterDemoCommand.missing(partitions, new ArrayList<>(now.values())).isEmpty()) {
            return false;
        }
        int fair = Math.min(1, partitions / Math.max(1, now.size()));
        for (Set<Integer> h : now.values()) {
            if (h.size() < fair) {
                return false;
            }
        }
        return true;
    }

    private void failover(ClusterDemoWorkload work, Set<Integer> affected, long killAt, long recoveredAt,
                          int partitions) {
        StringBuilder sb = new StringBuilder();
        List<String> times = new ArrayList<>();
        List<Integer> stuck = new ArrayList<>();
        for (int p : affected) {
            long t = work.firstAckStartedAfter(p, killAt);
            if (t < 0) {
                stuck.add(p);
            } else {
                times.add(String.format(Locale.ROOT, "%.1f s", (t - killAt) / 1000.0));
            }
        }
        sb.append("partitions ").append(affected).append(" written again after ").append(String.join(" / ", times))
                .append(" (first write started after the kill, acknowledged)");
        if (!stuck.isEmpty()) {
            sb.append("; NOT served again within ").append(ClusterDemoCommand.RECOVERY_TIMEOUT.toSeconds())
                    .append(" s: ").append(stuck);
            problems.add("partitions " + stuck + " were not written again within "
                    + ClusterDemoCommand.RECOVERY_TIMEOUT.toSeconds() + " s of the kill");
        }
        row("failover", sb.toString());
        Set<Integer> others = new TreeSet<>();
        for (int p = 0; p < partitions; p++) {
            if (!affected.contains(p)) {
                others.add(p);
            }
        }
        long end = recoveredAt < 0 ? System.currentTimeMillis() : recoveredAt;
        if (others.isEmpty()) {
            row("meanwhile", "(the killed node hosted every partition)");
            return;
        }
        long gap = 0;
        for (int p : others) {
            gap = Math.max(gap, work.longestGap(p, killAt, end));
        }
        long acks = work.acknowledged(killAt, end, others);
        row("meanwhile", String.format(Locale.ROOT, "partitions %s went on: %s writes acknowledged during the "
                + "failover, longest pause %.1f s", others, fmt(acks), gap / 1000.0));
        if (acks == 0) {
            problems.add("no write of the surviving nodes' partitions was acknowledged during the failover");
        }
    }

    private void verify(ClusterDemoWorkload work) {
        Map<String, String> acked = work.acked();
        List<String> ackedKeys = new ArrayList<>(acked.keySet());
        List<String> lost = new ArrayList<>();
        for (int i = 0; i < ackedKeys.size(); i += 500) {
            List<String> batch = ackedKeys.subList(i, Math.min(ackedKeys.size(), i + 500));
            Map<String, byte[]> got = tree.getAll(batch);
            for (String k : batch) {
                byte[] v = got.get(k);
                if (v == null || !new String(v, StandardCharsets.UTF_8).equals(acked.get(k))) {
                    lost.add(k);
                }
            }
        }
        int applied = 0;
        for (Map.Entry<String, String> e : work.unknown().entrySet()) {
            byte[] v = tree.getAll(List.of(e.getKey())).get(e.getKey());
            if (v != null) {
                if (new String(v, StandardCharsets.UTF_8).equals(e.getValue())) {
                    applied++;
                } else {
                    lost.add(e.getKey());
                }
            }
        }
        long count = tree.count();
        long expected = acked.size() + applied;
        String unknown = work.unknown().isEmpty() ? "" : "; " + work.unknown().size() + " write(s) of unknown "
                + "outcome (timed out during the failover): " + applied + " applied, "
                + (work.unknown().size() - applied) + " not";
        if (lost.isEmpty() && count == expected) {
            row("verification", "OK: " + fmt(acked.size()) + " acknowledged writes read back through the cluster, "
                    + "count() = " + fmt(count) + unknown);
        } else {
            row("verification", "FAILED: " + lost.size() + " acknowledged write(s) missing or wrong "
                    + lost.subList(0, Math.min(5, lost.size())) + ", count() = " + fmt(count) + " (expected "
                    + fmt(expected) + ")" + unknown);
            problems.add("acknowledged writes missing or wrong, or count() differs");
        }
    }

    private void print(DemoNode victim) {
        PrintWriter out = demo.out();
        int width = 0;
        for (String[] r : report) {
            width = Math.max(width, r[0].length());
        }
        for (String[] r : report) {
            out.println(String.format("%-" + width + "s  %s", r[0], r[1]));
        }
        if (problems.isEmpty()) {
            out.println("OK: reads and writes went on after " + victim.name + " was killed; every acknowledged "
                    + "write is there");
        } else {
            out.println("FAILED: " + String.join("; ", problems));
        }
        out.flush();
    }

    private void row(String label, String value) {
        report.add(new String[] {label, value});
    }

    private static String owners(Map<String, Set<Integer>> hosted) {
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, Set<Integer>> e : hosted.entrySet()) {
            parts.add(e.getKey() + " hosts " + e.getValue());
        }
        return String.join(", ", parts);
    }

    private static String fmt(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
