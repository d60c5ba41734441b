package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.open;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine steps of a multi-log atomic write whose participants are hosted by different processes (the cluster
 * drives them): prepare, decide in the coordinator, resolve elsewhere; reads wait for an unknown outcome instead of
 * answering from before the write; a hand-off of a participant leaves its prepare pending for the cluster to
 * resolve; a coordinator handed off cannot commit what its old hosting prepared.
 */
class PartialTreeAtomicTest {

    private static final TreeOptions TWO = TreeOptions.partitions(2);

    private static String keyIn(PartialTree t, int p, String prefix) {
        for (int i = 0; ; i++) {
            if (t.partitionOf(prefix + i) == p) {
                return prefix + i;
            }
        }
    }

    @Test
    void aWriteCommittedElsewhereIsSeenWholeOrNotAtAll() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage, LatticeConfig.builder().admissionTimeout(Duration.ofSeconds(5)));
             Lattice b = open(storage, LatticeConfig.builder().admissionTimeout(Duration.ofSeconds(5)))) {
            PartialTree ta = a.hostTree("t", TWO);
            PartialTree tb = b.hostTree("t", TWO);
            ta.host(0);
            tb.host(1);
            String k0 = keyIn(ta, 0, "a");
            String k1 = keyIn(ta, 1, "b");
            long v0 = ta.put(k0, b("old0"));
            tb.put(k1, b("old1"));
            LogId coord = new LogId("t", 0);
            long f0 = ta.prepareAtomic(0, "x1", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k0, b("new0"), 0),
                    new AtomicOp(AtomicOp.Kind.EXPECT, k0, null, v0))).get(5, TimeUnit.SECONDS);
            long f1 = tb.prepareAtomic(1, "x1", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k1, b("new1"), 0)))
                    .get(5, TimeUnit.SECONDS);
            assertThat(tb.pendingAtomicWrites(1)).containsEntry("x1", coord);
            long version = ta.decideAtomic(0, "x1", true, List.of(new LogId("t", 1)), Math.max(f0, f1))
                    .get(5, TimeUnit.SECONDS);
            assertThat(version).isGreaterThanOrEqualTo(Math.max(f0, f1));
            assertThat(ta.atomicDecision(0, "x1")).hasValue(new AtomicDecision(true, version));
            assertThat(ta.getVersioned(k0).orElseThrow().version()).isEqualTo(version);
            // the participant has not heard: a read that may not block does not answer, one that may waits for the
            // outcome rather than answer "old1"
            assertThat(tb.getVersionedIfInMemory(k1)).isNull();
            CompletableFuture<java.util.Optional<byte[]>> read = CompletableFuture.supplyAsync(() -> tb.get(k1));
            Thread.sleep(200);
            assertThat(read).isNotDone();
            tb.resolveAtomic(1, "x1", true, version).get(5, TimeUnit.SECONDS);
            assertThat(EngineBasicsTest.s(read.get(5, TimeUnit.SECONDS).orElseThrow())).isEqualTo("new1");
            assertThat(tb.getVersioned(k1).orElseThrow().version()).isEqualTo(version);
            assertThat(tb.pendingAtomicWrites(1)).isEmpty();
            assertThat(tb.getVersionedIfInMemory(k1).orElseThrow().version()).isEqualTo(version);
            ta.atomicResolvedAt(0, "x1", new LogId("t", 1));
            // the keys are free again
            tb.put(k1, b("after"));
            assertThat(tb.getVersioned(k1).orElseThrow().version()).isGreaterThan(version);
        }
    }

    /**
     * A reader waiting for a write's outcome must not stop waiting before the outcome is visible: the resolve used
     * to drop the write from the pending set before publishing it, so a reader that looked in between answered
     * from before a committed write (seen in ClusterFaultTest as a wide-group read going back). The test holds the
     * engine's publication monitor while the resolve runs, which widens that gap to as long as it likes.
     */
    @Test
    void aWaitingReaderNeverAnswersBetweenTheResolveAndItsPublication() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage, LatticeConfig.builder().admissionTimeout(Duration.ofSeconds(10)));
             Lattice b = open(storage, LatticeConfig.builder().admissionTimeout(Duration.ofSeconds(10)))) {
            PartialTree ta = a.hostTree("t", TWO);
            PartialTree tb = b.hostTree("t", TWO);
            ta.host(0);
            tb.host(1);
            String k0 = keyIn(ta, 0, "a");
            String k1 = keyIn(ta, 1, "b");
            tb.put(k1, b("old1"));
            LogId coord = new LogId("t", 0);
            long f0 = ta.prepareAtomic(0, "x9", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k0, b("new0"), 0)))
                    .get(5, TimeUnit.SECONDS);
            long f1 = tb.prepareAtomic(1, "x9", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k1, b("new1"), 0)))
                    .get(5, TimeUnit.SECONDS);
            long version = ta.decideAtomic(0, "x9", true, List.of(new LogId("t", 1)), Math.max(f0, f1))
                    .get(5, TimeUnit.SECONDS);
            Visibility publication = ((TreeImpl) tb).context().atomics.visibility;
            CompletableFuture<java.util.Optional<Versioned>> read;
            CompletableFuture<Void> resolved;
            // own threads: on 2 cores the common pool has one worker, which the waiting read would hold
            java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
            try {
            synchronized (publication) {
                read = CompletableFuture.supplyAsync(() -> tb.getVersioned(k1), threads);
                Thread.sleep(100);
                assertThat(read).as("the read waits for the outcome").isNotDone();
                // on another thread: a lone write may run its steps on the calling thread, which holds the monitor
                resolved = CompletableFuture.supplyAsync(() -> tb.resolveAtomic(1, "x9", true, version), threads)
                        .thenCompose(f -> f);
                Thread.sleep(300); // the resolve's apply now waits for the monitor, in the middle of resolving
                assertThat(read).as("the read still waits while the resolve is half-way").isNotDone();
            }
            resolved.get(5, TimeUnit.SECONDS);
            Versioned seen = read.get(5, TimeUnit.SECONDS).orElseThrow();
            assertThat(EngineBasicsTest.s(seen.value())).isEqualTo("new1");
            assertThat(seen.version()).isEqualTo(version);
            } finally {
                threads.shutdownNow();
            }
        }
    }

    /**
     * A getAll or scan that waits for a write decided before it began must see that write: a participant publishes
     * it only at its resolve, so a read snapshot opened before the wait left it out (CI saw a cluster getAll return
     * half of a cross-partition write). Each read starts while the write is decided but unresolved here, waits,
     * and must answer the write's value once the resolve lands.
     */
    @Test
    void aReadThatWaitsForADecidedWriteSeesItWhenItResolves() throws Exception {
        try (TwoHosts h = TwoHosts.open(new InMemoryStorage(), Duration.ofSeconds(10))) {
            String k0 = h.keyIn(0, "a");
            String k1 = h.keyIn(1, "b");
            h.tb().put(k1, b("old"));
            java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(3);
            try {
                List<java.util.function.Supplier<String>> reads = List.of(
                        () -> EngineBasicsTest.s(h.tb().getAll(List.of(k1)).get(k1)),
                        () -> scanOne(h.tb().scan(null, null, false)),
                        () -> scanOne(h.tb().scan(1, null, null, false)));
                for (int i = 0; i < reads.size(); i++) {
                    long version = h.decided("w" + i, k0, k1, "new" + i);
                    CompletableFuture<String> seen = CompletableFuture.supplyAsync(reads.get(i), threads);
                    Thread.sleep(200);
                    assertThat(seen).as("read %d waits for the outcome", i).isNotDone();
                    h.resolve("w" + i, version);
                    assertThat(seen.get(5, TimeUnit.SECONDS)).as("read %d after the resolve", i).isEqualTo("new" + i);
                }
            } finally {
                threads.shutdownNow();
            }
        }
    }

    private static String scanOne(ScanCursor c) {
        try (c) {
            TreeEntry e = c.next();
            assertThat(c.hasNext()).isFalse();
            return EngineBasicsTest.s(e.value());
        }
    }

    @Test
    void aFailedPreconditionPreparesNothingAndAnAbortUndoesTheOthers() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage); Lattice b = open(storage)) {
            PartialTree ta = a.hostTree("t", TWO);
            PartialTree tb = b.hostTree("t", TWO);
            ta.host(0);
            tb.host(1);
            String k0 = keyIn(ta, 0, "a");
            String k1 = keyIn(ta, 1, "b");
            ta.put(k0, b("old0"));
            tb.put(k1, b("old1"));
            LogId coord = new LogId("t", 0);
            ta.prepareAtomic(0, "x2", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k0, b("new0"), 0)))
                    .get(5, TimeUnit.SECONDS);
            assertThatThrownBy(() -> tb.prepareAtomic(1, "x2", coord, List.of(
                    new AtomicOp(AtomicOp.Kind.PUT, k1, b("new1"), 0), new AtomicOp(AtomicOp.Kind.EXPECT, k1, null, 12345)))
                    .get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(PreconditionFailedException.class);
            assertThat(tb.pendingAtomicWrites(1)).isEmpty();
            assertThat(ta.decideAtomic(0, "x2", false, List.of(), 0).get(5, TimeUnit.SECONDS)).isZero();
            assertThat(ta.atomicDecision(0, "x2")).hasValue(new AtomicDecision(false, 0));
            assertThat(EngineBasicsTest.s(ta.get(k0).orElseThrow())).isEqualTo("old0");
            assertThat(EngineBasicsTest.s(tb.get(k1).orElseThrow())).isEqualTo("old1");
            ta.put(k0, b("free")); // unlocked
            assertThatThrownBy(() -> ta.decideAtomic(0, "x2", true, List.of(), 0))
                    .isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aHandOffKeepsAPrepareForTheClusterToResolveAndACoordinatorCannotCommitAnOldHostingsPrepare()
            throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage); Lattice b = open(storage);
             Lattice c = open(storage, LatticeConfig.builder().admissionTimeout(Duration.ofMillis(500)))) {
            PartialTree ta = a.hostTree("t", TWO);
            PartialTree tb = b.hostTree("t", TWO);
            ta.host(0);
            tb.host(1);
            String k0 = keyIn(ta, 0, "a");
            String k1 = keyIn(ta, 1, "b");
            tb.put(k1, b("old1"));
            LogId coord = new LogId("t", 0);
            ta.prepareAtomic(0, "x3", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k0, b("new0"), 0)))
                    .get(5, TimeUnit.SECONDS);
            tb.prepareAtomic(1, "x3", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k1, b("new1"), 0)))
                    .get(5, TimeUnit.SECONDS);
            // the participant is handed off before it hears the outcome
            assertThat(tb.release(1, Duration.ofSeconds(5))).isTrue();
            PartialTree tc = c.hostTree("t", TWO);
            tc.host(1);
            assertThat(tc.pendingAtomicWrites(1)).containsEntry("x3", coord);
            // reads and writes of the held key wait (bounded) for the outcome, then say so by type
            assertThatThrownBy(() -> tc.put(k1, b("blocked"))).isInstanceOfSatisfying(
                    AtomicWritePendingException.class, e -> {
                        assertThat(e.txnId()).isEqualTo("x3");
                        assertThat(e.coordinator()).isEqualTo(coord);
                    });
            assertThatThrownBy(() -> tc.get(k1)).isInstanceOf(AtomicWritePendingException.class);
            long v = ta.decideAtomic(0, "x3", true, List.of(new LogId("t", 1)), 0).get(5, TimeUnit.SECONDS);
            AtomicDecision d = ta.atomicDecision(0, "x3").orElseThrow();
            tc.resolveAtomic(1, "x3", d.committed(), d.version()).get(5, TimeUnit.SECONDS);
            assertThat(EngineBasicsTest.s(tc.get(k1).orElseThrow())).isEqualTo("new1");
            assertThat(tc.getVersioned(k1).orElseThrow().version()).isEqualTo(v);

            // a coordinator prepare, then a hand-off of the coordinator: the new hosting aborts it at its replay
            ta.prepareAtomic(0, "x4", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k0, b("lost"), 0)))
                    .get(5, TimeUnit.SECONDS);
            ta.release(0, Duration.ofSeconds(5));
            ta.host(0);
            assertThatThrownBy(() -> ta.decideAtomic(0, "x4", true, List.of(), 0))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("not prepared in this hosting");
            assertThat(EngineBasicsTest.s(ta.get(k0).orElseThrow())).isEqualTo("new0");
        }
        // and the data opens whole embedded, with the committed write and without the aborted one
        try (Lattice d = open(storage)) {
            Tree t = d.tree("t");
            assertThat(t.count()).isEqualTo(2);
        }
    }

    @Test
    void aParticipantHostedBesideItsUndecidedCoordinatorIsNotAbortedByItsReplay() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage); Lattice b = open(storage)) {
            PartialTree ta = a.hostTree("t", TWO);
            PartialTree tb = b.hostTree("t", TWO);
            ta.host(0);
            tb.host(1);
            String k0 = keyIn(ta, 0, "a");
            String k1 = keyIn(ta, 1, "b");
            LogId coord = new LogId("t", 0);
            ta.prepareAtomic(0, "x5", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k0, b("n0"), 0)))
                    .get(5, TimeUnit.SECONDS);
            tb.prepareAtomic(1, "x5", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k1, b("n1"), 0)))
                    .get(5, TimeUnit.SECONDS);
            tb.release(1, Duration.ofSeconds(5));
            ta.host(1); // the coordinator's own process replays the participant before deciding
            assertThat(ta.pendingAtomicWrites(1)).containsEntry("x5", coord);
            long v = ta.decideAtomic(0, "x5", true, List.of(new LogId("t", 1)), 0).get(5, TimeUnit.SECONDS);
            ta.resolveAtomic(1, "x5", true, v).get(5, TimeUnit.SECONDS);
            assertThat(EngineBasicsTest.s(ta.get(k0).orElseThrow())).isEqualTo("n0");
            assertThat(EngineBasicsTest.s(ta.get(k1).orElseThrow())).isEqualTo("n1");
            assertThat(ta.getVersioned(k1).orElseThrow().version()).isEqualTo(v);
        }
    }

    /**
     * The prepare counter a cluster scan validates its snapshots with: it moves with each prepare (also one that is
     * later aborted) and not with other writes; a scan opened after a reading waits for the prepares counted in it;
     * a new hosting of the partition never reads the same value as the old one.
     */
    @Test
    void thePrepareCounterMovesWithPreparesOnlyAndDiffersBetweenHostings() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage, LatticeConfig.builder().admissionTimeout(Duration.ofSeconds(5)));
             Lattice b = open(storage, LatticeConfig.builder().admissionTimeout(Duration.ofSeconds(5)))) {
            PartialTree ta = a.hostTree("t", TWO);
            PartialTree tb = b.hostTree("t", TWO);
            ta.host(0);
            tb.host(1);
            String k0 = keyIn(ta, 0, "a");
            String k1 = keyIn(ta, 1, "b");
            long c0 = tb.atomicPreparesSeen(1);
            tb.put(k1, b("plain"));
            tb.putAllAtomic(Map.of(k1, b("one-partition")));
            assertThat(tb.atomicPreparesSeen(1)).as("no prepare").isEqualTo(c0);
            LogId coord = new LogId("t", 0);
            ta.prepareAtomic(0, "x7", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k0, b("n0"), 0)))
                    .get(5, TimeUnit.SECONDS);
            tb.prepareAtomic(1, "x7", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k1, b("n1"), 0)))
                    .get(5, TimeUnit.SECONDS);
            long c1 = tb.atomicPreparesSeen(1);
            assertThat(c1).isEqualTo(c0 + 1);
            // a scan of the range opened now waits for the counted prepare's outcome, then shows it
            CompletableFuture<String> scanned = CompletableFuture.supplyAsync(() -> {
                try (ScanCursor c = tb.scan(1, null, null, false)) {
                    return EngineBasicsTest.s(c.next().value());
                }
            });
            Thread.sleep(200);
            assertThat(scanned).isNotDone();
            long version = ta.decideAtomic(0, "x7", true, List.of(new LogId("t", 1)), 0).get(5, TimeUnit.SECONDS);
            tb.resolveAtomic(1, "x7", true, version).get(5, TimeUnit.SECONDS);
            assertThat(scanned.get(5, TimeUnit.SECONDS)).isEqualTo("n1");
            assertThat(tb.atomicPreparesSeen(1)).as("a resolve is not a prepare").isEqualTo(c1);
            // an aborted prepare counts as well
            tb.prepareAtomic(1, "x8", coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k1, b("no"), 0)))
                    .get(5, TimeUnit.SECONDS);
            tb.resolveAtomic(1, "x8", false, 0).get(5, TimeUnit.SECONDS);
            long c2 = tb.atomicPreparesSeen(1);
            assertThat(c2).isEqualTo(c1 + 1);
            // hosted again (by the same lattice, then by the other one in this JVM): never the same reading
            assertThat(tb.release(1, Duration.ofSeconds(5))).isTrue();
            assertThatThrownBy(() -> tb.atomicPreparesSeen(1)).isInstanceOf(PartitionNotHostedException.class);
            tb.host(1);
            assertThat(tb.atomicPreparesSeen(1)).isNotEqualTo(c2).isNotEqualTo(c1).isNotEqualTo(c0);
            long again = tb.atomicPreparesSeen(1);
            assertThat(tb.release(1, Duration.ofSeconds(5))).isTrue();
            ta.host(1);
            assertThat(ta.atomicPreparesSeen(1)).isNotEqualTo(again).isNotEqualTo(c2);
        }
    }
}
