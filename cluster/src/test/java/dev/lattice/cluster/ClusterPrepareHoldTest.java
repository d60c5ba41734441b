package dev.lattice.cluster;

import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeEntry;
import dev.lattice.engine.TreeOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The prepare holds of scans and counts on three real nodes (one JVM, every message serialized): a hold whose
 * scanner vanished ends by itself at the owners' bound and the writes it held go on; holds renewed without end
 * delay a write by about the bound, not longer; an owner that does not answer holds (as one of an older version)
 * makes a scan fall back to the plain validation loop, still consistent, and the node stops sending holds.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterPrepareHoldTest {

    /** The owners' bound (longer than the default, so that a held write stands out from a slow one). */
    private static final Duration HOLD = Duration.ofMillis(400);
    private final List<LatticeCluster> nodes = new ArrayList<>();

    @BeforeAll
    void start() {
        String uri = TestCluster.freshPostgresUri();
        int seed = TestCluster.freePort();
        String extra = "pekko.actor.serialize-messages = on";
        for (int i = 0; i < 3; i++) {
            nodes.add(LatticeCluster.start(TestCluster.node(uri, i == 0 ? seed : TestCluster.freePort(), seed, extra)
                    .scanPrepareHold(HOLD).build()));
        }
        for (LatticeCluster n : nodes) {
            assertThat(n.awaitMembers(3, Duration.ofSeconds(60))).as("cluster formed").isTrue();
        }
        nodes.get(0).tree("held", TreeOptions.partitions(6));
        for (LatticeCluster n : nodes) {
            n.services().tree("held"); // one after the other (see ClusterInProcessTest)
        }
    }

    @AfterAll
    void stop() {
        for (LatticeCluster n : nodes) {
            n.close();
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Keys "{@code prefix}i" of {@code n} different partitions of the tree "held". */
    private List<String> spread(String prefix, int n) {
        List<String> keys = new ArrayList<>();
        Set<Integer> seen = new TreeSet<>();
        for (int i = 0; keys.size() < n; i++) {
            if (seen.add(nodes.get(0).services().tree("held").partitionOf(prefix + i))) {
                keys.add(prefix + i);
            }
        }
        return keys;
    }

    /** @return the write's latency in ms */
    private static long timedWrite(Tree t, List<String> keys, String value) {
        Map<String, byte[]> m = new HashMap<>();
        keys.forEach(k -> m.put(k, b(value)));
        long t0 = System.nanoTime();
        t.putAllAtomic(m);
        return (System.nanoTime() - t0) / 1_000_000;
    }

    /** Sends {@code op} for hold {@code id} to every partition of "held" through node 1; the answers. */
    private List<Response> hold(Op op, long id, long millis) {
        Router r = nodes.get(1).services().router();
        List<CompletableFuture<Response>> acks = new ArrayList<>();
        for (int p = 0; p < 6; p++) {
            acks.add(r.send(new LogAddress("held", p), op, reply -> Request.hold(op, id, millis, reply)));
        }
        List<Response> out = new ArrayList<>();
        acks.forEach(a -> out.add(Router.await(a)));
        return out;
    }

    @Test
    void aHoldWhoseScannerVanishedEndsByItselfAndRenewedHoldsDelayAWriteByTheBoundAtMost() throws Exception {
        Tree writer = nodes.get(0).tree("held");
        List<String> group = spread("v-", 4);
        for (int i = 0; i < 5; i++) {
            timedWrite(writer, group, "warm-" + i); // every partition hosted, the paths warm
        }
        long quiet = timedWrite(writer, group, "quiet");

        // a scanner places holds asking for a minute and vanishes: each owner granted its bound only
        for (Response r : hold(Op.PREPARE_HOLD, 77, 60_000)) {
            assertThat(r.number()).as("granted, capped at the owner's bound").isEqualTo(HOLD.toMillis());
        }
        long granted = System.nanoTime(); // every owner placed its hold before this, so all expire before it + HOLD
        long held = timedWrite(writer, group, "held");
        assertThat(held).as("the write waited for the hold (a write without one took " + quiet + " ms)")
                .isGreaterThanOrEqualTo(HOLD.toMillis() / 2);
        assertThat(held).as("and went on when it expired").isLessThan(HOLD.toMillis() + 3_000);
        // the write goes on once the holds of its own partitions end; the others may have been placed a little
        // later (each owner counts from its own receipt), so the release waits out the latest possible expiry
        long sinceGranted = (System.nanoTime() - granted) / 1_000_000;
        if (sinceGranted < HOLD.toMillis() + 50) {
            Thread.sleep(HOLD.toMillis() + 50 - sinceGranted);
        }
        for (Response r : hold(Op.PREPARE_RELEASE, 77, 0)) {
            assertThat(r.flag()).as("the hold had ended by itself before any release").isFalse();
        }
        assertThat(nodes.get(2).tree("held").getAll(group).values()).allSatisfy(v ->
                assertThat(new String(v, StandardCharsets.UTF_8)).isEqualTo("held"));

        // a scanner that renews its holds without end: a write waits about the bound, then goes on regardless
        AtomicBoolean renewing = new AtomicBoolean(true);
        AtomicInteger renewals = new AtomicInteger();
        Thread renewer = new Thread(() -> {
            while (renewing.get()) {
                hold(Op.PREPARE_HOLD, 78, 60_000);
                renewals.incrementAndGet();
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        renewer.start();
        long renewed;
        try {
            while (renewals.get() == 0) {
                Thread.sleep(5);
            }
            renewed = timedWrite(writer, group, "renewed");
            int during = renewals.get();
            assertThat(renewed).as("waited for the holds").isGreaterThanOrEqualTo(HOLD.toMillis() / 2);
            assertThat(renewed).as("but not past its own bound").isLessThan(HOLD.toMillis() + 3_000);
            Thread.sleep(200);
            assertThat(renewals.get()).as("the holds were still being renewed").isGreaterThan(during);
        } finally {
            renewing.set(false);
            renewer.join(10_000);
        }
        hold(Op.PREPARE_RELEASE, 78, 0);
        System.out.println("[cluster] prepare holds: a write took " + quiet + " ms without a hold, " + held
                + " ms under a vanished scanner's hold, " + renewed + " ms under holds renewed without end; bound "
                + HOLD.toMillis() + " ms");
    }

    @Test
    void ownersThatDropHoldsMakeAScanFallBackToThePlainValidationLoop() throws Exception {
        nodes.forEach(n -> n.services().dropPrepareHolds(true)); // as owners of a version before the holds
        Tree writerTree = nodes.get(0).tree("held");
        List<String> group = spread("d-", 4);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger written = new AtomicInteger();
        Thread writer = new Thread(() -> {
            for (int gen = 0; !stop.get(); gen++) {
                Map<String, byte[]> m = new HashMap<>();
                for (String k : group) {
                    m.put(k, b("gen-" + gen));
                }
                writerTree.putAllAtomic(m);
                written.incrementAndGet();
                try {
                    Thread.sleep(10); // paced: the plain loop validates beside it within a few rounds
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        writer.start();
        try {
            Tree reader = nodes.get(2).tree("held");
            CutHolds holds = nodes.get(2).services().cutHolds();
            boolean fellBack = false;
            int scans = 0;
            int after = 0;
            long end = System.nanoTime() + 60_000_000_000L;
            while ((!fellBack || after < 5) && System.nanoTime() < end) {
                Map<String, String> seen = new TreeMap<>();
                try (ScanCursor c = reader.scan(null, null, false)) {
                    ClusterScanCursor cc = (ClusterScanCursor) c;
                    if (fellBack) {
                        assertThat(cc.held()).as("no holds sent after the fallback").isFalse();
                        after++;
                    } else if (cc.rounds() > 1) {
                        assertThat(cc.held()).as("holds were tried after the first round failed").isTrue();
                        assertThat(holds.paused()).as("and found unserved").isTrue();
                        fellBack = true;
                    }
                    while (c.hasNext()) {
                        TreeEntry e = c.next();
                        if (e.key().startsWith("d-")) {
                            seen.put(e.key(), new String(e.value(), StandardCharsets.UTF_8));
                        }
                    }
                }
                assertThat(seen.isEmpty() || (seen.size() == 4 && new TreeSet<>(seen.values()).size() == 1))
                        .as("scan " + scans + " saw " + seen).isTrue();
                scans++;
            }
            assertThat(fellBack).as("a scan needed a second round and fell back (" + scans + " scans)").isTrue();
            assertThat(after).isEqualTo(5);
        } finally {
            stop.set(true);
            writer.join(30_000);
            nodes.forEach(n -> n.services().dropPrepareHolds(false));
        }
    }
}
