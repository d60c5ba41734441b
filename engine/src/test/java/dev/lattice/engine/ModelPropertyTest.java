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
 * storage before the old one closes) and checkpoints in between.
 */
class ModelPropertyTest {

    record Op(int kind, String key, byte[] value) {
    }

    @Provide
    Arbitrary<Op> ops() {
        Arbitrary<Integer> kind = Arbitraries.integers().between(0, 8);
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
        Map<String, byte[]> model = new TreeMap<>();
        Map<String, Long> versions = new TreeMap<>();
        Lattice l = open(storage, cfg);
        Tree t = l.tree("m");
        try {
            for (Op op : ops) {
                switch (op.kind() == 5 && !flushes ? 9 : op.kind()) { // 5: a flush, else a reopen
                    case 0, 1 -> {
                        versions.put(op.key(), t.put(op.key(), op.value()));
                        model.put(op.key(), op.value());
                    }
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
                    assertThat(got.orElse(null)).as(k).isEqualTo(model.get(k));
                }
            }
            l.close();
            l = open(storage, cfg);
            t = l.tree("m");
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

    @Provide
    Arbitrary<Integer> checkpointEvery() {
        return Arbitraries.of(1, 3, 1000);
    }
}
