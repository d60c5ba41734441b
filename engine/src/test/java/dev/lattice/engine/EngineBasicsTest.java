package dev.lattice.engine;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.UnknownSchemeException;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EngineBasicsTest {

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static Lattice open(InMemoryStorage storage) {
        return open(storage, LatticeConfig.builder());
    }

    static Lattice open(InMemoryStorage storage, LatticeConfig.Builder b) {
        return Lattice.open(b.provider(new InMemoryWalStorageProvider(storage), true).build());
    }

    @Test
    void pointOperationsAndVersions() {
        try (Lattice l = open(new InMemoryStorage())) {
            Tree t = l.tree("orders");
            assertThat(t.partitions()).isEqualTo(LatticeConfig.DEFAULT_PARTITIONS);
            assertThat(t.get("a")).isEmpty();
            assertThat(t.exists("a")).isFalse();
            long v1 = t.put("a", b("1"));
            assertThat(v1).isPositive();
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("1");
            assertThat(t.getVersioned("a").orElseThrow().version()).isEqualTo(v1);
            long v2 = t.put("a", b("2"));
            assertThat(v2).isGreaterThan(v1);

            assertThat(t.putIfAbsent("a", b("x"))).isFalse();
            assertThat(t.putIfAbsent("b", b("B"))).isTrue();
            assertThat(s(t.get("b").orElseThrow())).isEqualTo("B");

            assertThat(t.putIfVersion("a", b("3"), v1)).isFalse();
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("2");
            assertThat(t.putIfVersion("a", b("3"), v2)).isTrue();
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("3");
            assertThat(t.putIfVersion("zz", b("new"), 0)).isTrue();

            assertThat(t.delete("a")).isTrue();
            assertThat(t.delete("a")).isFalse();
            assertThat(t.get("a")).isEmpty();
            assertThat(t.count()).isEqualTo(2);
            assertThat(t.getAll(List.of("a", "b", "zz", "nope")).keySet()).containsExactly("b", "zz");

            t.put("empty", new byte[0]);
            assertThat(t.get("empty").orElseThrow()).isEmpty();
        }
    }

    @Test
    void scansAreOrderedAcrossPartitionsWithBoundsAndReverse() {
        try (Lattice l = open(new InMemoryStorage())) {
            Tree t = l.tree("s");
            Map<String, byte[]> data = new TreeMap<>();
            for (int i = 0; i < 500; i++) {
                data.put(String.format("k%04d", i), b("v" + i));
            }
            t.putAll(data);
            assertThat(keys(t.scan(null, null, false))).containsExactlyElementsOf(data.keySet());
            List<String> rev = new ArrayList<>(data.keySet());
            java.util.Collections.reverse(rev);
            assertThat(keys(t.scan(null, null, true))).containsExactlyElementsOf(rev);
            assertThat(keys(t.scan("k0100", "k0105", false)))
                    .containsExactly("k0100", "k0101", "k0102", "k0103", "k0104");
            assertThat(keys(t.scan("k0100", "k0103", true))).containsExactly("k0102", "k0101", "k0100");
            assertThat(keys(t.scan("k0498", null, false))).containsExactly("k0498", "k0499");
            assertThat(keys(t.scan(null, "k0002", false))).containsExactly("k0000", "k0001");
            assertThat(keys(t.scan("k9", "k0", false))).isEmpty();
            try (ScanCursor c = t.scan(null, null, false)) {
                TreeEntry first = c.next();
                assertThat(first.key()).isEqualTo("k0000");
                assertThat(s(first.value())).isEqualTo("v0");
                assertThat(first.version()).isPositive();
            }
            assertThat(t.count()).isEqualTo(500);
        }
    }

    static List<String> keys(ScanCursor c) {
        List<String> out = new ArrayList<>();
        try (c) {
            c.forEachRemaining(e -> out.add(e.key()));
        }
        return out;
    }

    @Test
    void badInputIsRejectedBeforeAnythingIsWritten() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice l = open(storage, LatticeConfig.builder().maxKeyBytes(16))) {
            Tree t = l.tree("v");
            assertThatThrownBy(() -> t.put(null, b("x"))).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> t.put("k", null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> t.put("", b("x"))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
            assertThatThrownBy(() -> t.put("x".repeat(17), b("x"))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("17").hasMessageContaining("16");
            assertThatThrownBy(() -> t.put("k", new byte[t.maxValueBytes() + 1]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(
                            Integer.toString(t.maxValueBytes()));
            assertThatThrownBy(() -> t.put("\uD800", b("x"))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("surrogate");
            assertThatThrownBy(() -> t.putIfVersion("k", b("x"), -1)).isInstanceOf(IllegalArgumentException.class);
            Map<String, byte[]> bad = new TreeMap<>();
            bad.put("ok", b("1"));
            bad.put("y".repeat(20), b("2"));
            assertThatThrownBy(() -> t.putAll(bad)).isInstanceOf(IllegalArgumentException.class);
            assertThat(t.get("ok")).as("putAll validates every key before writing any").isEmpty();
            // the largest value fits
            t.put("max", new byte[t.maxValueBytes()]);
            assertThat(t.get("max").orElseThrow()).hasSize(t.maxValueBytes());
            assertThat(l.provider().state(new LogId("v", TreeImpl.partitionOf("max", t.partitions())))
                    .retainedEntries()).isEqualTo(1);

            assertThatThrownBy(() -> l.tree("_system")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reserved");
            assertThatThrownBy(() -> l.tree("bad name")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> l.tree("t", 0)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> Lattice.open("nosuchscheme:x")).isInstanceOf(UnknownSchemeException.class)
                .hasMessageContaining("memory");
    }

    @Test
    void partitionCountIsStoredAndKeptOnReopen() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice l = open(storage, LatticeConfig.builder().partitions(3))) {
            l.tree("p").put("a", b("1"));
        }
        try (Lattice l = open(storage, LatticeConfig.builder().partitions(5))) {
            Tree t = l.tree("p");
            assertThat(t.partitions()).isEqualTo(3);
            assertThat(s(t.get("a").orElseThrow())).isEqualTo("1");
            assertThat(l.tree("q").partitions()).isEqualTo(5);
            assertThat(l.trees()).containsEntry("p", 3).containsEntry("q", 5);
        }
    }

    @Test
    void closedLatticeRefusesWork() {
        Lattice l = open(new InMemoryStorage());
        Tree t = l.tree("c");
        t.put("a", b("1"));
        l.close();
        l.close(); // second close is a no-op
        assertThatThrownBy(() -> t.put("b", b("2"))).isInstanceOf(LatticeShuttingDownException.class);
        assertThatThrownBy(() -> t.get("a")).isInstanceOf(LatticeShuttingDownException.class);
        assertThatThrownBy(() -> l.tree("c")).isInstanceOf(LatticeShuttingDownException.class);
    }

    @Test
    void corruptEntryFailsTheOpenNamingLogAndOffset() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice l = open(storage, LatticeConfig.builder().partitions(1))) {
            l.tree("bad").put("a", b("1"));
        }
        InMemoryWalStorageProvider raw = new InMemoryWalStorageProvider(storage);
        LogId log = new LogId("bad", 0);
        Fence f = raw.claim(log);
        long next = raw.state(log).committedTail() + 1;
        byte[] garbage = b("this is not a lattice record at all");
        raw.append(log, f, EncodedBatch.of(next, List.of(garbage)));
        try (Lattice l = open(storage)) {
            assertThatThrownBy(() -> l.tree("bad")).isInstanceOf(CorruptLogException.class)
                    .hasMessageContaining("bad/0").hasMessageContaining("offset " + next);
        }
    }
}
