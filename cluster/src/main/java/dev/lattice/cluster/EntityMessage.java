package dev.lattice.cluster;

/** What a partition's entity receives: {@link Request}s from any node, and its own internal signals. */
interface EntityMessage {
}
