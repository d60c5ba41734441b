package dev.lattice.spring;

import dev.lattice.engine.Lattice;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Registers {@link LatticeHealthIndicator} as the {@code lattice} health contributor when Spring Boot's health
 * support is on the classpath (spring-boot-health, brought by the actuator), a {@link Lattice} bean exists and
 * {@code management.health.lattice.enabled} is not false. The health conditions sit on a nested class so that they
 * are only read once the class check passed (their condition classes live in spring-boot-health).
 */
@AutoConfiguration(after = LatticeAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
public class LatticeHealthAutoConfiguration {

    /** Created by Spring. */
    public LatticeHealthAutoConfiguration() {
    }

    /** The indicator bean, under the health conditions. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(Lattice.class)
    @ConditionalOnEnabledHealthIndicator("lattice")
    static class Indicator {

        /**
         * @param lattice the application's lattice
         * @return the health indicator, named {@code lattice} after this bean
         */
        @Bean(name = "latticeHealthIndicator")
        @ConditionalOnMissingBean(name = "latticeHealthIndicator")
        LatticeHealthIndicator latticeHealthIndicator(Lattice lattice) {
            return new LatticeHealthIndicator(lattice);
        }
    }
}
