package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static dev.lattice.engine.EngineBasicsTest.open;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A non-atomic putAll logs one entry per partition holding several puts ({@link PutAllEntries}), split at the
 * entry limit; every key reads back with its entry's version, live and after a reopen (replay).
 */
class PutAllEntriesTest {

    private static Map<String, byte[]> entries(int n, int valueBytes) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            byte[] v = new byte[valueBytes];
            java.util.Arrays.fill(v, (byte) ('a' + i % 26));
            m.put(String.format("k%04d", i), v);
        }
        return m;
    }

    private static void assertAll(Tree t, Map<String, byte[]> written) {
        for (Map.Entry<String, byte[]> e : written.entrySet()) {
            assertThat(t.get(e.getKey())).as(e.getKey()).hasValueSatisfying(v -> assertThat(v).isEqualTo(e.getValue()));
        }
    }

    @Test
    void aPartitionsKeysGoInOneEntryWithOneVersionAndReplay() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        Map<String, byte[]> sync = entries(100, 100);
        Map<String, byte[]> async = new LinkedHashMap<>();
        sync.forEach((k, v) -> async.put("z" + k, v));
        long version;
        try (Lattice l = open(storage)) {
            Tree t = l.tree("one", TreeOptions.partitions(1));
            long before = l.stats().entriesCommitted();
            t.putAll(sync);
            assertThat(l.stats().entriesCommitted() - before).isEqualTo(1);
            version = t.getVersioned("k0000").orElseThrow().version();
            for (String k : sync.keySet()) {
                assertThat(t.getVersioned(k).orElseThrow().version()).as(k).isEqualTo(version);
            }
            t.putAllAsync(async).get(10, TimeUnit.SECONDS);
            assertThat(l.stats().entriesCommitted() - before).isEqualTo(2);
            assertAll(t, sync);
            assertAll(t, async);
        }
        try (Lattice l = open(storage)) {
            Tree t = l.tree("one", TreeOptions.partitions(1));
            assertAll(t, sync);
            assertAll(t, async);
            assertThat(t.getVersioned("k0099").orElseThrow().version()).isEqualTo(version);
            assertThat(t.count()).isEqualTo(200);
        }
    }

    @Test
    void entriesAreSplitAtTheEntryLimitInTheCallersOrder() {
        InMemoryStorage storage = new InMemoryStorage();
        int limit = 4096;
        Map<String, byte[]> m = entries(30, 1000);
        // each put: op, key length, 5 key bytes, value length, 1,000 value bytes; each entry: header and checksum
        int put = 1 + 4 + 5 + 4 + 1000;
        int perEntry = (limit - WalRecord.HEADER_BYTES - WalRecord.TRAILER_BYTES) / put;
        int expected = (30 + perEntry - 1) / perEntry;
        try (Lattice l = open(storage, LatticeConfig.builder().maxBatchBytes(limit))) {
            Tree t = l.tree("split", TreeOptions.partitions(1));
            long before = l.stats().entriesCommitted();
            t.putAll(m);
            assertThat(l.stats().entriesCommitted() - before).isEqualTo(expected);
            List<Long> versions = new ArrayList<>();
            for (String k : m.keySet()) {
                versions.add(t.getVersioned(k).orElseThrow().version());
            }
            for (int i = 0; i < versions.size(); i++) {
                boolean sameEntry = i % perEntry != 0;
                if (sameEntry) {
                    assertThat(versions.get(i)).as("key %d shares its entry's version", i)
                            .isEqualTo(versions.get(i - 1));
                } else if (i > 0) {
                    assertThat(versions.get(i)).as("key %d starts a later entry", i).isGreaterThan(versions.get(i - 1));
                }
            }
            assertThat(new TreeSet<>(versions)).hasSize(expected);
        }
        try (Lattice l = open(storage, LatticeConfig.builder().maxBatchBytes(limit))) {
            assertAll(l.tree("split", TreeOptions.partitions(1)), m);
        }
    }

    /** A shared entry waits while any one of its keys is held by an unresolved atomic write, then lands after it. */
    @Test
    void anEntryWaitsForAnAtomicWriteHoldingOneOfItsKeys() throws Exception {
        try (TwoHosts h = TwoHosts.open(new InMemoryStorage(), java.time.Duration.ofSeconds(10))) {
            Map<String, byte[]> m = new LinkedHashMap<>();
            for (int i = 0; i < 5; i++) {
                m.put(h.keyIn(1, "p" + i + "-"), EngineBasicsTest.b("bulk"));
            }
            List<String> keys = new ArrayList<>(m.keySet());
            long version = h.decided("x", h.keyIn(0, "a"), keys.get(2), "atomic");
            long before = h.b().stats().entriesCommitted();
            java.util.concurrent.CompletableFuture<Void> bulk = java.util.concurrent.CompletableFuture.runAsync(
                    () -> h.tb().putAll(m));
            Thread.sleep(200);
            assertThat(bulk).as("the entry waits for the atomic write's outcome").isNotDone();
            assertThat(h.tb().get(keys.get(0))).as("no key of the entry landed alone").isEmpty();
            h.resolve("x", version);
            bulk.get(10, TimeUnit.SECONDS);
            assertThat(h.b().stats().entriesCommitted() - before).as("the resolve and one shared entry").isEqualTo(2);
            for (String k : keys) {
                Versioned v = h.tb().getVersioned(k).orElseThrow();
                assertThat(EngineBasicsTest.s(v.value())).as(k).isEqualTo("bulk");
                assertThat(v.version()).as(k).isGreaterThan(version);
            }
        }
    }

    @Test
    void manyPartitionsTakeOneEntryEach() {
        try (Lattice l = open(new InMemoryStorage())) {
            Tree t = l.tree("eight", TreeOptions.partitions(8));
            Map<String, byte[]> m = entries(1000, 10);
            long before = l.stats().entriesCommitted();
            t.putAll(m);
            assertThat(l.stats().entriesCommitted() - before).isEqualTo(8);
            assertAll(t, m);
            assertThat(new String(t.get("k0500").orElseThrow(), StandardCharsets.UTF_8)).hasSize(10);
        }
    }
}
