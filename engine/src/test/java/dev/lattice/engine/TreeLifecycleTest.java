package dev.lattice.engine;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.SpiOperation;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** dropTree, exists, treeInfos, createTree and hash versions, on the in-memory provider (shared storage). */
class TreeLifecycleTest {

    private static byte[] v(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static LatticeConfig.Builder config(WalStorageProvider p) {
        return LatticeConfig.builder().provider(p, false).partitions(4).checkpointEveryEntries(20);
    }

    /** Fills a tree with data and checkpoints, and puts a run beside partition 0's log. */
    private static void fill(InMemoryStorage storage, String name) {
        InMemoryWalStorageProvider p = new InMemoryWalStorageProvider(storage);
        try (Lattice l = Lattice.open(config(p).build())) {
            Tree t = l.tree(name);
            for (int i = 0; i < 200; i++) {
                t.put("k" + i, v("v" + i));
            }
        }
        // a run no manifest names (what a crash between a run write and its manifest leaves)
        LogId log0 = new LogId(name, 0);
        Fence f = p.claim(log0);
        p.runs().write(log0, f, new RunId("stray-1"), new ByteArrayInputStream(new byte[100]), 100);
    }

    private static void assertNothingLeft(WalStorageProvider p, String name) {
        assertThat(p.logs(name)).as("logs(%s) after drop", name).isEmpty();
        assertThat(p.trees()).as("trees() after drop").doesNotContain(name);
        for (int i = 0; i < 4; i++) {
            LogId log = new LogId(name, i);
            assertThat(p.runs().list(log)).as("runs of %s", log).isEmpty();
            assertThat(p.checkpoints().latest(log)).as("checkpoint of %s", log).isEmpty();
            assertThat(p.state(log).committedTail()).as("tail of %s", log).isEqualTo(-1);
        }
    }

    @Test
    void dropLeavesNothingOfTheTreeAndKeepsOthers() {
        InMemoryStorage storage = new InMemoryStorage();
        fill(storage, "gone");
        fill(storage, "kept");
        InMemoryWalStorageProvider p = new InMemoryWalStorageProvider(storage);
        assertThat(p.logs("gone")).hasSize(4);
        assertThat(p.runs().list(new LogId("gone", 0))).extracting(r -> r.id().value()).contains("stray-1");
        try (Lattice l = Lattice.open(config(p).build())) {
            assertThat(l.exists("gone")).isTrue();
            l.tree("gone").put("late", v("x"));
            assertThat(l.dropTree("gone")).as("logs deleted").isEqualTo(4);
            assertNothingLeft(p, "gone");
            assertThat(l.exists("gone")).isFalse();
            assertThatThrownBy(() -> l.tree("gone")).isInstanceOf(NoSuchTreeException.class)
                    .hasMessageContaining("dropped");
            assertThat(l.treeInfos()).extracting(TreeInfo::name).containsExactly("kept");
            assertThat(l.tree("kept").get("k7")).hasValue(v("v7"));
            assertThat(l.tree("kept").count()).isEqualTo(200);
            assertThatThrownBy(() -> l.dropTree("never")).isInstanceOf(NoSuchTreeException.class);
        }
        assertThat(p.logs("kept")).hasSize(4);
    }

    @Test
    void dropIsKeptAcrossReopenAndCreateTreeStartsAfresh() {
        InMemoryStorage storage = new InMemoryStorage();
        fill(storage, "t");
        try (Lattice l = Lattice.open(config(new InMemoryWalStorageProvider(storage)).build())) {
            l.dropTree("t");
        }
        try (Lattice l = Lattice.open(config(new InMemoryWalStorageProvider(storage)).build())) {
            assertThat(l.exists("t")).isFalse();
            assertThatThrownBy(() -> l.tree("t")).isInstanceOf(NoSuchTreeException.class);
            assertThatThrownBy(() -> l.tree("t", 8)).isInstanceOf(NoSuchTreeException.class);
            Tree t = l.createTree("t", TreeOptions.partitions(2));
            assertThat(t.partitions()).isEqualTo(2);
            assertThat(t.count()).as("a re-created tree is empty").isZero();
            t.put("a", v("1"));
            assertThatThrownBy(() -> l.createTree("t", TreeOptions.defaults()))
                    .isInstanceOf(IllegalStateException.class);
        }
        try (Lattice l = Lattice.open(config(new InMemoryWalStorageProvider(storage)).build())) {
            assertThat(l.tree("t").get("a")).hasValue(v("1"));
            assertThat(l.tree("t").count()).isEqualTo(1);
        }
    }

    @Test
    void aSecondInstanceSeesTheDrop() throws Exception {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = Lattice.open(config(new InMemoryWalStorageProvider(storage)).build());
             Lattice b = Lattice.open(config(new InMemoryWalStorageProvider(storage)).build())) {
            Tree ta = a.tree("shared");
            ta.put("x", v("1"));
            b.dropTree("shared");
            assertThat(a.exists("shared")).as("exists() in the other instance, at once").isFalse();
            assertThatThrownBy(() -> ta.put("y", v("2"))).as("a write of the other instance's open handle")
                    .isInstanceOf(RuntimeException.class);
            Thread.sleep(1100); // tree() re-reads the catalog for open trees at most once a second
            assertThatThrownBy(() -> a.tree("shared")).isInstanceOf(NoSuchTreeException.class);
            assertThatThrownBy(() -> a.tree("shared")).as("and stays refused").isInstanceOf(NoSuchTreeException.class);
            assertNothingLeft(new InMemoryWalStorageProvider(storage), "shared");
        }
    }

