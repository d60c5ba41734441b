/**
 * The engine's LSM state (ARCHITECTURE.md 5.3, docs/wal-format.md "Run format"): the immutable sorted runs a partition
 * keeps on its provider's {@link dev.lattice.spi.RunStore}, their writer and reader, Bloom filters and the block cache.
 * Public only so that the engine's other packages and tools can use them; not a user API, and it may change between
 * releases.
 */
package dev.lattice.engine.lsm;
