/**
 * Spring Boot starter for Lattice: {@link dev.lattice.spring.LatticeAutoConfiguration} opens a
 * {@code dev.lattice.engine.Lattice} bean from the {@code lattice.*} properties ({@link
 * dev.lattice.spring.LatticeProperties}), bound to the application's {@code MeterRegistry} and closed on shutdown;
 * {@link dev.lattice.spring.LatticeHealthAutoConfiguration} adds a health indicator when the actuator is present.
 */
package dev.lattice.spring;
