package dev.lattice.spring;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeShuttingDownException;
import dev.lattice.engine.Tree;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The starter in real Spring application contexts, on the memory provider and on Chronicle. */
class LatticeAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LatticeAutoConfiguration.class,
                    LatticeHealthAutoConfiguration.class));

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void memoryLatticeFromPropertiesWithEngineSettings() {
        runner.withPropertyValues("lattice.uri=memory:spring-settings", "lattice.partitions=3",
                        "lattice.memory-budget-bytes=33554432", "lattice.close-timeout=5s",
                        "lattice.provider-call-timeout=2s", "lattice.ownership-check-interval=250ms",
                        "lattice.max-key-bytes=200")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(Lattice.class);
                    Lattice lattice = ctx.getBean(Lattice.class);
                    Tree t = lattice.tree("orders");
                    long v = t.put("o-1", utf8("one"));
                    assertThat(v).isPositive();
                    assertThat(t.get("o-1").orElseThrow()).isEqualTo(utf8("one"));
                    assertThat(lattice.trees()).containsEntry("orders", 3);   // lattice.partitions applied
                    assertThatThrownBy(() -> t.put("k".repeat(201), utf8("x")))   // lattice.max-key-bytes applied
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("200");
                    LatticeProperties p = ctx.getBean(LatticeProperties.class);
                    assertThat(p.getCloseTimeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(p.getOwnershipCheckInterval()).isEqualTo(Duration.ofMillis(250));
                });
    }

    @Test
    void outOfRangeSettingFailsStartupNamingIt() {
        runner.withPropertyValues("lattice.uri=memory:spring-bad", "lattice.partitions=0")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitions"));
    }

    @Test
    void missingUriFailsStartupWithTheProperty() {
        runner.run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("lattice.uri"));
    }

    @Test
    void disabledCreatesNoBean() {
        runner.withPropertyValues("lattice.enabled=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(Lattice.class)
                        .doesNotHaveBean(LatticeHealthIndicator.class));
    }

    @Test
    void closedOnContextShutdown() {
        AtomicReference<Lattice> seen = new AtomicReference<>();
        runner.withPropertyValues("lattice.uri=memory:spring-close").run(ctx -> {
            seen.set(ctx.getBean(Lattice.class));
            seen.get().tree("t").put("k", utf8("v"));
        });
        // the runner closed the context: the lattice refuses work
        assertThatThrownBy(() -> seen.get().tree("t")).isInstanceOf(LatticeShuttingDownException.class);
    }

    @Test
    void boundToTheApplicationsMeterRegistry() {
        runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
                .withPropertyValues("lattice.uri=memory:spring-metrics")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    MeterRegistry registry = ctx.getBean(MeterRegistry.class);
                    Lattice lattice = ctx.getBean(Lattice.class);
                    lattice.tree("m").put("k", utf8("v"));
                    assertThat(lattice.meterRegistry()).isSameAs(registry);
                    assertThat(registry.getMeters()).anySatisfy(m ->
                            assertThat(m.getId().getName()).startsWith("lattice."));
                });
    }

    @Test
    void metricsNameAndPartitionTagFromProperties() {
        MeterRegistry app = new SimpleMeterRegistry();
        runner.withBean(MeterRegistry.class, () -> app)
                .withPropertyValues("lattice.uri=memory:spring-metric-tags", "lattice.partitions=4",
                        "lattice.metrics.name=orders-service", "lattice.metrics.partition-tag=false")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Tree t = ctx.getBean(Lattice.class).tree("m");
                    for (int i = 0; i < 20; i++) {
                        t.put("k" + i, utf8("v"));
                    }
                    var meters = app.getMeters().stream().filter(m -> m.getId().getName().startsWith("lattice."))
                            .toList();
                    assertThat(meters).isNotEmpty().allSatisfy(m ->
                            assertThat(m.getId().getTag("lattice.name")).isEqualTo("orders-service"));
                    assertThat(meters).anySatisfy(m -> assertThat(m.getId().getTag("tree")).isEqualTo("m"))
                            .noneSatisfy(m -> assertThat(m.getId().getTag("partition")).isNotNull());
                });
        MeterRegistry other = new SimpleMeterRegistry();
        runner.withBean(MeterRegistry.class, () -> other)
                .withPropertyValues("lattice.uri=memory:spring-metric-default-tags", "lattice.partitions=4")
                .run(ctx -> {
                    ctx.getBean(Lattice.class).tree("m").put("k", utf8("v"));
                    assertThat(other.getMeters()).anySatisfy(m ->
                            assertThat(m.getId().getTag("partition")).isNotNull());
                    assertThat(other.getMeters()).anySatisfy(m -> assertThat(m.getId().getTag("lattice.name"))
                            .isEqualTo("memory:spring-metric-default-tags"));
                });
    }

    @Test
    void metricsDisabledKeepsMetersPrivate() {
        MeterRegistry app = new SimpleMeterRegistry();
        runner.withBean(MeterRegistry.class, () -> app)
                .withPropertyValues("lattice.uri=memory:spring-nometrics", "lattice.metrics.enabled=false")
                .run(ctx -> {
                    ctx.getBean(Lattice.class).tree("m").put("k", utf8("v"));
                    assertThat(ctx.getBean(Lattice.class).meterRegistry()).isNotSameAs(app);
                    assertThat(app.getMeters()).noneSatisfy(m ->
                            assertThat(m.getId().getName()).startsWith("lattice."));
                });
    }

    @Test
    void customizerRunsAfterProperties() {
        runner.withPropertyValues("lattice.uri=memory:spring-customizer", "lattice.partitions=3")
                .withBean(LatticeConfigCustomizer.class, () -> b -> b.partitions(5))
                .run(ctx -> {
                    Lattice lattice = ctx.getBean(Lattice.class);
                    lattice.tree("c").put("k", utf8("v"));
                    assertThat(lattice.trees()).containsEntry("c", 5);
                });
    }

    @Test
    void namedProviderAndRoundRobinPlacement() {
        runner.withPropertyValues("lattice.uri=memory:spring-main", "lattice.providers.archive.uri=memory:spring-arch",
                        "lattice.placement-round-robin=default,archive", "lattice.partitions=4")
                .run(ctx -> {
                    Lattice lattice = ctx.getBean(Lattice.class);
                    assertThat(lattice.providerKeys()).contains("default", "archive");
                    lattice.tree("placed").put("k", utf8("v"));
                    assertThat(lattice.placements().get("placed").keys())
                            .containsExactly("default", "archive", "default", "archive");
                });
    }

    @Test
    void healthIndicatorUpWithTreeStates() {
        runner.withPropertyValues("lattice.uri=memory:spring-health").run(ctx -> {
            ctx.getBean(Lattice.class).tree("h").put("k", utf8("v"));
            Health health = ctx.getBean(LatticeHealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsKey("trees");
            @SuppressWarnings("unchecked")
            Map<String, Object> trees = (Map<String, Object>) health.getDetails().get("trees");
            assertThat(trees).containsOnlyKeys("h");
            assertThat(trees.get("h")).isEqualTo(Map.of("state", "HEALTHY"));
        });
    }

    @Test
    void healthIndicatorDownWhenTheCatalogCannotBeRead() {
        runner.withPropertyValues("lattice.uri=memory:spring-health-closed").run(ctx -> {
            Lattice lattice = ctx.getBean(Lattice.class);
            lattice.close();
            Health health = ctx.getBean(LatticeHealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails()).containsKey("error");
        });
    }

    @Test
    void noHealthIndicatorWithoutSpringBootHealth() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
                .withPropertyValues("lattice.uri=memory:spring-nohealth")
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(Lattice.class)
                        .doesNotHaveBean(LatticeHealthIndicator.class));
    }

    @Test
    void healthIndicatorOffByManagementProperty() {
        runner.withPropertyValues("lattice.uri=memory:spring-health-off", "management.health.lattice.enabled=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(LatticeHealthIndicator.class));
    }

    @Test
    void chronicleInATempDirSurvivesAContextRestart(@TempDir Path dir) throws Exception {
        String uri = "lattice.uri=chronicle:" + dir.resolve("data");
        runner.withPropertyValues(uri, "lattice.partitions=2").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            Tree t = ctx.getBean(Lattice.class).tree("orders");
            for (int i = 0; i < 100; i++) {
                t.put("o-" + i, utf8("v" + i));
            }
        });
        assertThat(Files.list(dir.resolve("data")).count()).isPositive();
        runner.withPropertyValues(uri).run(ctx -> {
            Tree t = ctx.getBean(Lattice.class).tree("orders");
            assertThat(t.count()).isEqualTo(100);
            for (int i = 0; i < 100; i++) {
                assertThat(t.get("o-" + i).orElseThrow()).isEqualTo(utf8("v" + i));
            }
            Health health = ctx.getBean(LatticeHealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails().get("provider")).asString().isNotBlank();
        });
    }
}
