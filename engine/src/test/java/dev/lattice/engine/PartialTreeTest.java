package dev.lattice.engine;

import dev.lattice.spi.FencedException;
import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.open;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Partial trees (the engine side of the cluster, issue 19): a process hosts some partitions of a tree, hands one
 * over (release, then another process hosts it), and a partition claimed by another process stops being served
 * on its own. Two lattices on one in-memory storage stand for two processes sharing a backend.
 */
class PartialTreeTest {

    private static final TreeOptions FOUR = TreeOptions.partitions(4);

    /** One key per partition of a 4-partition tree, found by the tree's own hash. */
    private static String[] keyPerPartition(PartialTree t) {
        String[] keys = new String[t.partitions()];
        for (int i = 0; keys[t.partitions() - 1] == null || hasNull(keys); i++) {
            String k = "k" + i;
            int p = t.partitionOf(k);
            if (keys[p] == null) {
                keys[p] = k;
            }
        }
        return keys;
    }

    private static boolean hasNull(String[] a) {
        for (String s : a) {
            if (s == null) {
                return true;
            }
        }
        return false;
    }

    @Test
    void servesOnlyHostedPartitionsAndRefusesTheRestByType() {
        try (Lattice l = open(new InMemoryStorage())) {
            PartialTree t = l.hostTree("t", FOUR);
            assertThat(t.hostedPartitions()).isEmpty();
            t.host(1);
            t.host(3);
            t.host(3); // idempotent
            assertThat(t.hostedPartitions()).containsExactly(1, 3);
            String[] k = keyPerPartition(t);
            t.put(k[1], b("one"));
            t.put(k[3], b("three"));
            assertThat(t.get(k[1]).map(EngineBasicsTest::s)).hasValue("one");
            assertThat(t.putIfVersion(k[3], b("three2"), t.getVersioned(k[3]).orElseThrow().version())).isTrue();
            assertThat(t.count()).isEqualTo(2);
            assertThat(t.count(1)).isEqualTo(1);
            try (ScanCursor c = t.scan(3, null, null, false)) {
                assertThat(c.hasNext()).isTrue();
                assertThat(s(c.next().value())).isEqualTo("three2");
                assertThat(c.hasNext()).isFalse();
            }
            for (int p : new int[] {0, 2}) {
                String key = k[p];
                assertThatThrownBy(() -> t.get(key)).isInstanceOfSatisfying(PartitionNotHostedException.class,
                        e -> {
                            assertThat(e.tree()).isEqualTo("t");
                            assertThat(e.partition()).isEqualTo(p);
                            assertThat(e).hasMessageContaining("partition " + p);
                        });
                assertThatThrownBy(() -> t.put(key, b("x"))).isInstanceOf(PartitionNotHostedException.class);
                assertThatThrownBy(() -> t.getAll(List.of(k[1], key))).isInstanceOf(PartitionNotHostedException.class);
                assertThatThrownBy(() -> t.putAll(Map.of(k[1], b("x"), key, b("y"))))
                        .isInstanceOf(PartitionNotHostedException.class);
                assertThatThrownBy(() -> t.count(p)).isInstanceOf(PartitionNotHostedException.class);
            }
            // nothing of the refused putAll landed on the hosted partition either? It is not atomic: the hosted
            // part is refused before anything is submitted
            assertThat(t.get(k[1]).map(EngineBasicsTest::s)).hasValue("one");
            // a single-log atomic write works; a multi-log one and the tree-wide operations are refused
            t.putAllAtomic(Map.of(k[1], b("a1")));
            assertThat(t.get(k[1]).map(EngineBasicsTest::s)).hasValue("a1");
            assertThatThrownBy(() -> t.putAllAtomic(Map.of(k[1], b("a2"), k[3], b("a3"))))
                    .isInstanceOf(PartitionNotHostedException.class).hasMessageContaining("multi-log");
            assertThat(t.get(k[1]).map(EngineBasicsTest::s)).hasValue("a1");
            assertThatThrownBy(() -> t.deleteRange("a", "z")).isInstanceOf(PartitionNotHostedException.class)
                    .hasMessageContaining("range delete");
            assertThatThrownBy(() -> t.changes(dev.lattice.engine.feed.ChangePosition.beginning()))
                    .isInstanceOf(PartitionNotHostedException.class);
            assertThatThrownBy(() -> l.tree("t")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("hostTree");
            assertThat(l.hostTree("t", FOUR)).isSameAs(t);
            assertThatThrownBy(() -> t.host(4)).isInstanceOf(IndexOutOfBoundsException.class);
            l.tree("whole");
            assertThatThrownBy(() -> l.hostTree("whole", FOUR)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aHandOffKeepsEveryWriteAndTheFormerHostStopsServingThePartition() {
        InMemoryStorage storage = new InMemoryStorage();
        Map<String, String> expected = new HashMap<>();
        try (Lattice a = open(storage); Lattice b = open(storage)) {
            PartialTree ta = a.hostTree("t", FOUR);
            PartialTree tb = b.hostTree("t", FOUR);
            ta.host(0);
            ta.host(1);
            tb.host(2);
            tb.host(3);
            for (int i = 0; i < 400; i++) {
                String k = "key" + i;
                PartialTree owner = ta.hostedPartitions().contains(ta.partitionOf(k)) ? ta : tb;
                owner.put(k, b("v" + i));
                expected.put(k, "v" + i);
            }
            assertThat(ta.release(1, Duration.ofSeconds(10))).isTrue();
            assertThat(ta.hostedPartitions()).containsExactly(0);
            tb.host(1);
            for (Map.Entry<String, String> e : expected.entrySet()) {
                PartialTree owner = ta.partitionOf(e.getKey()) == 0 ? ta : tb;
                assertThat(owner.get(e.getKey()).map(EngineBasicsTest::s)).as(e.getKey()).hasValue(e.getValue());
                if (ta.partitionOf(e.getKey()) == 1) {
                    assertThatThrownBy(() -> ta.get(e.getKey())).isInstanceOf(PartitionNotHostedException.class);
                }
            }
            assertThat(ta.count() + tb.count()).isEqualTo(expected.size());
            // and back again, writing through the new host first
            String k1 = keyPerPartition(ta)[1];
            tb.put(k1, b("moved"));
            expected.put(k1, "moved");
            assertThat(tb.release(1, Duration.ofSeconds(10))).isTrue();
            ta.host(1);
            assertThat(ta.get(k1).map(EngineBasicsTest::s)).hasValue("moved");
        }
        // the data is whole for an embedded open afterwards
        try (Lattice c = open(storage)) {
            Tree t = c.tree("t");
            for (Map.Entry<String, String> e : expected.entrySet()) {
                assertThat(t.get(e.getKey()).map(EngineBasicsTest::s)).as(e.getKey()).hasValue(e.getValue());
            }
        }
    }

    @Test
    void aClaimedPartitionStopsAloneAndTheReadLeaseBoundsStaleReads() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        Duration lease = Duration.ofMillis(300);
        // no background check: only the read lease stops stale reads
        try (Lattice a = open(storage, LatticeConfig.builder().ownershipCheckInterval(Duration.ZERO).readLease(lease)
                .maxRetries(0));
             Lattice b = open(storage)) {
            PartialTree ta = a.hostTree("t", FOUR);
            ta.host(0);
            ta.host(1);
            String[] k = keyPerPartition(ta);
            ta.put(k[0], b("a0"));
            ta.put(k[1], b("a1"));
            PartialTree tb = b.hostTree("t", FOUR);
            tb.host(1); // a new owner without a hand-off: its claim fences the old one
            tb.put(k[1], b("b1"));
            Thread.sleep(lease.toMillis() + 100);
            assertThat(ta.getVersionedIfInMemory(k[1])).isNull(); // the lease ran out: no answer without a proof
            assertThatThrownBy(() -> ta.get(k[1])).isInstanceOfSatisfying(OwnershipLostException.class, e -> {
                assertThat(e.log()).isEqualTo(new dev.lattice.spi.LogId("t", 1));
                assertThat(e).hasCauseInstanceOf(FencedException.class);
            });
            assertThatThrownBy(() -> ta.put(k[1], b("stale"))).isInstanceOf(OwnershipLostException.class);
            assertThatThrownBy(() -> ta.count(1)).isInstanceOf(OwnershipLostException.class);
            // the other partition is still served and written
            assertThat(ta.get(k[0]).map(EngineBasicsTest::s)).hasValue("a0");
            ta.put(k[0], b("a0-2"));
            assertThat(ta.get(k[0]).map(EngineBasicsTest::s)).hasValue("a0-2");
            assertThat(tb.get(k[1]).map(EngineBasicsTest::s)).hasValue("b1");
            // releasing the lost partition and hosting it again fences the other process in turn
            ta.release(1, Duration.ofSeconds(5));
            ta.host(1);
            assertThat(ta.get(k[1]).map(EngineBasicsTest::s)).hasValue("b1");
        }
    }

    @Test
    void aReadThatMayNotBlockIsAnsweredOnlyWhenTheMemtableDecidesIt() {
        try (Lattice l = open(new InMemoryStorage())) {
            TreeImpl t = (TreeImpl) l.hostTree("t", FOUR);
            t.host(0);
            String[] k = keyPerPartition(t);
            String flushed = k[0];
            List<String> inZero = new ArrayList<>();
            for (int i = 0; inZero.size() < 3; i++) {
                if (t.partitionOf("m" + i) == 0) {
                    inZero.add("m" + i);
                }
            }
            String kept = inZero.get(0);
            String deleted = inZero.get(1);
            String absent = inZero.get(2);
            long v = t.put(flushed, b("in a run"));
            assertThat(t.getVersionedIfInMemory(flushed).orElseThrow().version()).isEqualTo(v);
            assertThat(t.flushNow(10_000)).isTrue();
            // in a run now: only a read that may block answers
            assertThat(t.getVersionedIfInMemory(flushed)).isNull();
            assertThat(t.get(flushed).map(EngineBasicsTest::s)).hasValue("in a run");
            t.put(kept, b("memtable"));
            t.put(deleted, b("gone"));
            t.delete(deleted);
            assertThat(t.getVersionedIfInMemory(kept).map(x -> s(x.value()))).hasValue("memtable");
            assertThat(t.getVersionedIfInMemory(deleted)).isEmpty(); // the memtable holds the delete
            assertThat(t.getVersionedIfInMemory(absent)).isNull(); // not in the memtable: the runs would be read
            assertThat(t.get(absent)).isEmpty();
            assertThatThrownBy(() -> t.getVersionedIfInMemory(k[1])).isInstanceOf(PartitionNotHostedException.class);
            assertThatThrownBy(() -> t.getVersionedIfInMemory(null)).isInstanceOf(NullPointerException.class);
        }
    }

    @Test
    void withoutALeaseAnIdleFencedPartitionServesItsLastStateUntilAWriteRevealsTheLoss() {
        // the contrast that shows the lease matters: the same sequence with the lease off
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage, LatticeConfig.builder().ownershipCheckInterval(Duration.ZERO).maxRetries(0));
             Lattice b = open(storage)) {
            PartialTree ta = a.hostTree("t", FOUR);
            ta.host(2);
            String k = keyPerPartition(ta)[2];
            ta.put(k, b("old"));
            PartialTree tb = b.hostTree("t", FOUR);
            tb.host(2);
            tb.put(k, b("new"));
            assertThat(ta.get(k).map(EngineBasicsTest::s)).hasValue("old"); // stale: nothing proved the fence
            assertThatThrownBy(() -> ta.put(k, b("x"))).isInstanceOf(RuntimeException.class);
            assertThatThrownBy(() -> ta.get(k)).isInstanceOf(OwnershipLostException.class);
        }
    }

    @Test
    void releaseDrainsConcurrentWritersAndEachAnsweredWriteIsKept() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        List<String> acked = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Lattice a = open(storage); Lattice b = open(storage)) {
            PartialTree ta = a.hostTree("t", TreeOptions.partitions(1));
            ta.host(0);
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                int id = w;
                Thread th = new Thread(() -> {
                    for (int i = 0; i < 100_000; i++) {
                        String k = "w" + id + "-" + i;
                        try {
                            ta.put(k, b(k));
                            acked.add(k);
                        } catch (PartitionNotHostedException | LatticeShuttingDownException e) {
                            return; // released: later writes are refused, never half-done
                        }
                    }
                });
                th.start();
                writers.add(th);
            }
            Thread.sleep(300);
            assertThat(ta.release(0, Duration.ofSeconds(10))).isTrue();
            for (Thread th : writers) {
                th.join(10_000);
            }
            assertThat(acked).isNotEmpty();
            PartialTree tb = b.hostTree("t", TreeOptions.partitions(1));
            tb.host(0);
            for (String k : acked) {
                assertThat(tb.get(k)).as(k).isPresent();
            }
            assertThat(tb.count()).isGreaterThanOrEqualTo(acked.size());
        }
        assertThat(Set.copyOf(acked)).hasSameSizeAs(acked);
    }
}
