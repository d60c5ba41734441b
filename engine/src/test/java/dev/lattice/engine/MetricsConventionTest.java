package dev.lattice.engine;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** Micrometer conventions (issue 20 part 3): instance tag, descriptions and units, removal on close, docs in sync. */
class MetricsConventionTest {

    /** Registered on first occurrence only (a provider failure, a lost claim), so a clean workload has none. */
    private static final Set<String> ON_FIRST_OCCURRENCE = Set.of("lattice.provider.errors", "lattice.ownership.lost");

    private static Lattice open(SimpleMeterRegistry registry, String name, boolean partitionTag) {
        LatticeConfig.Builder b = LatticeConfig.builder().uri("memory:" + name).partitions(4).meterRegistry(registry)
                .meterPartitionTag(partitionTag);
        return Lattice.open(b.build());
    }

    private static void workload(Lattice l) {
        Tree t = l.tree("metrics");
        for (int i = 0; i < 50; i++) {
            t.put("k" + i, new byte[] {(byte) i});
        }
        t.putAllAtomic(java.util.Map.of("a1", new byte[1], "a2", new byte[2]));
        t.get("k1");
    }

    private static Set<Meter> latticeMeters(SimpleMeterRegistry r) {
        return r.getMeters().stream().filter(m -> m.getId().getName().startsWith("lattice."))
                .collect(Collectors.toSet());
    }

    @Test
    void twoInstancesOnOneRegistryNeverCollideAndCloseRemovesEveryMeter() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Lattice a = open(registry, "one", true);
        Lattice b = open(registry, "one", true);
        try {
            workload(a);
            workload(b);
            Set<String> names = latticeMeters(registry).stream().map(m -> m.getId().getTag(EngineMeters.NAME_TAG))
                    .collect(Collectors.toCollection(TreeSet::new));
            assertThat(names).as("instance tags of two instances over the same URI").containsExactly("memory:one",
                    "memory:one-2");
            for (Meter m : latticeMeters(registry)) {
                assertThat(m.getId().getDescription()).as("description of %s", m.getId()).isNotBlank();
                assertThat(m.getId().getTag(EngineMeters.NAME_TAG)).as("instance tag of %s", m.getId()).isNotNull();
            }
            double liveA = registry.get("lattice.memory.live.bytes").tag(EngineMeters.NAME_TAG, "memory:one").gauge()
                    .value();
            assertThat(liveA).as("each instance's own memory gauge reports its data").isPositive();
        } finally {
            a.close();
        }
        assertThat(latticeMeters(registry)).as("after closing the first instance only the second one's meters remain")
                .allSatisfy(m -> assertThat(m.getId().getTag(EngineMeters.NAME_TAG)).isEqualTo("memory:one-2"));
        b.close();
        assertThat(latticeMeters(registry)).as("meters left on the registry after both instances closed").isEmpty();
    }

    @Test
    void theDefaultNameLeavesOutCredentialsQueryAndAJdbcPrefix() {
        assertThat(EngineMeters.defaultName("chronicle:./data?durability=fsync")).isEqualTo("chronicle:./data");
        assertThat(EngineMeters.defaultName("postgres://alice@db:5432/app?password=x"))
                .isEqualTo("postgres://db:5432/app");
        assertThat(EngineMeters.defaultName("jdbc:postgresql://alice@db:5432/app?password=x"))
                .isEqualTo("postgresql://db:5432/app");
        assertThat(EngineMeters.defaultName(null)).isEqualTo("lattice");
    }

    @Test
    void thePartitionTagCanBeDroppedAndGaugesThenAggregate() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Lattice l = open(registry, "agg", false)) {
            workload(l);
            assertThat(latticeMeters(registry)).as("meters without a partition tag")
                    .allSatisfy(m -> assertThat(m.getId().getTag("partition")).as("%s", m.getId()).isNull());
            assertThat(registry.find("lattice.append.commit").tag("tree", "metrics").timers())
                    .as("one commit timer per tree across its 4 partitions").hasSize(1);
            assertThat(registry.find("lattice.inflight.batches").tag("tree", "metrics").gauges())
                    .as("one in-flight gauge per tree (the sum of its partitions)").hasSize(1);
        }
        try (Lattice l = open(registry, "tagged", true)) {
            workload(l);
            assertThat(registry.find("lattice.append.commit").tag("tree", "metrics")
                    .tag(EngineMeters.NAME_TAG, "memory:tagged").timers()).as("a commit timer per partition").hasSize(4);
        }
    }

    @Test
    void theMetersTableInEngineMdListsExactlyTheMetersRegistered() throws IOException {
        Path doc = Path.of("..", "docs", "engine.md");
        String text = Files.readString(doc);
        int start = text.indexOf("## Metrics");
        int end = text.indexOf("\n## ", start + 5);
        String table = text.substring(start, end < 0 ? text.length() : end);
        Set<String> documented = new TreeSet<>();
        Matcher m = Pattern.compile("^\\|[^|]*", Pattern.MULTILINE).matcher(table);
        while (m.find()) {
            Matcher names = Pattern.compile("`(lattice\\.[a-z.]+)`").matcher(m.group());
            while (names.find()) {
                documented.add(names.group(1));
            }
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Set<String> registered = new TreeSet<>();
        try (Lattice l = open(registry, "docs", true)) {
            workload(l);
            latticeMeters(registry).forEach(x -> registered.add(x.getId().getName()));
        }
        assertThat(documented).as("meters documented in docs/engine.md's Metrics table").isNotEmpty();
        assertThat(registered).as("every meter a workload registers is documented in docs/engine.md")
                .isSubsetOf(documented);
        Set<String> missing = new TreeSet<>(documented);
        missing.removeAll(registered);
        assertThat(missing).as("documented meters a workload did not register (only first-occurrence ones may be absent)")
                .isSubsetOf(ON_FIRST_OCCURRENCE);
    }
}
