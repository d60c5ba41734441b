package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static dev.lattice.engine.EngineBasicsTest.open;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random operation sequences (point writes, conditional writes, atomic writes with passing and failing
 * preconditions, mixed puts and deletes) against a model map, with clean reopens, crashes (a new process opens the
 * storage before the old one closes) and checkpoints in between; range deletes, values with a time-to-live and a
 * clock that moves (an injected {@link ManualClock}).
 */
class ModelPropertyTest {

    record Op(int kind, String key, byte[] value) {
    }

    @Provide
    Arbitrary<Op> ops() {
        Arbitrary<Integer> kind = Arbitraries.integers().between(0, 12);
        Arbitrary<String> key = Arbitraries.strings().withChars("abcdé€").ofMinLength(1).ofMaxLength(3);
        Arbitrary<byte[]> value = Arbitraries.bytes().array(byte[].class).ofMaxSize(20);
        return Combinators.combine(kind, key, value).as(Op::new);
    }

    @Property(tries = 40)
    void engineMatchesModelAcrossReopens(@ForAll @Size(max = 120) List<@net.jqwik.api.From("ops") Op> ops,
                                         @ForAll("checkpointEvery") int checkpointEvery) {
        check(ops, LatticeConfig.builder().partitions(3).checkpointEveryEntries(checkpointEvery), false);
    }

    /**
     * The same over memtables, flushes and compactions: tiny memtables and runs, compaction after two level-0 runs,
     * and explicit flushes (operation 5) between writes, reopens and crashes.
     */
    @Property(tries = 40)
    void engineMatchesModelAcrossFlushesAndCompactions(
            @ForAll @Size(max = 150) List<@net.jqwik.api.From("ops") Op> ops,
            @ForAll("checkpointEvery") int checkpointEvery) {
        check(ops, LatticeConfig.builder().partitions(3).checkpointEveryEntries(checkpointEvery)
                .memtableBytes(64 << 10).targetRunBytes(64 << 10).level0CompactionTrigger(2).levelSizeRatio(2)
                .blockCacheBytes(0), true);
    }

