/**
 * The {@code lattice cluster} commands ({@code node}, {@code demo}), added to the {@code lattice} command when this
 * module is on its class path (the {@code ./lattice} launcher puts it there for {@code lattice cluster ...}; see
 * {@code docs/cluster.md}, "Command line"). The CLI module never depends on this one, so its own class path has no
 * Pekko.
 */
package dev.lattice.cluster.cli;
