package dev.lattice.cluster;

import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;
import dev.lattice.engine.Versioned;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Point reads batched per log ({@link ReadBatcher}, {@link Op#GET_BATCH}) on two real Pekko nodes in one JVM (one
 * embedded PostgreSQL, every message serialized): concurrent readers share messages and each still gets its key's
 * value, version and expiry (absent and deleted keys empty); large values cut a batch at the message budget and the
 * rest follow; beside a member of protocol level 2 nothing is batched, and when a node sends batches anyway (its
 * fallback turned off) the older owner's refusal sends the reads one {@link Op#GET} each, within a request timeout.
 */
class ClusterReadBatchTest {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);
    private final List<LatticeCluster> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        for (LatticeCluster n : nodes) {
            n.close();
        }
    }

    private void startTwo(int secondLevel) {
        String uri = TestCluster.freshPostgresUri();
        int seed = TestCluster.freePort();
        for (int i = 0; i < 2; i++) {
            int level = i == 0 ? PeerProtocols.CURRENT : secondLevel;
            String extra = "pekko.actor.serialize-messages = on\n"
                    + (level < PeerProtocols.CURRENT ? PeerProtocols.LEVEL_SETTING + " = " + level + "\n" : "");
            nodes.add(LatticeCluster.start(TestCluster.node(uri, i == 0 ? seed : TestCluster.freePort(), seed, extra)
                    .requestTimeout(REQUEST_TIMEOUT).build()));
        }
        for (LatticeCluster n : nodes) {
            assertThat(n.awaitMembers(2, Duration.ofSeconds(60))).as("cluster formed").isTrue();
        }
    }

    /** What a read of each key must return: the put's value and version, or nothing. */
    private static final class Expected {
        final Map<String, Optional<Versioned>> byKey = new ConcurrentHashMap<>();
        final List<String> keys = new ArrayList<>();

        void put(String key, Optional<Versioned> v) {
            byKey.put(key, v);
            keys.add(key);
        }
    }

    private static Expected load(Tree t, int large) {
        Expected e = new Expected();
        for (int i = 0; i < 60; i++) {
            String k = "k-" + i;
            byte[] v = ("v-" + i).getBytes(StandardCharsets.UTF_8);
            e.put(k, Optional.of(new Versioned(v, t.put(k, v), 0)));
        }
        for (int i = 0; i < 6; i++) {
            String k = "gone-" + i;
            t.put(k, new byte[] {1});
            t.delete(k);
            e.put(k, Optional.empty());
            e.put("absent-" + i, Optional.empty());
        }
        byte[] ttl = {7};
        long ttlVersion = t.put("ttl", ttl, Duration.ofHours(1));
        e.put("ttl", Optional.of(new Versioned(ttl, ttlVersion, 1))); // expiry checked as non-zero
        for (int i = 0; i < large; i++) {
            String k = "large-" + i;
            byte[] v = new byte[90 * 1024];
            Arrays.fill(v, (byte) i);
            e.put(k, Optional.of(new Versioned(v, t.put(k, v), 0)));
        }
        return e;
    }

    /** Reads {@code keys} from {@code threads} threads, half blocking, half async; returns the mismatches. */
    private static List<String> readConcurrently(Tree t, Expected e, List<String> keys, int threads, int each)
            throws Exception {
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int th = 0; th < threads; th++) {
                boolean async = th % 2 == 1;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        String k = keys.get(ThreadLocalRandom.current().nextInt(keys.size()));
                        long t0 = System.nanoTime();
                        Optional<Versioned> got = async ? t.getVersionedAsync(k).join() : t.getVersioned(k);
                        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                        String bad = mismatch(e.byKey.get(k), got);
                        if (bad != null) {
                            wrong.add(k + ": " + bad);
                        }
                        if (ms >= REQUEST_TIMEOUT.toMillis()) {
                            wrong.add(k + ": took " + ms + " ms, a request timeout or more");
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return new ArrayList<>(wrong);
    }

    private static String mismatch(Optional<Versioned> want, Optional<Versioned> got) {
        if (want.isEmpty() || got.isEmpty()) {
            return want.isPresent() == got.isPresent() ? null : "expected " + want.isPresent() + ", got " + got;
        }
        Versioned w = want.get();
        Versioned g = got.get();
        if (!Arrays.equals(w.value(), g.value())) {
            return "value differs";
        }
        if (w.version() != g.version()) {
            return "version " + g.version() + ", expected " + w.version();
        }
        if ((w.expiresAtMillis() != 0) != (g.expiresAtMillis() != 0)) {
            return "expiry " + g.expiresAtMillis();
        }
        return null;
    }

    @Test
    void concurrentReadsShareMessagesAndEachGetsItsKeysValueVersionAndExpiry() throws Exception {
        startTwo(PeerProtocols.CURRENT);
        Tree via0 = nodes.get(0).tree("batched", TreeOptions.partitions(4));
        Expected e = load(via0, 8);
        assertThat(nodes.get(1).services().tree("batched").hostedPartitions())
                .as("node 1 hosts partitions: some batches cross the network").isNotEmpty();
        ReadBatcher reads = nodes.get(0).reads();

        List<String> wrong = readConcurrently(via0, e, e.keys, 16, 300);
        assertThat(wrong).as("reads answered wrong").isEmpty();
        ReadBatcher.Counts mixed = reads.counts();
        System.out.printf("[cluster read batches] %s over %d reads%n", mixed, 16 * 300);
        assertThat(mixed.batches()).as("batches sent by 16 concurrent readers").isPositive();
        assertThat(mixed.batchedReads()).as("reads per batch").isGreaterThanOrEqualTo(2 * mixed.batches());

        List<String> large = e.keys.stream().filter(k -> k.startsWith("large-")).toList();
        wrong = readConcurrently(via0, e, large, 16, 20);
        assertThat(wrong).as("reads of large values answered wrong").isEmpty();
        ReadBatcher.Counts after = reads.counts();
        System.out.printf("[cluster read batches] large values: %s%n", after);
        assertThat(after.cut()).as("batches of 90 KiB values cut at the message budget").isGreaterThan(mixed.cut());
        assertThat(after.fallbacks()).as("no owner refused a batch").isZero();

        // a lone read still goes alone, on the caller's thread
        java.util.concurrent.ThreadPoolExecutor replies =
                (java.util.concurrent.ThreadPoolExecutor) nodes.get(0).services().replies();
        long handedOff = replies.getTaskCount();
        for (int i = 0; i < 50; i++) {
            assertThat(via0.get("k-" + i)).isPresent();
        }
        assertThat(replies.getTaskCount() - handedOff).as("tasks handed to the reply threads by 50 lone reads")
                .isZero();
        assertThat(reads.counts().batches()).as("lone reads sent no batch").isEqualTo(after.batches());
    }

    @Test
    void besideAnOwnerOfLevelTwoReadsGoOneEachAndARefusedBatchFallsBackWithoutTimeout() throws Exception {
        startTwo(2);
        LatticeCluster upgraded = nodes.get(0);
        assertThat(upgraded.hostProtocolLevel()).as("the level-2 member is seen").isEqualTo(2);
        Tree via0 = upgraded.tree("mixed", TreeOptions.partitions(4));
        Expected e = load(via0, 0);
        assertThat(nodes.get(1).services().tree("mixed").hostedPartitions())
                .as("the level-2 node owns partitions").isNotEmpty();

        assertThat(readConcurrently(via0, e, e.keys, 16, 100)).as("reads answered wrong").isEmpty();
        assertThat(upgraded.reads().counts()).as("nothing batched while a level-2 member hosts")
                .isEqualTo(new ReadBatcher.Counts(0, 0, 0, 0));

        upgraded.services().protocols().assumeOwnLevel(true); // as a node without the fallback
        assertThat(readConcurrently(via0, e, e.keys, 16, 100)).as("reads answered wrong or late").isEmpty();
        ReadBatcher.Counts c = upgraded.reads().counts();
        System.out.printf("[cluster read batches] beside a level-2 owner, fallback off: %s%n", c);
        assertThat(c.fallbacks()).as("reads of batches the level-2 owner refused, sent again one each")
                .isPositive();
    }
}
