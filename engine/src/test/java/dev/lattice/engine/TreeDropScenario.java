package dev.lattice.engine;

import dev.lattice.conformance.ProviderUnderTest;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.WalStorageProvider;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 18, one scenario for every provider's drop test: {@code Lattice.dropTree} leaves nothing of the tree on the
 * provider (no log listed, no run, also one no manifest names, no checkpoint, no entry), durably across a reopen,
 * and the other tree is kept. In the engine's test-jar; each provider module runs it on its real backend.
 */
public final class TreeDropScenario {

    private TreeDropScenario() {
    }

    private static LatticeConfig config(WalStorageProvider p) {
        return LatticeConfig.builder().provider(p, false).partitions(4).checkpointEveryEntries(20).build();
    }

    private static void assertNothingOf(WalStorageProvider p, String tree) {
        assertThat(p.logs(tree)).as("logs(%s) after dropTree", tree).isEmpty();
        assertThat(p.trees()).as("trees() after dropTree").doesNotContain(tree);
        for (int i = 0; i < 4; i++) {
            LogId log = new LogId(tree, i);
            assertThat(p.runs().list(log)).as("runs of %s", log).isEmpty();
            assertThat(p.checkpoints().latest(log)).as("checkpoint of %s", log).isEmpty();
            assertThat(p.state(log).committedTail()).as("tail of %s", log).isEqualTo(-1);
            assertThat(p.read(log, -1, 10, 1 << 20).isEmpty()).as("read of %s", log).isTrue();
        }
    }

    /**
     * Runs the scenario on fresh storage, which it closes.
     *
     * @param storage a fresh storage of the provider under test (each {@code open()} a new instance on it)
     * @throws Exception on any failure
     */
    public static void dropTreeLeavesNothingOnTheProvider(ProviderUnderTest storage) throws Exception {
        try (storage) {
            try (WalStorageProvider p = storage.open()) {
                LogId log0 = new LogId("gone", 0);
                try (Lattice l = Lattice.open(config(p))) {
                    for (String tree : new String[] {"gone", "kept"}) {
                        for (int i = 0; i < 60; i++) {
                            l.tree(tree).put("k" + i, ("v" + i).getBytes(StandardCharsets.UTF_8));
                        }
                    }
                }
                // a run no manifest names (what a crash between a run write and its manifest leaves)
                Fence f = p.claim(log0);
                p.runs().write(log0, f, new RunId("stray-1"), new ByteArrayInputStream(new byte[300]), 300);
                assertThat(p.runs().list(log0)).as("runs before the drop").isNotEmpty();
                assertThat(p.logs("gone")).as("logs before the drop").hasSize(4);
                assertThat(p.checkpoints().latest(log0)).as("a checkpoint before the drop").isPresent();
                try (Lattice l = Lattice.open(config(p))) {
                    assertThat(l.dropTree("gone")).as("logs deleted").isEqualTo(4);
                    assertNothingOf(p, "gone");
                    assertThat(l.exists("gone")).isFalse();
                    assertThat(l.tree("kept").count()).isEqualTo(60);
                }
            }
            try (WalStorageProvider p = storage.open(); Lattice l = Lattice.open(config(p))) {
                assertNothingOf(p, "gone");
                assertThatThrownBy(() -> l.tree("gone")).isInstanceOf(NoSuchTreeException.class);
                assertThat(l.tree("kept").get("k59")).hasValue("v59".getBytes(StandardCharsets.UTF_8));
                assertThat(p.logs("kept")).hasSize(4);
            }
        }
    }
}
