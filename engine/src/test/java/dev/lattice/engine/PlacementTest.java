package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderMissingException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Named providers and per-log placement, on three Chronicle directories standing for three storage accounts. */
class PlacementTest {

    @TempDir
    Path dir;

    private LatticeConfig.Builder config(String... keys) {
        LatticeConfig.Builder b = LatticeConfig.builder().uri("chronicle:" + dir.resolve("default"))
                .placement(PlacementPolicy.roundRobin("default", "acct-a", "acct-b"));
        for (String k : keys) {
            b.namedProvider(k, "chronicle:" + dir.resolve(k), Map.of());
        }
        return b;
    }

    @Test
    void roundRobinPlacementKeepsEachLogOnItsKeyAndSurvivesReopen() {
        Map<String, String> model = new HashMap<>();
        try (Lattice l = Lattice.open(config("acct-a", "acct-b").build())) {
            assertThat(l.providerKeys()).containsExactly("default", "acct-a", "acct-b");
            Tree t = l.tree("spread", 6);
            for (int i = 0; i < 600; i++) {
                t.put("k" + i, b("v" + i));
                model.put("k" + i, "v" + i);
            }
            Placement p = l.placements().get("spread");
            assertThat(p.keys()).containsExactly("default", "acct-a", "acct-b", "default", "acct-a", "acct-b");
            assertThat(p.version()).isEqualTo(1);
            for (int part = 0; part < 6; part++) {
                LogId log = new LogId("spread", part);
                for (String key : l.providerKeys()) {
                    WalStorageProvider provider = l.provider(key);
                    if (key.equals(p.keyOf(part))) {
                        assertThat(provider.state(log).committedTail()).as("%s on %s", log, key).isPositive();
                    } else {
                        assertThat(provider.logs("spread")).as("%s not on %s", log, key).doesNotContain(log);
                    }
                }
            }
            assertThat(l.auditPlacements()).isEmpty();
        }
        try (Lattice l = Lattice.open(config("acct-a", "acct-b").build())) {
            Tree t = l.tree("spread");
            assertThat(t.count()).isEqualTo(model.size());
            model.forEach((k, v) -> assertThat(s(t.get(k).orElseThrow())).isEqualTo(v));
        }
    }

    @Test
    void aLogOnAnUnregisteredKeyFailsClosedAndRecoversWhenTheKeyIsBack() {
        try (Lattice l = Lattice.open(config("acct-a", "acct-b").build())) {
            l.tree("t", 3).put("x", b("1"));
        }
        try (Lattice l = Lattice.open(config("acct-a").build())) {
            assertThat(l.auditPlacements()).containsEntry("t", List.of("acct-b"));
            assertThatThrownBy(() -> l.tree("t")).isInstanceOf(ProviderMissingException.class)
                    .hasMessageContaining("'acct-b'").hasMessageContaining("[default, acct-a]")
                    .hasMessageContaining("t/2");
        }
        try (Lattice l = Lattice.open(config("acct-a", "acct-b").build())) {
            assertThat(s(l.tree("t").get("x").orElseThrow())).isEqualTo("1");
        }
    }

    @Test
    void aPolicyNamingAnUnregisteredKeyCreatesNothing() {
        try (Lattice l = Lattice.open(LatticeConfig.builder().uri("chronicle:" + dir.resolve("default"))
                .placement(PlacementPolicy.roundRobin("default", "nowhere")).build())) {
            assertThatThrownBy(() -> l.tree("bad", 2)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("nowhere");
            assertThat(l.trees()).doesNotContainKey("bad");
        }
        assertThatThrownBy(() -> LatticeConfig.builder().namedProvider("default", "memory:x", Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> LatticeConfig.builder().namedProvider("bad key", "memory:x", Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
