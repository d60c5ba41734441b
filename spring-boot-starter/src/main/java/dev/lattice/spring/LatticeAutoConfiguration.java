package dev.lattice.spring;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of a {@link Lattice} bean from the {@code lattice.*} properties ({@link LatticeProperties}).
 *
 * <p>The bean opens when the context creates it (replaying nothing yet: trees open on first use) and is closed
 * when the context shuts down, which drains in-flight writes within {@code lattice.close-timeout}. Its meters go
 * to the application's {@link MeterRegistry} when exactly one is available (Spring Boot's composite registry
 * counts as one) and {@code lattice.metrics.enabled} is not false; otherwise to a private registry. Backs off when
 * the application defines its own {@code Lattice} bean, and is off with {@code lattice.enabled=false}.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnProperty(prefix = "lattice", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(LatticeProperties.class)
public class LatticeAutoConfiguration {

    /** Created by Spring. */
    public LatticeAutoConfiguration() {
    }

    /**
     * Opens the lattice.
     *
     * @param properties the bound {@code lattice.*} properties
     * @param registries the application's meter registries, if any
     * @param customizers builder customizers, applied in order after the properties
     * @return the open lattice; Spring calls {@link Lattice#close()} on shutdown
     * @throws IllegalStateException if {@code lattice.uri} is not set
     * @throws IllegalArgumentException if a setting is out of range (the message names it)
     * @throws dev.lattice.spi.WalStorageException if the provider cannot be opened (e.g. its module is missing)
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Lattice lattice(LatticeProperties properties, ObjectProvider<MeterRegistry> registries,
                           ObjectProvider<LatticeConfigCustomizer> customizers) {
        LatticeConfig.Builder builder = LatticeConfigMapper.toBuilder(properties);
        if (properties.getMetrics().isEnabled()) {
            MeterRegistry registry = registries.getIfUnique();
            if (registry != null) {
                builder.meterRegistry(registry);
            }
        }
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return Lattice.open(builder.build());
    }
}
