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

/** Random operation sequences against a model map, with reopens (and checkpoints) in between. */
class ModelPropertyTest {

    record Op(int kind, String key, byte[] value) {
    }

    @Provide
    Arbitrary<Op> ops() {
        Arbitrary<Integer> kind = Arbitraries.integers().between(0, 5);
        Arbitrary<String> key = Arbitraries.strings().withChars("abcdé€").ofMinLength(1).ofMaxLength(3);
        Arbitrary<byte[]> value = Arbitraries.bytes().array(byte[].class).ofMaxSize(20);
        return Combinators.combine(kind, key, value).as(Op::new);
    }

    @Property(tries = 40)
    void engineMatchesModelAcrossReopens(@ForAll @Size(max = 120) List<@net.jqwik.api.From("ops") Op> ops,
                                         @ForAll("checkpointEvery") int checkpointEvery) {
        InMemoryStorage storage = new InMemoryStorage();
        Map<String, byte[]> model = new TreeMap<>();
        Map<String, Long> versions = new TreeMap<>();
        LatticeConfig.Builder cfg = LatticeConfig.builder().partitions(3).checkpointEveryEntries(checkpointEvery);
        Lattice l = open(storage, cfg);
        Tree t = l.tree("m");
        try {
            for (Op op : ops) {
                switch (op.kind()) {
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
                    default -> {
                        l.close();
                        l = open(storage, cfg);
                        t = l.tree("m");
                    }
                }
                Optional<byte[]> got = t.get(op.key());
                assertThat(got.orElse(null)).isEqualTo(model.get(op.key()));
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
