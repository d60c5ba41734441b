package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.open;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Atomic writes on the in-memory provider: API, guarantees, limits, idempotency, visibility, contention. */
class AtomicWriteTest {

    static Map<String, byte[]> values(String prefix, int n, String v) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            m.put(prefix + i, b(v));
        }
        return m;
    }

    @Test
    void singleAndMultiLogWritesCarryOneVersionAndSurviveReopen() {
        InMemoryStorage storage = new InMemoryStorage();
        long single;
        long multi;
        long cross;
        try (Lattice l = open(storage, LatticeConfig.builder().partitions(8))) {
            Tree one = l.tree("one", 1);
            Tree many = l.tree("many");
            Tree other = l.tree("other", 3);
            single = one.putAllAtomic(values("k", 16, "a"));
            multi = many.putAllAtomic(values("k", 16, "b"));
            AtomicResult r = l.atomic().put(many, "x", b("1")).put(other, "y", b("2")).delete(many, "k0").commit();
            cross = r.version();
            assertThat(r.logs()).isGreaterThan(1);
            assertThat(r.keys()).isEqualTo(3);
            for (int i = 0; i < 16; i++) {
                assertThat(one.getVersioned("k" + i).orElseThrow().version()).isEqualTo(single);
            }
            assertThat(many.get("k0")).isEmpty();
            for (int i = 1; i < 16; i++) {
                assertThat(many.getVersioned("k" + i).orElseThrow().version()).isEqualTo(multi);
            }
            assertThat(many.getVersioned("x").orElseThrow().version()).isEqualTo(cross);
            assertThat(other.getVersioned("y").orElseThrow().version()).isEqualTo(cross);
            assertThat(cross).isGreaterThan(multi).isGreaterThan(single);
            assertThat(many.count()).isEqualTo(16);
            assertThat(EngineBasicsTest.keys(many.scan(null, null, false))).hasSize(16).contains("x");
            assertThat(l.meterRegistry().get("lattice.atomic.committed").tag("logs", "multi").counter().count())
                    .isEqualTo(2.0);
            assertThat(l.meterRegistry().get("lattice.atomic.committed").tag("logs", "single").counter().count())
                    .isEqualTo(1.0);
        }
        try (Lattice l = open(storage)) {
            Tree many = l.tree("many");
            assertThat(many.get("k0")).isEmpty();
            assertThat(many.getVersioned("k5").orElseThrow().version()).isEqualTo(multi);
            assertThat(s(l.tree("other").get("y").orElseThrow())).isEqualTo("2");
            assertThat(l.tree("one").getVersioned("k3").orElseThrow().version()).isEqualTo(single);
            // the clock continues above every replayed version
            assertThat(many.put("z", b("z"))).isGreaterThan(cross);
        }
    }

    @Test
    void preconditionsFailWithTheKeyAndWriteNothing() {
        try (Lattice l = open(new InMemoryStorage())) {
            Tree t = l.tree("p", 4);
            long v = t.put("a", b("1"));
            t.put("b", b("1"));
            // single log (one key) and multi log
            assertThatThrownBy(() -> t.atomic().expectVersion("a", v + 1).put("a", b("2")).commit())
                    .isInstanceOfSatisfying(PreconditionFailedException.class, e -> {
                        assertThat(e.key()).isEqualTo("a");
                        assertThat(e.tree()).isEqualTo("p");
                        assertThat(e.expectedVersion()).isEqualTo(v + 1);
                        assertThat(e.actualVersion()).isEqualTo(v);
                    });
            assertThatThrownBy(() -> t.atomic().put("a", b("2")).put("c", b("2")).put("d", b("2"))
                    .expectAbsent("b").commit())
                    .isInstanceOfSatisfying(PreconditionFailedException.class, e -> assertThat(e.key()).isEqualTo("b"));
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("1");
            assertThat(t.get("c")).isEmpty();
            assertThat(t.get("d")).isEmpty();
            AtomicResult ok = t.atomic().expectVersion("a", v).expectAbsent("c").put("a", b("3")).put("c", b("3"))
                    .put("e", b("3")).commit();
            assertThat(t.getVersioned("a").orElseThrow().version()).isEqualTo(ok.version());
            assertThat(l.meterRegistry().get("lattice.atomic.aborted").tag("reason", "precondition").counter().count())
                    .isEqualTo(2.0);
        }
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsWritten() {
        try (Lattice l = open(new InMemoryStorage(), LatticeConfig.builder().maxAtomicKeys(10))) {
            Tree t = l.tree("bad", 4);
            assertThatThrownBy(() -> t.atomic().commit()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at least one put or delete");
            assertThatThrownBy(() -> t.atomic().expectAbsent("a").commit())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only preconditions");
            assertThatThrownBy(() -> t.atomic().put("a", b("1")).delete("a").commit())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("written twice");
            assertThatThrownBy(() -> t.putAllAtomic(values("k", 11, "x")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxAtomicKeys")
                    .hasMessageContaining("10");
            assertThatThrownBy(() -> t.atomic().put(null, b("1"))).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> t.atomic().put("a", null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> t.atomic().put("", b("1"))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> l.atomic().put("a", b("1"))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not bound");
            assertThatThrownBy(() -> t.atomic().expectVersion("a", -1)).isInstanceOf(IllegalArgumentException.class);
            AtomicWrite once = t.atomic().put("a", b("1"));
            once.commit();
            assertThatThrownBy(once::commit).isInstanceOf(IllegalStateException.class);
            try (Lattice other = open(new InMemoryStorage())) {
                Tree foreign = other.tree("f");
                assertThatThrownBy(() -> l.atomic().put(foreign, "a", b("1")))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another lattice");
            }
            assertThat(t.count()).isEqualTo(1);
        }
    }

    @Test
    void aPartBiggerThanOneProviderEntryIsRefused() {
        // the in-memory provider's entries hold at most its maxEntryBytes; four values just under the value limit
        // fit one by one, but not together in one log's part of an atomic write
        try (Lattice l = open(new InMemoryStorage())) {
            Tree t = l.tree("big", 1);
            int max = t.maxValueBytes();
            Map<String, byte[]> m = new LinkedHashMap<>();
            for (int i = 0; i < 4; i++) {
                m.put("k" + i, new byte[max]);
            }
            assertThatThrownBy(() -> t.putAllAtomic(m)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maxEntryBytes").hasMessageContaining("big/0000".replace("/0000", ""));
            assertThat(t.count()).isZero();
        }
    }

    @Test
    void idempotencyKeyReattachesToTheFirstOutcome() {
        InMemoryStorage storage = new InMemoryStorage();
        AtomicResult first;
        try (Lattice l = open(storage)) {
            Tree t = l.tree("i", 4);
            first = t.atomic().put("a", b("1")).put("b", b("1")).idempotencyKey("op-1").commit();
            assertThat(first.reattached()).isFalse();
            t.put("a", b("overwritten"));
            AtomicResult again = t.atomic().put("a", b("1")).put("b", b("1")).idempotencyKey("op-1").commit();
            assertThat(again.reattached()).isTrue();
            assertThat(again.version()).isEqualTo(first.version());
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("overwritten");
            assertThatThrownBy(() -> t.atomic().put("a", b("1")).put("c", b("1")).idempotencyKey("op-1").commit())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("different set of keys");
            // an aborted write is remembered as aborted
            assertThatThrownBy(() -> t.atomic().expectAbsent("a").put("x", b("1")).idempotencyKey("op-2").commit())
                    .isInstanceOf(PreconditionFailedException.class);
            assertThatThrownBy(() -> t.atomic().expectAbsent("a").put("x", b("1")).idempotencyKey("op-2").commit())
                    .isInstanceOf(AtomicWriteAbortedException.class).hasMessageContaining("aborted");
            assertThat(t.get("x")).isEmpty();
        }
        try (Lattice l = open(storage)) {
            Tree t = l.tree("i");
            AtomicResult again = t.atomic().put("a", b("1")).put("b", b("1")).idempotencyKey("op-1").commit();
            assertThat(again.reattached()).isTrue();
            assertThat(again.version()).isEqualTo(first.version());
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("overwritten");
        }
    }

    /**
     * The acceptance test of the issue: a reader polling 16 keys (spread over partitions) with getAll and with a
     * scan every few milliseconds during 50 atomic commits never sees a mix of two writes.
     */
    @Test
    void readersNeverSeeAPartOfAnAtomicWrite() throws Exception {
        try (Lattice l = open(new InMemoryStorage(), LatticeConfig.builder().partitions(8))) {
            Tree t = l.tree("r");
            Tree t2 = l.tree("r2", 2);
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                keys.add("key-" + i);
            }
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<String> mix = new AtomicReference<>();
            AtomicInteger polls = new AtomicInteger();
            Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
            Runnable reader = () -> {
                while (!done.get() && mix.get() == null) {
                    Map<String, byte[]> got = t.getAll(keys);
                    Set<String> vals = new HashSet<>();
                    got.values().forEach(v -> vals.add(s(v)));
                    if (!(got.isEmpty() || (got.size() == 16 && vals.size() == 1))) {
                        mix.set("getAll saw " + got.size() + " keys with values " + vals);
                    }
                    Set<String> scanned = new HashSet<>();
                    int n = 0;
                    try (ScanCursor c = t.scan("key-", "key.", false)) {
                        while (c.hasNext()) {
                            scanned.add(s(c.next().value()));
                            n++;
                        }
                    }
                    if (!(n == 0 || (n == 16 && scanned.size() == 1))) {
                        mix.set("scan saw " + n + " keys with values " + scanned);
                    }
                    // point reads: once a key shows write i, every key read afterwards shows i or later
                    int floor = -1;
                    for (String k : keys) {
                        Optional<byte[]> v = t.get(k);
                        int i = v.map(x -> Integer.parseInt(s(x))).orElse(-1);
                        if (i < floor) {
                            mix.set("point read of " + k + " saw " + i + " after " + floor);
                        }
                        floor = Math.max(floor, i);
                    }
                    vals.forEach(seen::add);
                    polls.incrementAndGet();
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            };
            Thread r1 = new Thread(reader);
            Thread r2 = new Thread(reader);
            r1.start();
            r2.start();
            for (int i = 0; i < 50; i++) {
                Map<String, byte[]> m = new LinkedHashMap<>();
                for (String k : keys) {
                    m.put(k, b(Integer.toString(i)));
                }
                if (i % 2 == 0) {
                    t.putAllAtomic(m);
                } else { // across two trees
                    AtomicWrite w = l.atomic();
                    m.forEach((k, v) -> w.put(t, k, v));
                    w.put(t2, "mirror", b(Integer.toString(i)));
                    w.commit();
                }
                Thread.sleep(2);
            }
            done.set(true);
            r1.join();
            r2.join();
            assertThat(mix.get()).as("a reader saw part of an atomic write").isNull();
            assertThat(polls.get()).as("the readers polled during the commits").isGreaterThan(20);
            assertThat(seen.size()).as("the readers saw several different writes").isGreaterThan(3);
        }
    }

    /** N threads race preconditions (atomic) and putIfVersion on one key: exactly one winner per round. */
    @Test
    void compareAndSetContentionHasExactlyOneWinnerPerRound() throws Exception {
        int threads = 6;
        int rounds = 40;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (Lattice l = open(new InMemoryStorage(), LatticeConfig.builder().partitions(4))) {
            Tree t = l.tree("cas");
            t.put("hot", b("start"));
            for (int round = 0; round < rounds; round++) {
                long v = t.getVersioned("hot").orElseThrow().version();
                CyclicBarrier go = new CyclicBarrier(threads);
                List<Future<Boolean>> fs = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    int id = i;
                    int r = round;
                    fs.add(pool.submit(() -> {
                        go.await();
                        String val = r + ":" + id;
                        switch (id % 3) {
                            case 0:
                                return t.putIfVersion("hot", b(val), v);
                            case 1: // single-log atomic with a precondition
                                try {
                                    t.atomic().expectVersion("hot", v).put("hot", b(val)).commit();
                                    return true;
                                } catch (PreconditionFailedException e) {
                                    return false;
                                }
                            default: // multi-log atomic: the hot key plus keys in other partitions
                                try {
                                    t.atomic().expectVersion("hot", v).put("hot", b(val)).put("side-" + id, b(val))
                                            .put("other-" + id, b(val)).put("more-" + id, b(val)).commit();
                                    return true;
                                } catch (PreconditionFailedException e) {
                                    return false;
                                }
                        }
                    }));
                }
                int winners = 0;
                for (Future<Boolean> f : fs) {
                    winners += f.get() ? 1 : 0;
                }
                assertThat(winners).as("winners in round %d", round).isEqualTo(1);
                assertThat(s(t.get("hot").orElseThrow())).startsWith(round + ":");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Plain writes on keys of an atomic write wait for it and are ordered after it; nothing deadlocks. */
    @Test
    void concurrentAtomicAndPlainWritesOnOverlappingKeysStayConsistent() throws Exception {
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (Lattice l = open(new InMemoryStorage(), LatticeConfig.builder().partitions(4))) {
            Tree a = l.tree("a");
            Tree c = l.tree("c", 2);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int id = i;
                fs.add(pool.submit(() -> {
                    start.await();
                    java.util.Random rnd = new java.util.Random(id);
                    for (int n = 0; n < 150; n++) {
                        // all threads write overlapping keys in random orders: lock ordering must prevent deadlock
                        List<String> ks = new ArrayList<>(List.of("k0", "k1", "k2", "k3", "k4", "k5"));
                        java.util.Collections.shuffle(ks, rnd);
                        String val = id + ":" + n;
                        if (n % 3 == 0) {
                            a.put(ks.get(0), b(val));
                        } else {
                            AtomicWrite w = l.atomic();
                            for (String k : ks.subList(0, 3)) {
                                w.put(a, k, b(val));
                            }
                            w.put(c, ks.get(3), b(val));
                            w.commit();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : fs) {
                f.get(120, java.util.concurrent.TimeUnit.SECONDS);
            }
            // every key holds a value whose version matches what getVersioned says, and replay agrees
            Map<String, Versioned> live = new LinkedHashMap<>();
            for (String k : List.of("k0", "k1", "k2", "k3", "k4", "k5")) {
                a.getVersioned(k).ifPresent(v -> live.put(k, v));
            }
            assertThat(live).isNotEmpty();
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A process that stops between its prepares and its decision (here: its decision's stage hangs, and a new
     * process opens the same storage meanwhile, fencing it out) leaves prepared writes; the next open aborts them
     * durably (no decision), even when the participants checkpointed them as pending.
     */
    @Test
    void aWriteCutOffBeforeItsDecisionIsAbortedAtTheNextOpen() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        dev.lattice.testkit.FaultInjectingProvider faulty = new dev.lattice.testkit.FaultInjectingProvider(
                new dev.lattice.spi.memory.InMemoryWalStorageProvider(storage));
        Lattice old = Lattice.open(LatticeConfig.builder().provider(faulty, true).partitions(4).maxRetries(0)
                .checkpointEveryEntries(1).build());
        Tree t = old.tree("cut");
        t.putAllAtomic(Map.of("before-a", b("1"), "before-b", b("1"), "before-c", b("1")));
        // four keys in four different partitions; the coordinator is partition 0
        List<String> ks = new ArrayList<>();
        Set<Integer> parts = new HashSet<>();
        for (int i = 0; ks.size() < 4; i++) {
            if (parts.add(TreeImpl.partitionOf("key" + i, 4))) {
                ks.add("key" + i);
            }
        }
        // the coordinator's first stage (its prepare) passes, the second (the decision) hangs for 3 s, then fails
        var hang = faulty.inject(dev.lattice.testkit.FaultInjectingProvider.FaultRule.timeoutBefore(
                dev.lattice.testkit.SpiOperation.STAGE, Duration.ofSeconds(3))
                .onLog(new dev.lattice.spi.LogId("cut", 0)).afterSkipping(1));
        java.util.concurrent.CompletableFuture<AtomicResult> pending = t.atomic().put(ks.get(0), b("x"))
                .put(ks.get(1), b("x")).put(ks.get(2), b("x")).put(ks.get(3), b("x")).commitAsync();
        // wait until every participant has its prepare (4 keys over 4 partitions: at least 2 logs)
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (hang.firedCount() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(hang.firedCount()).as("the decision stage is hanging").isEqualTo(1);
        assertThat(t.getAll(ks)).isEmpty();
        try (Lattice next = open(storage)) {
            Tree t2 = next.tree("cut");
            assertThat(t2.getAll(ks)).as("nothing of the cut-off write").isEmpty();
            assertThat(t2.getAll(List.of("before-a", "before-b", "before-c"))).hasSize(3);
            assertThat(next.meterRegistry().get("lattice.atomic.resolved.at.open").counter().count())
                    .as("prepared parts resolved at open").isEqualTo(4.0);
            assertThatThrownBy(pending::join).hasCauseInstanceOf(LatticeException.class);
            // the abort is durable: a third process sees nothing either, and the keys take new writes
            t2.putAllAtomic(Map.of(ks.get(0), b("y"), ks.get(3), b("y")));
        }
        old.close();
        try (Lattice third = open(storage)) {
            Tree t3 = third.tree("cut");
            assertThat(t3.getAll(ks).keySet()).containsExactlyInAnyOrder(ks.get(0), ks.get(3));
            assertThat(s(t3.get(ks.get(0)).orElseThrow())).isEqualTo("y");
        }
    }

    /**
     * A process that stops after a cross-tree write's decision but before the resolve in the other tree: the next
     * process opens that tree first; resolving its leftover opens the coordinator's tree, finds the decision, and
     * commits the part (the write was acknowledged, so it must be whole).
     */
    @Test
    void aLeftoverIsResolvedFromTheCoordinatorInAnotherTree() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        dev.lattice.testkit.FaultInjectingProvider faulty = new dev.lattice.testkit.FaultInjectingProvider(
                new dev.lattice.spi.memory.InMemoryWalStorageProvider(storage));
        Lattice old = Lattice.open(LatticeConfig.builder().provider(faulty, true).partitions(1).maxRetries(0).build());
        Tree a = old.tree("alpha");
        Tree z = old.tree("zulu");
        // zulu/0's first stage (the prepare) passes; the second (the resolve) hangs, so zulu keeps a prepared part
        var hang = faulty.inject(dev.lattice.testkit.FaultInjectingProvider.FaultRule.timeoutBefore(
                dev.lattice.testkit.SpiOperation.STAGE, Duration.ofSeconds(3))
                .onLog(new dev.lattice.spi.LogId("zulu", 0)).afterSkipping(1));
        AtomicResult r = old.atomic().put(a, "a1", b("v")).put(z, "z1", b("v")).put(z, "z2", b("v")).commit();
        assertThat(r.logs()).isEqualTo(2);
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (hang.firedCount() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(hang.firedCount()).as("the resolve in zulu is hanging").isEqualTo(1);
        try (Lattice next = open(storage)) {
            Tree z2 = next.tree("zulu"); // opens alpha (the coordinator) to resolve
            assertThat(z2.getAll(List.of("z1", "z2"))).hasSize(2);
            assertThat(z2.getVersioned("z1").orElseThrow().version()).isEqualTo(r.version());
            assertThat(next.meterRegistry().get("lattice.atomic.resolved.at.open").counter().count()).isEqualTo(1.0);
            assertThat(s(next.tree("alpha").get("a1").orElseThrow())).isEqualTo("v");
        }
        old.close();
        try (Lattice third = open(storage)) {
            assertThat(third.tree("zulu").getAll(List.of("z1", "z2"))).hasSize(2);
            assertThat(third.meterRegistry().get("lattice.atomic.resolved.at.open").counter().count())
                    .as("the resolution was written").isZero();
        }
    }

    /**
     * While a multi-log write holds its keys (its decision hangs, then fails): another atomic write on those keys
     * gives up after the admission timeout having written nothing, and a plain put on one of them waits and is
     * applied after the held write resolved (here: aborted), so it wins.
     */
    @Test
    void writesOnLockedKeysWaitAndTimeOutCleanly() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        dev.lattice.testkit.FaultInjectingProvider faulty = new dev.lattice.testkit.FaultInjectingProvider(
                new dev.lattice.spi.memory.InMemoryWalStorageProvider(storage));
        try (Lattice l = Lattice.open(LatticeConfig.builder().provider(faulty, true).partitions(4).maxRetries(0)
                .admissionTimeout(Duration.ofMillis(300)).build())) {
            Tree t = l.tree("locks");
            List<String> ks = new ArrayList<>();
            Set<Integer> parts = new HashSet<>();
            for (int i = 0; ks.size() < 2; i++) {
                if (parts.add(TreeImpl.partitionOf("key" + i, 4))) {
                    ks.add("key" + i);
                }
            }
            int coordinator = Math.min(TreeImpl.partitionOf(ks.get(0), 4), TreeImpl.partitionOf(ks.get(1), 4));
            var hang = faulty.inject(dev.lattice.testkit.FaultInjectingProvider.FaultRule.timeoutBefore(
                    dev.lattice.testkit.SpiOperation.STAGE, Duration.ofSeconds(2))
                    .onLog(new dev.lattice.spi.LogId("locks", coordinator)).afterSkipping(1));
            java.util.concurrent.CompletableFuture<AtomicResult> held = t.atomic().put(ks.get(0), b("held"))
                    .put(ks.get(1), b("held")).commitAsync();
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (hang.firedCount() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(hang.firedCount()).as("the held write's decision is hanging").isEqualTo(1);
            assertThatThrownBy(() -> t.atomic().put(ks.get(0), b("other")).put(ks.get(1), b("other")).commit())
                    .isInstanceOf(LatticeSaturatedException.class).hasMessageContaining("locked by other atomic writes");
            java.util.concurrent.CompletableFuture<Long> plain = t.putAsync(ks.get(0), b("plain"));
            assertThat(plain).as("the put waits for the held keys").isNotDone();
            assertThatThrownBy(held::join).hasCauseInstanceOf(WriteFailedException.class);
            plain.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(s(t.get(ks.get(0)).orElseThrow())).isEqualTo("plain");
            assertThat(t.get(ks.get(1))).as("nothing of the aborted or the timed-out write").isEmpty();
        }
    }

    /** Older values kept for an open scan are folded away once it closes (count() leaves its slow path). */
    @Test
    void valuesKeptForAnOpenScanAreFoldedAfterItCloses() {
        try (Lattice l = open(new InMemoryStorage(), LatticeConfig.builder().partitions(2))) {
            Tree t = l.tree("fold");
            t.putAllAtomic(values("k", 8, "1"));
            PartitionState[] states = new PartitionState[2];
            for (int p = 0; p < 2; p++) {
                states[p] = ((TreeImpl) t).pipelines()[p].state;
            }
            ScanCursor open = t.scan(null, null, false);
            t.putAllAtomic(values("k", 8, "2"));
            long kept = java.util.Arrays.stream(states).mapToLong(s -> s.map.values().stream()
                    .filter(o -> o instanceof PartitionState.TxnNode).count()).sum();
            assertThat(kept).as("nodes kept for the open scan").isEqualTo(8);
            List<String> seen = new ArrayList<>();
            open.forEachRemaining(e -> seen.add(s(e.value())));
            assertThat(seen).as("the scan reads its snapshot").hasSize(8).containsOnly("1");
            // a later batch in each partition retries the fold (an idle partition keeps them until its next write)
            Set<Integer> written = new HashSet<>();
            for (int i = 0; written.size() < 2; i++) {
                if (written.add(TreeImpl.partitionOf("other" + i, 2))) {
                    t.put("other" + i, b("x"));
                }
            }
            long left = java.util.Arrays.stream(states).mapToLong(s -> s.map.values().stream()
                    .filter(o -> o instanceof PartitionState.TxnNode).count()).sum();
            assertThat(left).as("nodes left after the scan closed").isZero();
            assertThat(t.count()).isEqualTo(10);
        }
    }
}
