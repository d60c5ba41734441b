package dev.lattice.spring;

import dev.lattice.engine.LatticeConfig;

/**
 * A bean of this type adjusts the {@link LatticeConfig.Builder} after the {@code lattice.*} properties were
 * applied and before the {@code Lattice} opens: for settings that are objects rather than values (a provider
 * instance, an I/O executor, a custom placement policy). Customizers run in {@code @Order} order, on the thread
 * that creates the bean.
 */
@FunctionalInterface
public interface LatticeConfigCustomizer {

    /**
     * @param builder the builder; change it in place
     */
    void customize(LatticeConfig.Builder builder);
}
