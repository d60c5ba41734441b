package dev.lattice.engine;

/**
 * The outcome of a committed atomic write.
 *
 * @param version the one version every mutation of the write carries (what {@link Tree#getVersioned} returns for
 *     each key it put), {@code >= 1}
 * @param reattached true when this call re-attached to an earlier commit with the same idempotency key instead of
 *     writing again
 * @param keys the number of puts and deletes
 * @param logs the number of logs the write touched (1 = a single log entry; more = prepared in each log, committed
 *     by one decision record)
 */
public record AtomicResult(long version, boolean reattached, int keys, int logs) {
}