    private void check(List<Op> ops, LatticeConfig.Builder cfg, boolean flushes) {
        InMemoryStorage storage = new InMemoryStorage();
        ManualClock clock = new ManualClock();
        cfg.clock(clock);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Map<String, Long> versions = new TreeMap<>();
        Map<String, Long> expiry = new TreeMap<>();
        Lattice l = open(storage, cfg);
        Tree t = l.tree("m");
        try {
            for (Op op : ops) {
                // what expired is absent; every later write of a key replaces its expiry
                expiry.entrySet().removeIf(e -> {
                    if (e.getValue() <= clock.millis()) {
                        model.remove(e.getKey());
                        versions.remove(e.getKey());
                        return true;
                    }
                    return false;
                });
                // the keys an op writes (without a ttl) lose their expiry; absent keys have none
                switch (op.kind()) {
                    case 0, 1, 2, 4 -> expiry.remove(op.key());
                    case 6 -> List.of(op.key(), op.key() + "x", op.key() + "y").forEach(expiry::remove);
                    case 8 -> List.of(op.key(), op.key() + "x", op.key() + "z").forEach(expiry::remove);
                    case 11 -> {
                        if (op.value().length % 3 == 0) {
                            expiry.remove(op.key() + "x");
                        }
                    }
                    default -> {
                    }
                }
                switch (op.kind() == 5 && !flushes ? 9 : op.kind()) { // 5: a flush, else a reopen
                    case 0, 1 -> {
                        versions.put(op.key(), t.put(op.key(), op.value()));
                        model.put(op.key(), op.value());
                    }
                    case 10 -> { // range delete of the key and every key it prefixes below "y"
                        String to = op.key() + "y";
                        t.deleteRange(op.key(), to);
                        model.subMap(op.key(), to).clear();
                        versions.keySet().removeIf(k -> k.compareTo(op.key()) >= 0 && k.compareTo(to) < 0);
                        expiry.keySet().removeIf(k -> k.compareTo(op.key()) >= 0 && k.compareTo(to) < 0);
                    }
                    case 11 -> { // a value with a time-to-live: single, or in an atomic write with another key
                        long ttl = 1 + op.value().length * 5L;
                        if (op.value().length % 3 == 0) {
                            long v = t.atomic().put(op.key(), op.value(), java.time.Duration.ofMillis(ttl))
                                    .put(op.key() + "x", op.value()).commit().version();
                            versions.put(op.key(), v);
                            versions.put(op.key() + "x", v);
                            model.put(op.key() + "x", op.value());
                        } else {
                            versions.put(op.key(), t.put(op.key(), op.value(), java.time.Duration.ofMillis(ttl)));
                        }
                        model.put(op.key(), op.value());
                        expiry.put(op.key(), clock.millis() + ttl);
                        assertThat(t.getVersioned(op.key()).orElseThrow().expiresAt())
                                .contains(java.time.Instant.ofEpochMilli(clock.millis() + ttl));
                    }
                    case 12 -> clock.advance(op.value().length * 4L); // time passes (0..80 ms)
                    case 2 -> {
                        boolean had = model.containsKey(op.key());
                        assertThat(t.delete(op.key())).isEqualTo(had);
                        model.remove(op.key());
                        versions.remove(op.key());
                    }
                    case 3 -> {
                        boolean absent = !model.containsKey(op.key());
                        assertThat(t.putIfAbsent(op.key(), op.value())).isEqualTo(absent);
                        if (absent) {
                            model.put(op.key(), op.value());
                            versions.put(op.key(), t.getVersioned(op.key()).orElseThrow().version());
                        }
                    }
                    case 4 -> {
                        long expected = versions.getOrDefault(op.key(), 0L);
                        assertThat(t.putIfVersion(op.key(), op.value(), expected)).isTrue();
                        model.put(op.key(), op.value());
                        versions.put(op.key(), t.getVersioned(op.key()).orElseThrow().version());
                    }
                    case 6 -> { // atomic over three keys (usually several partitions), precondition holds
                        long expected = versions.getOrDefault(op.key(), 0L);
                        List<String> ks = List.of(op.key(), op.key() + "x", op.key() + "y");
                        AtomicWrite w = t.atomic().expectVersion(op.key(), expected);
                        ks.forEach(k -> w.put(k, op.value()));
                        long v = w.commit().version();
                        ks.forEach(k -> {
                            model.put(k, op.value());
                            versions.put(k, v);
                        });
                    }
                    case 7 -> { // atomic whose precondition fails: nothing changes
                        long wrong = versions.getOrDefault(op.key(), 0L) + 1;
                        Map<String, byte[]> before = new TreeMap<>(model);
                        Tree tt = t;
                        org.assertj.core.api.Assertions.assertThatThrownBy(() -> tt.atomic()
                                .expectVersion(op.key(), wrong).delete(op.key()).put(op.key() + "z", op.value())
                                .commit()).isInstanceOf(PreconditionFailedException.class);
                        assertThat(model).isEqualTo(before);
                        assertThat(t.get(op.key() + "z").orElse(null)).isEqualTo(model.get(op.key() + "z"));
                    }
                    case 8 -> { // atomic mixed delete and puts
                        long v = t.atomic().delete(op.key()).put(op.key() + "x", op.value())
                                .put(op.key() + "z", op.value()).commit().version();
                        model.remove(op.key());
                        versions.remove(op.key());
                        model.put(op.key() + "x", op.value());
                        model.put(op.key() + "z", op.value());
                        versions.put(op.key() + "x", v);
                        versions.put(op.key() + "z", v);
                    }
                    case 5 -> assertThat(((TreeImpl) t).flushNow(10_000)).as("flush").isTrue();
                    default -> {
                        if (op.value().length % 2 == 0) {
                            l.close();
                            l = open(storage, cfg);
                        } else { // crash: the next process opens (and fences) before the old one is gone
                            Lattice old = l;
                            l = open(storage, cfg);
                            old.close();
                        }
                        t = l.tree("m");
                    }
                }
                for (String k : List.of(op.key(), op.key() + "x", op.key() + "y", op.key() + "z")) {
                    Optional<byte[]> got = t.get(k);
                    assertThat(got.orElse(null)).as(k).isEqualTo(model.get(k) == null || expired(expiry, k, clock)
                            ? null : model.get(k));
                }
                if (op.kind() >= 10) {
                    long live = model.keySet().stream().filter(k -> !expired(expiry, k, clock)).count();
                    assertThat(t.count()).as("count").isEqualTo(live);
                }
            }
            l.close();
            l = open(storage, cfg);
            t = l.tree("m");
            expiry.forEach((k, at) -> {
                if (at <= clock.millis()) {
                    model.remove(k);
                    versions.remove(k);
                }
            });
            List<String> keys = new ArrayList<>();
            try (ScanCursor c = t.scan(null, null, false)) {
                while (c.hasNext()) {
                    TreeEntry e = c.next();
                    keys.add(e.key());
                    assertThat(e.value()).isEqualTo(model.get(e.key()));
                    assertThat(e.version()).isEqualTo(versions.get(e.key()));
                }
            }
            assertThat(keys).containsExactlyElementsOf(model.keySet());
        } finally {
            l.close();
        }
    }

    private static boolean expired(Map<String, Long> expiry, String k, ManualClock clock) {
        Long at = expiry.get(k);
        return at != null && at <= clock.millis();
    }

    @Provide
    Arbitrary<Integer> checkpointEvery() {
        return Arbitraries.of(1, 3, 1000);
    }
}
