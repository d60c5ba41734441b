package dev.lattice.engine;

import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.FaultInjectingProvider.FaultRule;
import dev.lattice.testkit.SpiOperation;
import dev.lattice.spi.LogId;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Faults at every provider call of the atomic commit path (the participants' prepare and resolve entries, the
 * coordinator's decision entry; request failed before the provider saw it, or response lost after it acted), with
 * writers running concurrently: live and after a reopen (clean close, or a crash where the next process fences the
 * old one), every write is all or nothing, acknowledged writes are whole, writes reported failed are absent.
 */
class AtomicFaultInjectionTest {

    enum Outcome { ACKED, FAILED, UNKNOWN }

    static final int KEYS = 6;

    @ParameterizedTest(name = "{0} {1} on {2}, crash {3}")
    @CsvSource({
            "STAGE, BEFORE, participants, false", "STAGE, AFTER, participants, false",
            "COMMIT, BEFORE, participants, false", "COMMIT, AFTER, participants, true",
            "STAGE, BEFORE, coordinators, true", "STAGE, AFTER, coordinators, false",
            "COMMIT, BEFORE, coordinators, false", "COMMIT, AFTER, coordinators, true",
            "RECONCILE, BEFORE, participants, true", "COMMIT, BEFORE, all, true"})
    void everyWriteIsAllOrNothingUnderFaults(SpiOperation op, FaultInjectingProvider.Timing timing, String target,
                                             boolean crash) throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        FaultInjectingProvider faulty = new FaultInjectingProvider(new InMemoryWalStorageProvider(storage), 7);
        Map<Integer, Outcome> outcomes = new ConcurrentHashMap<>();
        Map<Integer, Long> versions = new ConcurrentHashMap<>();
        int writers = 3;
        int perWriter = 60;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        Lattice l = Lattice.open(LatticeConfig.builder().provider(faulty, true).partitions(4).maxRetries(0)
                .retryBackoff(Duration.ofMillis(1)).checkpointEveryEntries(40).build());
        try {
            Tree a = l.tree("a");
            Tree c = l.tree("c", 2);
            a.putAllAtomic(Map.of("warm", b("up")));
            l.atomic().put(a, "warm2", b("up")).put(c, "warm3", b("up")).commit();
            // every write touches tree a, so its coordinator (first participant in (tree, partition) order) is one
            // of a's logs: faults on a hit prepares, decisions and resolves; faults on c hit prepares and resolves
            switch (target) {
                case "coordinators" -> {
                    for (int p = 0; p < 4; p++) {
                        faulty.inject(new FaultRule(op, timing, Duration.ZERO, -1, 0, 0.15, new LogId("a", p)));
                    }
                }
                case "participants" -> {
                    for (int p = 0; p < 2; p++) {
                        faulty.inject(new FaultRule(op, timing, Duration.ZERO, -1, 0, 0.25, new LogId("c", p)));
                    }
                }
                default -> faulty.inject(new FaultRule(op, timing, Duration.ZERO, -1, 0, 0.15, null));
            }
            if (op == SpiOperation.RECONCILE) {
                faulty.inject(new FaultRule(SpiOperation.COMMIT, FaultInjectingProvider.Timing.AFTER, Duration.ZERO,
                        -1, 0, 0.15, null));
            }
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int id = w;
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < perWriter; i++) {
                        int n = id * 1000 + i;
                        AtomicWrite aw = l.atomic();
                        for (int k = 0; k < KEYS; k++) {
                            aw.put(k % 3 == 2 ? c : a, "w" + n + "-k" + k, b(Integer.toString(n)));
                        }
                        try {
                            versions.put(n, aw.commit().version());
                            outcomes.put(n, Outcome.ACKED);
                            assertThat(present(a, c, n)).as("acknowledged write %d is whole", n).isEqualTo(KEYS);
                        } catch (WriteFailedException | LatticeSaturatedException e) {
                            outcomes.put(n, Outcome.FAILED);
                            assertThat(present(a, c, n)).as("failed write %d is absent", n).isZero();
                        } catch (WriteOutcomeUnknownException e) {
                            outcomes.put(n, Outcome.UNKNOWN);
                            int p = present(a, c, n);
                            assertThat(p == 0 || p == KEYS).as("write %d shows %d of %d keys", n, p, KEYS).isTrue();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(120, TimeUnit.SECONDS);
            }
            assertThat(faulty.injectedFaultCount()).as("faults were injected").isGreaterThan(0);
            faulty.clearFaults();
        } finally {
            pool.shutdownNow();
            if (!crash) {
                l.close();
            }
        }
        // reopen (after a crash: the new process claims every log, fencing the old one out)
        try (Lattice again = Lattice.open(LatticeConfig.builder()
                .provider(new InMemoryWalStorageProvider(storage), true).build())) {
            Tree a = again.tree("a");
            Tree c = again.tree("c");
            int acked = 0;
            for (Map.Entry<Integer, Outcome> e : new TreeMap<>(outcomes).entrySet()) {
                int n = e.getKey();
                int p = present(a, c, n);
                switch (e.getValue()) {
                    case ACKED -> {
                        acked++;
                        if (p != KEYS) {
                            dump(storage, n);
                        }
                        assertThat(p).as("acknowledged write %d after reopen", n).isEqualTo(KEYS);
                        assertThat(a.getVersioned("w" + n + "-k0").orElseThrow().version()).isEqualTo(versions.get(n));
                    }
                    case FAILED -> assertThat(p).as("failed write %d after reopen", n).isZero();
                    case UNKNOWN -> assertThat(p == 0 || p == KEYS).as("write %d shows %d of %d keys after reopen",
                            n, p, KEYS).isTrue();
                }
            }
            assertThat(acked).as("some writes were acknowledged").isGreaterThan(10);
            assertThat(outcomes).as("every write has an outcome").hasSize(3 * 60);
            // and the tree takes new atomic writes on the same keys
            again.atomic().put(a, "w0-k0", b("new")).put(c, "w0-k2", b("new")).commit();
            assertThat(s(a.get("w0-k0").orElseThrow())).isEqualTo("new");
        }
    }

    static void dump(InMemoryStorage storage, int n) {
        var prov = new InMemoryWalStorageProvider(storage);
        for (LogId log : List.of(new LogId("c", 0), new LogId("c", 1), new LogId("a", 0), new LogId("a", 1))) {
            var st = prov.state(log);
            System.err.println("DUMP " + log + " " + st + " cp=" + prov.checkpoints().latest(log));
            long from = st.trimWatermark();
            while (true) {
                var page = prov.read(log, from, 1000, 1 << 24);
                if (page.isEmpty()) break;
                for (var e : page.entries()) {
                    var d = WalRecord.decode(log, e.offset(), e.payload());
                    StringBuilder sb = new StringBuilder();
                    for (var m : d.mutations()) sb.append(m.op()).append(':').append(m.key()).append(' ');
                    if (sb.toString().contains("w" + n + "-") || d.kind() >= 4)
                        System.err.println("  " + e.offset() + " kind " + d.kind() + " v" + d.version() + " " + sb);
                    from = e.offset();
                }
            }
        }
    }

    /** @return how many of write {@code n}'s keys hold its value */
    static int present(Tree a, Tree c, int n) {
        int count = 0;
        Set<String> vals = new HashSet<>();
        for (int k = 0; k < KEYS; k++) {
            var v = (k % 3 == 2 ? c : a).get("w" + n + "-k" + k);
            if (v.isPresent()) {
                count++;
                vals.add(s(v.get()));
            }
        }
        assertThat(vals).as("write %d's keys hold only its value", n).allMatch(x -> x.equals(Integer.toString(n)));
        return count;
    }
}
