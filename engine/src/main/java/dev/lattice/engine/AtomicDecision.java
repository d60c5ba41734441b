package dev.lattice.engine;

/**
 * The recorded outcome of an atomic write in its coordinator log ({@link PartialTree#atomicDecision}). Immutable.
 *
 * @param committed true when committed, false when aborted
 * @param version the write's version when committed, else 0
 */
public record AtomicDecision(boolean committed, long version) {
}