    @Test
    void anInterruptedPurgeIsResumed() {
        InMemoryStorage storage = new InMemoryStorage();
        fill(storage, "p");
        FaultInjectingProvider faulty = new FaultInjectingProvider(new InMemoryWalStorageProvider(storage));
        try (Lattice l = Lattice.open(config(faulty).maxRetries(0).build())) {
            faulty.inject(FaultInjectingProvider.FaultRule.failBefore(SpiOperation.DROP).afterSkipping(2).always());
            assertThatThrownBy(() -> l.dropTree("p")).isInstanceOf(RuntimeException.class);
            assertThat(l.exists("p")).as("the drop is recorded before the purge").isFalse();
            assertThatThrownBy(() -> l.tree("p")).isInstanceOf(NoSuchTreeException.class);
            assertThat(faulty.logs("p")).as("logs left by the interrupted purge").hasSize(2);
            faulty.clearFaults();
            assertThat(l.purgeDropped()).as("logs the resumed purge deleted").isEqualTo(2);
            assertNothingLeft(faulty, "p");
            assertThat(l.purgeDropped()).as("a second resume finds nothing").isZero();
        }
        try (Lattice l = Lattice.open(config(faulty).build())) {
            faulty.inject(FaultInjectingProvider.FaultRule.failBefore(SpiOperation.DROP).once());
            l.tree("q").put("a", v("1"));
            assertThatThrownBy(() -> l.dropTree("q")).isInstanceOf(RuntimeException.class);
            assertThat(l.dropTree("q")).as("dropTree again resumes the purge").isGreaterThanOrEqualTo(1);
            assertNothingLeft(faulty, "q");
        }
    }

    @Test
    void newTreesGetHashVersion2AndOptionsAreKept() {
        InMemoryStorage storage = new InMemoryStorage();
        long before = System.currentTimeMillis();
        try (Lattice l = Lattice.open(config(new InMemoryWalStorageProvider(storage)).build())) {
            l.tree("new");
            l.tree("old-hash", TreeOptions.partitions(8).withHashVersion(1));
            TreeInfo n = l.treeInfo("new");
            assertThat(n.hashVersion()).isEqualTo(2);
            assertThat(n.partitions()).isEqualTo(4);
            assertThat(n.created().toEpochMilli()).isBetween(before, System.currentTimeMillis());
            assertThat(n.placement().keys()).containsOnly("default");
            assertThat(l.treeInfo("old-hash").hashVersion()).isEqualTo(1);
            assertThat(l.treeInfo("old-hash").partitions()).isEqualTo(8);
            assertThatThrownBy(() -> l.treeInfo("none")).isInstanceOf(NoSuchTreeException.class);
            assertThat(l.exists("none")).isFalse();
            assertThat(l.treeInfos()).extracting(TreeInfo::name).containsExactly("new", "old-hash");
            assertThat(l.exists("none")).as("exists() never creates").isFalse();
        }
        try (Lattice l = Lattice.open(config(new InMemoryWalStorageProvider(storage)).build())) {
            assertThat(l.treeInfo("new").hashVersion()).isEqualTo(2);
            assertThat(l.treeInfo("old-hash").hashVersion()).isEqualTo(1);
        }
        assertThatThrownBy(() -> TreeOptions.defaults().withHashVersion(3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("hash version 3");
    }

    /** A catalog written by the code before hash versions (CREATE_TREE records) keeps hash 1 and its routing. */
    @Test
    void treesOfAnOldCatalogKeepHashVersion1() {
        InMemoryStorage storage = new InMemoryStorage();
        InMemoryWalStorageProvider p = new InMemoryWalStorageProvider(storage);
        Fence f = p.claim(Catalog.LOG);
        byte[] entry = WalRecord.encode(WalRecord.KIND_CATALOG,
                List.of(WalRecord.Mutation.createTree("legacy", List.of("default", "default", "default", "default"))));
        WalRecord.seal(entry, 1_700_000_000_000L);
        p.append(Catalog.LOG, f, EncodedBatch.of(0, BatchId.random(), List.of(entry)));
        List<String> keys = List.of("a", "b", "c", "d", "w17-k0", "w17-k1", "w17-k2");
        try (Lattice l = Lattice.open(config(p).build())) {
            TreeInfo info = l.treeInfo("legacy");
            assertThat(info.hashVersion()).isEqualTo(1);
            assertThat(info.created().toEpochMilli()).isEqualTo(1_700_000_000_000L);
            Tree t = l.tree("legacy");
            for (String k : keys) {
                t.put(k, v(k));
            }
        }
        long[] perPartition = new long[4];
        for (String k : keys) {
            perPartition[PartitionHash.V1.partition(k, 4)]++;
        }
        for (int i = 0; i < 4; i++) {
            assertThat(p.state(new LogId("legacy", i)).committedTail() + 1)
                    .as("entries on partition %d (routed by hash version 1)", i).isEqualTo(perPartition[i]);
        }
        try (Lattice l = Lattice.open(config(p).build())) {
            for (String k : keys) {
                assertThat(l.tree("legacy").get(k)).hasValue(v(k));
            }
        }
    }

    @Test
    void unknownRecordFormatsAreRefused() {
        WalRecord.Mutation bad = new WalRecord.Mutation(WalRecord.Mutation.CREATE_TREE_V2, "t", v("t"),
                new byte[] {9, 2, 0, 0, 0, 1}, 0);
        assertThatThrownBy(bad::hashVersion).hasMessageContaining("unknown tree record format 9");
        WalRecord.Mutation drop = WalRecord.Mutation.dropTree("t", 42);
        assertThat(drop.droppedEpoch()).isEqualTo(42);
        WalRecord.Mutation created = WalRecord.Mutation.createTreeV2("t", List.of("default", "b"), 2);
        assertThat(created.hashVersion()).isEqualTo(2);
        assertThat(created.placementOfCreateTree()).containsExactly("default", "b");
    }
}
