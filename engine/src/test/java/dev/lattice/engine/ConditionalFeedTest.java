package dev.lattice.engine;

import dev.lattice.engine.feed.Change;
import dev.lattice.engine.feed.ChangeCursor;
import dev.lattice.engine.feed.ChangePosition;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static dev.lattice.engine.FeedChecks.drain;
import static dev.lattice.engine.FeedChecks.flat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Conditional writes are decided when their batch is cut, so the log holds only their outcome: every change feed
 * (fresh, resumed from a stored position in a new process, a named consumer after a restart, a lattice-level feed
 * that does not open the tree, a read-only follower's) delivers exactly the conditional writes that succeeded, on
 * the in-memory and the Chronicle provider. Logs written before (conditions in the entries) still replay and feed as
 * before.
 */
class ConditionalFeedTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String s(byte[] v) {
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }

    private static List<String> described(List<Change> changes) {
        List<String> out = new ArrayList<>();
        for (Change c : changes) {
            out.add(c.kind() == Change.Kind.PUT ? c.key() + "=" + s(c.value()) : c.key() + " " + c.kind());
        }
        return out;
    }

    /** What a feed of tree "t" after the start position must deliver (one partition: in this order). */
    private static final List<String> EXPECTED = List.of("a=a1", "d=d1", "c=c1", "e=e1", "b=b1",
            "a=a2", "b=b2", "c=c2", "d DELETE", "e=e2");

    /**
     * Writes keys, registers consumer "c1" and takes a position, then failed and successful conditional writes (put-if-
     * version, put-if-absent, single- and multi-log atomic writes with preconditions), then overwrites every key so
     * that no state after them tells how they went.
     *
     * @return the position taken before the conditional writes
     */
    private static ChangePosition writeScenario(Lattice l) {
        Tree t = l.tree("t");
        Tree u = l.tree("u");
        long a0 = t.put("a", b("a0"));
        long b0 = t.put("b", b("b0"));
        long c0 = t.put("c", b("c0"));
        t.changes("c1", ChangePosition.now()).close();
        ChangePosition start;
        try (ChangeCursor now = t.changes(ChangePosition.now())) {
            start = now.position();
        }
        assertThat(t.putIfVersion("a", b("never"), a0 + 1)).isFalse();
        assertThat(t.putIfVersion("a", b("a1"), a0)).isTrue();
        assertThat(t.putIfAbsent("b", b("never"))).isFalse();
        assertThat(t.putIfAbsent("d", b("d1"))).isTrue();
        assertThat(t.putIfAbsent("d", b("never"))).isFalse();
        assertThatThrownBy(() -> t.atomic().expectVersion("c", c0 + 1).put("c", b("never")).put("e", b("never"))
                .commit()).isInstanceOf(PreconditionFailedException.class);
        t.atomic().expectVersion("c", c0).put("c", b("c1")).put("e", b("e1")).commit();
        assertThatThrownBy(() -> l.atomic().expectVersion(t, "b", b0 + 1).put(t, "b", b("never"))
                .put(u, "x", b("never")).commit()).isInstanceOf(PreconditionFailedException.class);
        l.atomic().expectVersion(t, "b", b0).put(t, "b", b("b1")).put(u, "x", b("x1")).commit();
        t.put("a", b("a2"));
        t.put("b", b("b2"));
        t.put("c", b("c2"));
        t.delete("d");
        t.put("e", b("e2"));
        return start;
    }

    /** Every feed kind over the data the scenario wrote, in a new lattice: exactly {@link #EXPECTED}. */
    private static void assertEveryFeedExact(Supplier<Lattice> open, Supplier<LatticeFollower> follower,
                                             ChangePosition start) {
        try (Lattice l = open.get()) {
            // a lattice-level feed that does not open the tree (no owner state to consult)
            try (ChangeCursor c = l.changes("t", start)) {
                assertThat(described(flat(drain(c, 200)))).as("lattice feed, tree not open").isEqualTo(EXPECTED);
            }
            Tree t = l.tree("t");
            try (ChangeCursor c = t.changes(start)) {
                assertThat(described(flat(drain(c, 200)))).as("resumed cursor of the owner").isEqualTo(EXPECTED);
            }
            try (ChangeCursor c = t.changes("c1", ChangePosition.beginning())) {
                assertThat(c.position()).isEqualTo(start);
                assertThat(described(flat(drain(c, 200)))).as("named consumer after reopen").isEqualTo(EXPECTED);
                c.commit();
            }
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("a2");
            assertThat(t.get("d")).isEmpty();
            assertLogHoldsNoCondition(l.provider(), new LogId("t", 0));
            assertLogHoldsNoCondition(l.provider(), new LogId("u", 0));
        }
        try (LatticeFollower f = follower.get()) {
            Tree ft = f.tree("t");
            try (ChangeCursor c = ft.changes(start)) {
                assertThat(described(flat(drain(c, 200)))).as("follower's feed").isEqualTo(EXPECTED);
            }
        }
    }

    /** The log holds outcomes only: no put-if-version op and no precondition. */
    private static void assertLogHoldsNoCondition(WalStorageProvider p, LogId log) {
        for (LogEntry e : p.read(log, -1, 100_000, Long.MAX_VALUE).entries()) {
            for (WalRecord.Mutation m : WalRecord.decode(log, e.offset(), e.payload()).mutations()) {
                assertThat(m.op()).as("op at %s@%d", log, e.offset())
                        .isNotIn(WalRecord.Mutation.PUT_IF_VERSION, WalRecord.Mutation.EXPECT);
                assertThat(m.value() == null ? "" : s(m.value())).doesNotContain("never");
            }
        }
    }

    @Test
    void resumedFeedsOfAChronicleTreeDeliverExactlyTheConditionalWritesThatSucceeded() {
        LatticeConfig cfg = LatticeConfig.builder().uri("chronicle:" + dir.resolve("data")).partitions(1).build();
        ChangePosition start;
        try (Lattice l = Lattice.open(cfg)) {
            start = writeScenario(l);
        }
        assertEveryFeedExact(() -> Lattice.open(cfg), () -> Lattice.openReadOnly(cfg), start);
    }

    @Test
    void resumedFeedsOfAnInMemoryTreeDeliverExactlyTheConditionalWritesThatSucceeded() {
        InMemoryStorage storage = new InMemoryStorage();
        Supplier<LatticeConfig> cfg = () -> LatticeConfig.builder()
                .provider(new InMemoryWalStorageProvider(storage), true).partitions(1).build();
        ChangePosition start;
        try (Lattice l = Lattice.open(cfg.get())) {
            start = writeScenario(l);
        }
        assertEveryFeedExact(() -> Lattice.open(cfg.get()), () -> Lattice.openReadOnly(cfg.get()), start);
    }

    /**
     * Writes on one key submitted together (they coalesce into batches): each conditional write is decided after the
     * writes before it in log order, live, on replay and in the feed.
     */
    @Test
    void conditionalWritesQueuedBehindWritesOnTheSameKeyAreDecidedInLogOrder() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        Supplier<LatticeConfig> cfg = () -> LatticeConfig.builder()
                .provider(new InMemoryWalStorageProvider(storage), true).partitions(2).build();
        Map<String, Long> versions = new TreeMap<>();
        try (Lattice l = Lattice.open(cfg.get())) {
            Tree t = l.tree("t");
            ChangePosition start;
            try (ChangeCursor now = t.changes(ChangePosition.now())) {
                start = now.position();
            }
            List<CompletableFuture<Boolean>> fs = new ArrayList<>();
            for (int k = 0; k < 40; k++) {
                String key = "k" + k;
                fs.add(t.putIfAbsentAsync(key, b("1")));
                fs.add(t.putIfAbsentAsync(key, b("never")));
                fs.add(t.deleteAsync(key));
                fs.add(t.putIfAbsentAsync(key, b("2")));
                fs.add(t.putIfVersionAsync(key, b("never"), 0));
                fs.add(t.putIfVersionAsync(key, b("never"), 1));
            }
            for (int k = 0; k < 40; k++) {
                List<Boolean> got = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    got.add(fs.get(k * 6 + i).get(30, TimeUnit.SECONDS));
                }
                assertThat(got).as("k%d", k).containsExactly(true, false, true, true, false, false);
                versions.put("k" + k, t.getVersioned("k" + k).orElseThrow().version());
            }
            try (ChangeCursor c = t.changes(start)) {
                Map<String, List<String>> perKey = new TreeMap<>();
                for (Change ch : flat(drain(c, 200))) {
                    perKey.computeIfAbsent(ch.key(), x -> new ArrayList<>()).add(ch.kind() == Change.Kind.PUT
                            ? s(ch.value()) : "D");
                }
                assertThat(perKey).hasSize(40).allSatisfy((k, v) -> assertThat(v).containsExactly("1", "D", "2"));
            }
        }
        try (Lattice l = Lattice.open(cfg.get())) {
            Tree t = l.tree("t");
            for (Map.Entry<String, Long> e : versions.entrySet()) {
                Versioned v = t.getVersioned(e.getKey()).orElseThrow();
                assertThat(s(v.value())).isEqualTo("2");
                assertThat(v.version()).as("replayed version of %s", e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    /** Compare-and-set counters from several threads: every success is in the feed once, and replay agrees. */
    @Test
    void concurrentCompareAndSetCountersAgreeWithTheFeedAndReplay() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        Supplier<LatticeConfig> cfg = () -> LatticeConfig.builder()
                .provider(new InMemoryWalStorageProvider(storage), true).partitions(2).build();
        int threads = 6;
        int increments = 150;
        String[] keys = {"x", "y", "z"};
        AtomicInteger failures = new AtomicInteger();
        try (Lattice l = Lattice.open(cfg.get())) {
            Tree t = l.tree("t");
            for (String k : keys) {
                t.put(k, b("0"));
            }
            t.changes("counter", ChangePosition.now()).close();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    int me = i;
                    fs.add(pool.submit(() -> {
                        for (int n = 0; n < increments; n++) {
                            String k = keys[(me + n) % keys.length];
                            while (true) {
                                Versioned cur = t.getVersioned(k).orElseThrow();
                                int next = Integer.parseInt(s(cur.value())) + 1;
                                if (t.putIfVersion(k, b(Integer.toString(next)), cur.version())) {
                                    break;
                                }
                                failures.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : fs) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            int total = 0;
            for (String k : keys) {
                total += Integer.parseInt(s(t.get(k).orElseThrow()));
            }
            assertThat(total).isEqualTo(threads * increments);
        }
        try (Lattice l = Lattice.open(cfg.get())) {
            Tree t = l.tree("t");
            try (ChangeCursor c = t.changes("counter", ChangePosition.beginning())) {
                Map<String, List<Integer>> perKey = new TreeMap<>();
                for (Change ch : flat(drain(c, 300))) {
                    perKey.computeIfAbsent(ch.key(), x -> new ArrayList<>()).add(Integer.parseInt(s(ch.value())));
                }
                int total = 0;
                for (String k : keys) {
                    List<Integer> seq = perKey.get(k);
                    for (int i = 0; i < seq.size(); i++) {
                        assertThat(seq.get(i)).as("%s, change %d", k, i).isEqualTo(i + 1);
                    }
                    total += seq.size();
                    assertThat(s(t.get(k).orElseThrow())).isEqualTo(Integer.toString(seq.size()));
                }
                assertThat(total).as("one change per successful increment").isEqualTo(threads * increments);
            }
        }
    }

    /**
     * A failed condition is answered from this process's state without a log entry, so it obeys the read lease as a
     * read does: once another process claimed the log and the lease ran out, it fails instead of answering from stale
     * state.
     */
    @Test
    void aFailedConditionIsNotAnsweredFromStaleStateOnceTheReadLeaseRanOut() throws Exception {
        List<java.util.function.Function<Tree, Object>> conditionals = List.of(
                t -> t.putIfAbsent("k", b("stale")),
                t -> t.putIfAbsentAsync("k", b("stale")).join(),
                t -> t.atomic().expectAbsent("k").put("j", b("stale")).commit());
        for (java.util.function.Function<Tree, Object> conditional : conditionals) {
            InMemoryStorage storage = new InMemoryStorage();
            Duration lease = Duration.ofMillis(300);
            try (Lattice a = Lattice.open(LatticeConfig.builder().provider(new InMemoryWalStorageProvider(storage), true)
                    .partitions(1).ownershipCheckInterval(Duration.ZERO).readLease(lease).maxRetries(0).build());
                 Lattice other = Lattice.open(LatticeConfig.builder()
                         .provider(new InMemoryWalStorageProvider(storage), true).build())) {
                Tree t = a.tree("t");
                t.put("k", b("a"));
                other.tree("t").delete("k"); // its open claims the log: the first process is fenced out
                Thread.sleep(lease.toMillis() + 100);
                assertThatThrownBy(() -> conditional.apply(t)).satisfies(e -> assertThat(
                        e instanceof OwnershipLostException || e.getCause() instanceof OwnershipLostException)
                        .as("%s", e).isTrue());
            }
        }
    }

    // ---------------------------------------------------------------- logs written before conditions were decided at cut

    private static byte[] oldEntry(byte kind, long version, WalRecord.Mutation... ms) {
        byte[] e = WalRecord.encode(kind, List.of(ms)); // the encoding earlier releases logged conditional writes with
        WalRecord.seal(e, version);
        return e;
    }

    private static void append(WalStorageProvider p, LogId log, byte[] entry) {
        Fence f = p.claim(log);
        p.append(log, f, EncodedBatch.of(p.state(log).committedTail() + 1, List.of(entry)));
    }

    @Test
    void aLogWithConditionsInItsEntriesStillReplaysAndFeedsAsItsConditionsDecide() {
        InMemoryStorage storage = new InMemoryStorage();
        Supplier<LatticeConfig> cfg = () -> LatticeConfig.builder()
                .provider(new InMemoryWalStorageProvider(storage), true).partitions(1).build();
        long a0;
        try (Lattice l = Lattice.open(cfg.get())) {
            Tree t = l.tree("t");
            t.changes("old", ChangePosition.beginning()).close(); // holds the close's trim back
            a0 = t.put("a", b("a0"));
        }
        try (Lattice l = Lattice.open(cfg.get())) { // the tree is not opened here: its log is written by hand
            WalStorageProvider p = l.provider();
            LogId log = new LogId("t", 0);
            byte[] ak = b("a");
            byte[] bk = b("b");
            append(p, log, oldEntry(WalRecord.KIND_MUTATIONS, a0 + 10,
                    WalRecord.Mutation.putIfVersion("a", ak, b("never"), a0 + 1)));
            append(p, log, oldEntry(WalRecord.KIND_MUTATIONS, a0 + 11,
                    WalRecord.Mutation.putIfVersion("a", ak, b("a1"), a0)));
            append(p, log, oldEntry(WalRecord.KIND_ATOMIC, a0 + 12, WalRecord.Mutation.expect("a", ak, a0),
                    WalRecord.Mutation.put("b", bk, b("never"))));
            append(p, log, oldEntry(WalRecord.KIND_ATOMIC, a0 + 13, WalRecord.Mutation.expect("b", bk, 0),
                    WalRecord.Mutation.put("b", bk, b("b1"))));
            append(p, log, oldEntry(WalRecord.KIND_MUTATIONS, a0 + 14,
                    WalRecord.Mutation.putIfVersion("b", bk, b("never"), 0)));
        }
        try (Lattice l = Lattice.open(cfg.get())) {
            Tree t = l.tree("t");
            assertThat(t.getVersioned("a").orElseThrow().version()).isEqualTo(a0 + 11);
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("a1");
            assertThat(t.getVersioned("b").orElseThrow().version()).isEqualTo(a0 + 13);
            assertThat(s(t.get("b").orElseThrow())).isEqualTo("b1");
            try (ChangeCursor c = t.changes("old", ChangePosition.beginning())) {
                assertThat(described(flat(drain(c, 200)))).containsExactly("a=a0", "a=a1", "b=b1");
            }
            // written now: decided at cut, logged without conditions
            assertThat(t.putIfVersion("a", b("a2"), a0 + 11)).isTrue();
            assertThat(t.putIfAbsent("b", b("never"))).isFalse();
            try (ChangeCursor c = t.changes(ChangePosition.of(5))) {
                assertThat(described(flat(drain(c, 200)))).containsExactly("a=a2");
            }
        }
    }
}
