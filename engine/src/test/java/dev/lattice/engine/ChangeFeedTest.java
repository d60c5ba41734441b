package dev.lattice.engine;

import dev.lattice.engine.feed.Change;
import dev.lattice.engine.feed.ChangeCursor;
import dev.lattice.engine.feed.ChangeFeedTrimmedException;
import dev.lattice.engine.feed.ChangePosition;
import dev.lattice.engine.feed.ChangeSnapshot;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.lattice.engine.FeedChecks.apply;
import static dev.lattice.engine.FeedChecks.assertLogOrder;
import static dev.lattice.engine.FeedChecks.assertSameState;
import static dev.lattice.engine.FeedChecks.drain;
import static dev.lattice.engine.FeedChecks.flat;
import static dev.lattice.engine.FeedChecks.scan;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The change feed against the in-memory and Chronicle providers: order, atomic writes, positions, trim, snapshot. */
class ChangeFeedTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Lattice memory(InMemoryStorage s, LatticeConfig.Builder b) {
        return Lattice.open(b.provider(new InMemoryWalStorageProvider(s), true).build());
    }

    /** Per key, what a single writer's acknowledged writes were, in order: "P<version>" or "D". */
    static final class Acks {
        final Map<String, List<String>> perKey = new TreeMap<>();
        /** Atomic writes: version to keys. */
        final Map<Long, List<String>> atomics = new HashMap<>();

        void put(String k, long v) {
            perKey.computeIfAbsent(k, x -> new ArrayList<>()).add("P" + v);
        }

        void delete(String k) {
            perKey.computeIfAbsent(k, x -> new ArrayList<>()).add("D");
        }
    }

    static Map<String, List<String>> perKey(List<Change> changes) {
        Map<String, List<String>> out = new TreeMap<>();
        for (Change c : changes) {
            out.computeIfAbsent(c.key(), x -> new ArrayList<>()).add(c.kind() == Change.Kind.PUT ? "P" + c.version()
                    : "D");
        }
        return out;
    }

    /**
     * A random single-writer workload over {@code t} (and atomic writes with {@code other}); {@code conditionals}
     * adds put-if-version and put-if-absent writes (decided exactly only by a feed that followed the key, see
     * docs/engine.md).
     */
    static void workload(Tree t, Tree other, Acks acks, Acks otherAcks, Random rnd, int ops, boolean conditionals) {
        for (int i = 0; i < ops; i++) {
            String k = "k" + rnd.nextInt(60);
            int op = rnd.nextInt(10);
            if (!conditionals && (op == 4 || op == 5)) {
                op = 0;
            }
            switch (op) {
                case 0, 1, 2 -> acks.put(k, t.put(k, b("v" + i)));
                case 3 -> {
                    t.delete(k);
                    acks.delete(k);
                }
                case 4 -> { // putIfVersion with the right version (or absent) and with a wrong one
                    Versioned cur = t.getVersioned(k).orElse(null);
                    long expected = cur == null ? 0 : cur.version();
                    boolean right = rnd.nextBoolean();
                    boolean ok = t.putIfVersion(k, b("c" + i), right ? expected : expected + 7);
                    assertThat(ok).isEqualTo(right);
                    if (ok) {
                        acks.put(k, t.getVersioned(k).orElseThrow().version());
                    }
                }
                case 5 -> {
                    boolean ok = t.putIfAbsent(k, b("a" + i));
                    if (ok) {
                        acks.put(k, t.getVersioned(k).orElseThrow().version());
                    }
                }
                case 6, 7 -> { // an atomic write over a few keys (one or several partitions)
                    Map<String, byte[]> m = new LinkedHashMap<>();
                    int n = 1 + rnd.nextInt(4);
                    for (int j = 0; j < n; j++) {
                        m.put("k" + rnd.nextInt(60), b("t" + i));
                    }
                    long v = t.putAllAtomic(m);
                    m.keySet().forEach(x -> acks.put(x, v));
                    acks.atomics.put(v, new ArrayList<>(m.keySet()));
                }
                case 8 -> { // cross-tree atomic write with a delete
                    String k2 = "k" + rnd.nextInt(60);
                    long v = t.atomic().put(t, k, b("x" + i)).delete(other, k2).commit().version();
                    acks.put(k, v);
                    otherAcks.delete(k2);
                    acks.atomics.put(v, List.of(k));
                }
                default -> { // an atomic write whose precondition fails: aborted, never in the feed
                    try {
                        int n = rnd.nextInt(60);
                        t.atomic().put("k" + n, b("never")).put("k" + (n + 1) % 60, b("never"))
                                .expectVersion(k, 123).commit();
                        throw new AssertionError("precondition should fail");
                    } catch (PreconditionFailedException expected) {
                        // nothing written
                    }
                }
            }
        }
    }

    @Test
    void feedFromTheBeginningHoldsEveryAcknowledgedWriteInOrderAndAtomicWritesWhole() {
        InMemoryStorage s = new InMemoryStorage();
        try (Lattice l = memory(s, LatticeConfig.builder().partitions(4))) {
            Tree t = l.tree("orders");
            Tree other = l.tree("other");
            Acks acks = new Acks();
            Acks otherAcks = new Acks();
            workload(t, other, acks, otherAcks, new Random(7), 1500, true);
            try (ChangeCursor c = t.changes(ChangePosition.beginning())) {
                List<List<Change>> batches = drain(c, 200);
                assertLogOrder(batches);
                List<Change> all = flat(batches);
                assertThat(perKey(all)).isEqualTo(acks.perKey);
                assertThat(all).noneMatch(x -> x.value() != null && new String(x.value(), StandardCharsets.UTF_8)
                        .equals("never"));
                // atomic writes whole: per partition, all of one write's changes in one batch, one version
                for (List<Change> batch : batches) {
                    for (Change x : batch) {
                        if (x.atomicWriteId() != null) {
                            List<String> keys = acks.atomics.get(x.version());
                            assertThat(keys).as("atomic write of version %d", x.version()).isNotNull();
                            for (String k : keys) {
                                if (((TreeImpl) t).partitionOf(k) == x.partition()) {
                                    assertThat(batch).anyMatch(y -> y.key().equals(k) && y.version() == x.version());
                                }
                            }
                        }
                    }
                }
                Map<String, FeedChecks.Val> model = new TreeMap<>();
                apply(model, new HashMap<>(), all);
                assertSameState(model, scan(t));
                // the position covers every entry: nothing more, and "now" is the same place
                assertThat(c.poll(Duration.ZERO)).isEmpty();
                try (ChangeCursor now = t.changes(ChangePosition.now())) {
                    assertThat(now.position()).isEqualTo(c.position());
                }
            }
            try (ChangeCursor c = other.changes(ChangePosition.beginning())) {
                assertThat(perKey(flat(drain(c, 200)))).isEqualTo(otherAcks.perKey);
            }
        }
    }

    @Test
    void aConsumerResumesFromItsStoredPositionAcrossRestartsWithoutGapOrDuplicate() {
        String uri = "chronicle:" + dir.resolve("data");
        Random rnd = new Random(11);
        Acks acks = new Acks();
        Acks otherAcks = new Acks();
        List<Change> seen = new ArrayList<>();
        LatticeConfig.Builder cfg = LatticeConfig.builder().uri(uri).partitions(3).checkpointEveryEntries(100);
        try (Lattice l = Lattice.open(cfg.build())) {
            l.tree("orders").changes("c1", ChangePosition.beginning()).close(); // registered before any write
        }
        for (int round = 0; round < 8; round++) {
            try (Lattice l = Lattice.open(cfg.build())) {
                Tree t = l.tree("orders");
                workload(t, l.tree("other"), acks, otherAcks, rnd, 150, false);
                if (round % 2 == 0) {
                    ((TreeImpl) t).flushNow(10_000); // manifests and trims: the consumer's position holds them back
                }
                try (ChangeCursor c = t.changes("c1", ChangePosition.now())) {
                    ChangePosition stored = l.changeConsumers("orders").get("c1");
                    assertThat(c.position()).isEqualTo(stored);
                    seen.removeIf(x -> x.offset() > stored.offset(x.partition())); // processed but not committed
                    int batches = rnd.nextInt(200);
                    for (int i = 0; i < batches; i++) {
                        List<Change> batch = c.poll(Duration.ofMillis(50));
                        seen.addAll(batch);
                        if (rnd.nextInt(4) == 0) {
                            c.commit();
                        }
                    }
                }
            }
        }
        try (Lattice l = Lattice.open(cfg.build())) {
            Tree t = l.tree("orders");
            try (ChangeCursor c = t.changes("c1", ChangePosition.beginning())) {
                ChangePosition stored = c.position();
                seen.removeIf(x -> x.offset() > stored.offset(x.partition()));
                seen.addAll(flat(drain(c, 200)));
                c.commit();
            }
            assertThat(perKey(seen)).isEqualTo(acks.perKey);
            Map<String, FeedChecks.Val> model = new TreeMap<>();
            apply(model, new HashMap<>(), seen);
            assertSameState(model, scan(t));
            assertThat(l.removeChangeConsumer("orders", "c1")).isTrue();
            assertThat(l.changeConsumers("orders")).isEmpty();
        }
    }

    @Test
    void positionsSerialise() {
        ChangePosition p = ChangePosition.of(-1, 0, 42);
        assertThat(p.toString()).isEqualTo("v1:-1,0,42");
        assertThat(ChangePosition.parse(p.toString())).isEqualTo(p);
        assertThat(ChangePosition.fromBytes(p.toBytes())).isEqualTo(p);
        assertThat(ChangePosition.parse("v1:beginning").isBeginning()).isTrue();
        assertThat(ChangePosition.parse("v1:now").isNow()).isTrue();
        assertThat(ChangePosition.beginning().offset(5)).isEqualTo(-1);
        assertThat(p.with(2, 50).offset(2)).isEqualTo(50);
        assertThatThrownBy(() -> ChangePosition.parse("v2:1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChangePosition.parse("v1:1,x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChangePosition.of(-2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChangePosition.now().offset(0)).isInstanceOf(IllegalStateException.class);
        try (Lattice l = memory(new InMemoryStorage(), LatticeConfig.builder().partitions(2))) {
            Tree t = l.tree("t");
            assertThatThrownBy(() -> t.changes(ChangePosition.of(1, 2, 3))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("3 partitions");
            assertThatThrownBy(() -> t.changes("bad name", ChangePosition.now()))
                    .isInstanceOf(IllegalArgumentException.class);
            ChangeCursor c = t.changes(ChangePosition.now());
            assertThatThrownBy(c::commit).isInstanceOf(IllegalStateException.class).hasMessageContaining("unregistered");
            c.close();
            assertThatThrownBy(() -> c.poll(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void trimWaitsForARegisteredConsumerUpToTheBoundThenItGetsATypedError() {
        InMemoryStorage s = new InMemoryStorage();
        LatticeConfig.Builder cfg = LatticeConfig.builder().partitions(1).changeFeedRetentionEntries(50);
        try (Lattice l = memory(s, cfg)) {
            TreeImpl t = (TreeImpl) l.tree("t");
            WalStorageProvider p = l.provider();
            LogId log = new LogId("t", 0);
            t.changes("slow", ChangePosition.beginning()).close();
            for (int i = 0; i < 30; i++) {
                t.put("k" + i, b("v"));
            }
            assertThat(t.flushNow(10_000)).isTrue();
            assertThat(p.checkpoints().latest(log).orElseThrow().throughOffset()).isEqualTo(29);
            assertThat(p.state(log).trimWatermark()).as("held at the consumer's position").isEqualTo(-1);
            try (ChangeCursor c = t.changes("slow", ChangePosition.beginning())) {
                assertThat(flat(drain(c, 100))).hasSize(30);
                c.commit();
                assertThat(c.position().offset(0)).isEqualTo(29);
            }
            for (int i = 0; i < 30; i++) {
                t.put("k" + i, b("w"));
            }
            assertThat(t.flushNow(10_000)).isTrue();
            assertThat(p.state(log).trimWatermark()).as("trimmed to the consumer's position").isEqualTo(29);
            for (int i = 0; i < 200; i++) {
                t.put("m" + i, b("x"));
            }
            assertThat(t.flushNow(10_000)).isTrue();
            long watermark = p.state(log).trimWatermark();
            assertThat(watermark).as("past the bound: trimmed to 50 entries below the checkpoint").isEqualTo(259 - 50);
            try (ChangeCursor c = t.changes("slow", ChangePosition.beginning())) {
                assertThatThrownBy(() -> c.poll(Duration.ofMillis(10))).isInstanceOfSatisfying(
                        ChangeFeedTrimmedException.class, e -> {
                            assertThat(e.tree()).isEqualTo("t");
                            assertThat(e.partition()).isZero();
                            assertThat(e.position()).isEqualTo(29);
                            assertThat(e.trimWatermark()).isEqualTo(watermark);
                        });
            }
            assertThatThrownBy(() -> t.changes(ChangePosition.beginning()).poll(Duration.ZERO))
                    .isInstanceOf(ChangeFeedTrimmedException.class);
            // start over: a snapshot and its position
            Map<String, FeedChecks.Val> model = new TreeMap<>();
            ChangePosition from;
            try (ChangeSnapshot snap = t.snapshotWithPosition(null, null)) {
                from = snap.position();
                snap.cursor().forEachRemaining(e -> model.put(e.key(), new FeedChecks.Val(e.value(), e.version())));
            }
            t.put("after", b("y"));
            t.delete("k3");
            try (ChangeCursor c = t.changes("slow2", from)) {
                List<Change> rest = flat(drain(c, 100));
                assertThat(rest).extracting(Change::key).containsExactly("after", "k3");
                apply(model, new HashMap<>(), rest);
            }
            assertSameState(model, scan(t));
        }
    }

    @Test
    void aSnapshotWithPositionThenTheFeedGivesTheTreeWhileWritersRun() throws Exception {
        try (Lattice l = memory(new InMemoryStorage(), LatticeConfig.builder().partitions(4))) {
            Tree t = l.tree("t");
            for (int i = 0; i < 500; i++) {
                t.put("k" + i, b("v" + i));
            }
            AtomicBoolean stop = new AtomicBoolean();
            Thread w = new Thread(() -> {
                Random r = new Random(3);
                int i = 0;
                while (!stop.get()) {
                    String k = "k" + r.nextInt(600);
                    switch (r.nextInt(3)) {
                        case 0 -> t.put(k, b("w" + i));
                        case 1 -> t.delete(k);
                        default -> t.putAllAtomic(Map.of(k, b("a" + i), "k" + r.nextInt(600), b("a" + i)));
                    }
                    i++;
                }
            });
            w.start();
            Thread.sleep(50);
            Map<String, FeedChecks.Val> model = new TreeMap<>();
            ChangePosition from;
            try (ChangeSnapshot snap = t.snapshotWithPosition(null, null)) {
                from = snap.position();
                while (snap.cursor().hasNext()) {
                    TreeEntry e = snap.cursor().next();
                    model.put(e.key(), new FeedChecks.Val(e.value(), e.version()));
                }
            }
            Thread.sleep(50);
            stop.set(true);
            w.join();
            try (ChangeCursor c = t.changes(from)) {
                apply(model, new HashMap<>(), flat(drain(c, 200)));
            }
            assertSameState(model, scan(t));
        }
    }

    @Test
    void anUnregisteredFeedWritesNothingAndAFeedOfAClosedTreeClaimsNothing() {
        InMemoryStorage s = new InMemoryStorage();
        try (Lattice owner = memory(s, LatticeConfig.builder().partitions(2))) {
            Tree t = owner.tree("t");
            t.put("a", b("1"));
            long epoch = owner.provider().state(new LogId("t", 0)).epoch();
            try (Lattice reader = memory(s, LatticeConfig.builder())) {
                try (ChangeCursor c = reader.changes("t", ChangePosition.beginning())) {
                    assertThat(flat(drain(c, 100))).extracting(Change::key).containsExactly("a");
                    t.put("b", b("2")); // the owner is not fenced
                    assertThat(flat(drain(c, 100))).extracting(Change::key).containsExactly("b");
                }
                assertThat(reader.provider().state(new LogId("t", 0)).epoch()).isEqualTo(epoch);
                assertThat(reader.provider().state(FeedConsumers.LOG_ID).committedTail()).isEqualTo(-1);
                assertThatThrownBy(() -> reader.changes("nope", ChangePosition.now()))
                        .isInstanceOf(NoSuchTreeException.class);
            }
            try (ChangeCursor c = t.changes(ChangePosition.now())) {
                assertThat(c.poll(Duration.ofMillis(20))).isEmpty();
            }
            assertThat(owner.provider().state(FeedConsumers.LOG_ID).committedTail()).isEqualTo(-1);
            assertThat(owner.provider().state(FeedConsumers.LOG_ID).epoch()).isZero();
        }
    }

    @Test
    void aReadOnlyFollowerTailsTheFeedAndSnapshotsWithoutClaimingOrWriting() {
        InMemoryStorage s = new InMemoryStorage();
        try (Lattice owner = memory(s, LatticeConfig.builder().partitions(2))) {
            Tree t = owner.tree("t");
            for (int i = 0; i < 20; i++) {
                t.put("k" + i, b("v" + i));
            }
            long epoch = owner.provider().state(new LogId("t", 1)).epoch();
            try (LatticeFollower f = Lattice.openReadOnly(LatticeConfig.builder()
                    .provider(new InMemoryWalStorageProvider(s), true).build())) {
                Tree ft = f.tree("t");
                assertThat(f.awaitCaughtUp("t", 10_000)).isTrue();
                Map<String, FeedChecks.Val> model = new TreeMap<>();
                ChangePosition from;
                try (ChangeSnapshot snap = ft.snapshotWithPosition(null, null)) {
                    from = snap.position();
                    snap.cursor().forEachRemaining(e -> model.put(e.key(), new FeedChecks.Val(e.value(), e.version())));
                }
                assertThat(model).hasSize(20);
                t.put("k1", b("new"));
                t.delete("k2");
                try (ChangeCursor c = ft.changes(from)) {
                    List<Change> rest = flat(drain(c, 100));
                    assertThat(rest).extracting(Change::key).containsExactlyInAnyOrder("k1", "k2");
                    apply(model, new HashMap<>(), rest);
                }
                assertSameState(model, scan(t));
                try (ChangeCursor c = ft.changes(ChangePosition.beginning())) {
                    assertThat(flat(drain(c, 100))).hasSize(22);
                }
            }
            assertThat(owner.provider().state(new LogId("t", 1)).epoch()).isEqualTo(epoch);
            assertThat(owner.provider().state(FeedConsumers.LOG_ID).committedTail()).isEqualTo(-1);
            t.put("still", b("owner")); // never fenced
        }
    }

    @Test
    void conditionalWritesAfterAResumeAreDecidedFromTheOwnersState() {
        try (Lattice l = memory(new InMemoryStorage(), LatticeConfig.builder().partitions(1))) {
            Tree t = l.tree("t");
            long a1 = t.put("a", b("1"));
            t.put("b", b("1"));
            ChangePosition start = t.changes(ChangePosition.now()).position();
            assertThat(t.putIfVersion("a", b("2"), a1)).isTrue();        // untracked: the key still has its version
            assertThat(t.putIfVersion("a", b("3"), a1)).isFalse();       // tracked by now
            assertThat(t.putIfAbsent("b", b("2"))).isFalse();            // unchanged since the start: present
            assertThat(t.putIfAbsent("c", b("1"))).isTrue();
            long c1 = t.getVersioned("c").orElseThrow().version();
            assertThat(t.putIfVersion("d", b("1"), c1)).isFalse();       // expects a version newer than the start
            try (ChangeCursor c = t.changes(start)) {
                List<Change> got = flat(drain(c, 100));
                assertThat(got).extracting(x -> x.key() + "=" + new String(x.value(), StandardCharsets.UTF_8))
                        .containsExactly("a=2", "c=1");
            }
        }
    }

    @Test
    void droppingATreeUnregistersItsConsumers() {
        try (Lattice l = memory(new InMemoryStorage(), LatticeConfig.builder().partitions(1))) {
            l.tree("t").changes("c", ChangePosition.beginning()).close();
            assertThat(l.changeConsumers("t")).containsOnlyKeys("c");
            l.dropTree("t");
            assertThat(l.changeConsumers("t")).isEmpty();
        }
    }

    // ---------------------------------------------------------------- hand-written entries

    private static byte[] entry(byte kind, long version, byte[]... mutations) {
        int size = WalRecord.HEADER_BYTES + WalRecord.TRAILER_BYTES;
        for (byte[] m : mutations) {
            size += m.length;
        }
        ByteBuffer bb = ByteBuffer.allocate(size);
        bb.put(WalRecord.MAGIC).put(WalRecord.FORMAT).put(kind).put((byte) 0).putLong(0).putInt(mutations.length);
        for (byte[] m : mutations) {
            bb.put(m);
        }
        byte[] e = bb.array();
        WalRecord.seal(e, version);
        return e;
    }

    private static byte[] mutation(WalRecord.Mutation m) {
        ByteBuffer bb = ByteBuffer.allocate(m.encodedSize());
        m.writeTo(bb);
        return bb.array();
    }

    private static void append(WalStorageProvider p, LogId log, byte[] entry) {
        Fence f = p.claim(log);
        p.append(log, f, EncodedBatch.of(p.state(log).committedTail() + 1, List.of(entry)));
    }

    @Test
    void putsWithATimeToLiveAndRangeDeletesAreDelivered() {
        InMemoryStorage s = new InMemoryStorage();
        try (Lattice l = memory(s, LatticeConfig.builder().partitions(1))) {
            Tree t = l.tree("t");
            t.changes("feeder", ChangePosition.beginning()).close(); // holds the close's trim back
            t.put("a", b("1"));
        }
        try (Lattice l = memory(s, LatticeConfig.builder())) {
            LogId log = new LogId("t", 0);
            append(l.provider(), log, entry(WalRecord.KIND_MUTATIONS, 900, FeedDecoder.putTtl("b", b("2"), 123_456L)));
            append(l.provider(), log, entry(WalRecord.KIND_MUTATIONS, 901, FeedDecoder.deleteRange("a", "c")));
            try (ChangeCursor c = l.changes("t", "feeder", ChangePosition.beginning())) {
                List<Change> all = flat(drain(c, 100));
                assertThat(all).hasSize(3);
                assertThat(all.get(1).kind()).isEqualTo(Change.Kind.PUT);
                assertThat(all.get(1).key()).isEqualTo("b");
                assertThat(all.get(1).expiresAtMillis()).isEqualTo(123_456L);
                assertThat(all.get(1).version()).isEqualTo(900);
                assertThat(all.get(2).kind()).isEqualTo(Change.Kind.DELETE_RANGE);
                assertThat(all.get(2).key()).isEqualTo("a");
                assertThat(all.get(2).toKeyExclusive()).isEqualTo("c");
                assertThat(all.get(2).offset()).isEqualTo(2);
            }
        }
    }

    @Test
    void aMultiLogWriteAppearsOnceItsOutcomeIsLoggedAndNeverWhenAborted() {
        InMemoryStorage s = new InMemoryStorage();
        try (Lattice l = memory(s, LatticeConfig.builder().partitions(1))) {
            Tree t = l.tree("t");
            t.changes("feeder", ChangePosition.beginning()).close(); // holds the close's trim back
            t.put("a", b("1"));
        }
        try (Lattice l = memory(s, LatticeConfig.builder())) {
            WalStorageProvider p = l.provider();
            LogId log = new LogId("t", 0);
            LogId coordinator = new LogId("u", 0);
            byte[] fields = PartitionState.prepareFields(coordinator);
            append(p, log, entry(WalRecord.KIND_PREPARE, 0, mutation(WalRecord.Mutation.txn("aa", fields)),
                    mutation(WalRecord.Mutation.put("x", b("x"), b("1"))),
                    mutation(WalRecord.Mutation.delete("y", b("y")))));
            append(p, log, entry(WalRecord.KIND_MUTATIONS, 950, mutation(WalRecord.Mutation.put("z", b("z"), b("1")))));
            ChangeCursor fromNow = l.changes("t", ChangePosition.now());
            assertThat(fromNow.position().offset(0)).as("'now' stops before the unresolved prepare").isZero();
            try (ChangeCursor c = l.changes("t", "feeder", ChangePosition.beginning())) {
                assertThat(flat(drain(c, 100))).extracting(Change::key).containsExactly("a");
                assertThat(c.position().offset(0)).as("waits at the unresolved prepare").isZero();
                append(p, log, entry(WalRecord.KIND_RESOLVE, 960, mutation(WalRecord.Mutation.txn("aa",
                        PartitionState.resolveFields(true, 955, coordinator)))));
                List<Change> got = c.poll(Duration.ofSeconds(5));
                assertThat(got).extracting(Change::key).containsExactly("x", "y");
                assertThat(got).allMatch(x -> x.version() == 955 && "aa".equals(x.atomicWriteId()) && x.offset() == 1);
                assertThat(c.poll(Duration.ofSeconds(5))).extracting(Change::key).containsExactly("z");
                assertThat(flat(drain(fromNow, 100))).extracting(Change::key).containsExactly("x", "y", "z");
                fromNow.close();
                // an aborted one, and one whose outcome is the decision in its own (coordinator) log
                append(p, log, entry(WalRecord.KIND_PREPARE, 0, mutation(WalRecord.Mutation.txn("bb", fields)),
                        mutation(WalRecord.Mutation.put("never", b("never"), b("1")))));
                append(p, log, entry(WalRecord.KIND_RESOLVE, 970, mutation(WalRecord.Mutation.txn("bb",
                        PartitionState.resolveFields(false, 0, coordinator)))));
                append(p, log, entry(WalRecord.KIND_PREPARE, 0, mutation(WalRecord.Mutation.txn("cc",
                        PartitionState.prepareFields(log))), mutation(WalRecord.Mutation.put("own", b("own"), b("1")))));
                append(p, log, entry(WalRecord.KIND_DECISION, 990, mutation(WalRecord.Mutation.txn("cc",
                        PartitionState.decisionFields(true, 1L, List.of(coordinator))))));
                List<Change> rest = flat(drain(c, 100));
                assertThat(rest).extracting(Change::key).containsExactly("own");
                assertThat(rest.get(0).version()).isEqualTo(990);
                c.commit();
            }
            assertThat(l.changeConsumers("t").get("feeder")).isEqualTo(ChangePosition.of(7));
        }
    }
}
