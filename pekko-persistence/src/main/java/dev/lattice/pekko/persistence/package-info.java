/**
 * Apache Pekko Persistence plugin on Lattice: {@link dev.lattice.pekko.persistence.LatticeJournal} (event journal),
 * {@link dev.lattice.pekko.persistence.LatticeSnapshotStore} (snapshot store) and
 * {@link dev.lattice.pekko.persistence.LatticeDurableStateStoreProvider} (durable state), each on one Lattice tree.
 * The plugins of one actor system that name the same connection block share one {@link dev.lattice.engine.Lattice}
 * ({@link dev.lattice.pekko.persistence.LatticeConnections}). Configuration: {@code reference.conf} of this module
 * and {@code docs/pekko-persistence.md}.
 */
package dev.lattice.pekko.persistence;
