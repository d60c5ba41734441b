package dev.lattice.engine;

/**
 * Cumulative counters of one {@link Lattice} since it was opened (see {@link Lattice#stats()}), for demos,
 * benchmarks and quick inspection; the same figures are published as Micrometer meters.
 *
 * @param stageCalls provider {@code stage} calls, retries included
 * @param commitCalls provider {@code commit} calls, retries included
 * @param batchesCommitted batches committed
 * @param entriesCommitted entries committed (one per write; a putAll's keys of one partition share entries)
 * @param bytesCommitted payload bytes committed
 * @param retries provider calls retried after a transient failure
 * @param failedBatches batches whose writes failed or ended unknown
 * @param reconciles reconcile calls after failures (not counting the ones at open)
 * @param replayEntries entries read and applied while opening trees
 * @param replayBytes payload bytes of those entries
 * @param replayReadCalls provider {@code read} calls while opening trees
 * @param replayMillis wall time of tree opens (sum over trees), in milliseconds
 * @param replayCheckpointBytes checkpoint bytes loaded while opening trees
 * @param checkpoints checkpoints published
 * @param checkpointBytes bytes of those checkpoints
 * @param checkpointFailures checkpoints that failed (retried at the next threshold)
 * @param trims trim calls
 * @param flushes memtables flushed as level-0 runs (their manifests published)
 * @param compactions compactions published
 * @param runBytesWritten bytes of runs written by flushes and compactions
 * @param compactionBytesRead bytes of runs read by compactions
 * @param flushBytesWritten bytes of level-0 runs written by flushes (part of {@code runBytesWritten})
 * @param compactionBytesWritten bytes of runs written by compactions ({@code runBytesWritten - flushBytesWritten})
 * @param runBytesWrittenByLevel bytes of runs written into each level, index = level (0: flushes and idle merges of level 0, {@code n >= 1}:
 *     compactions into level n; level 7 counts deeper levels too), up to the deepest level written (immutable as the engine builds it)
 */
public record LatticeStats(long stageCalls, long commitCalls, long batchesCommitted, long entriesCommitted,
                           long bytesCommitted, long retries, long failedBatches, long reconciles, long replayEntries,
                           long replayBytes, long replayReadCalls, long replayMillis, long replayCheckpointBytes,
                           long checkpoints, long checkpointBytes, long checkpointFailures, long trims,
                           long flushes, long compactions, long runBytesWritten, long compactionBytesRead,
                           long flushBytesWritten, long compactionBytesWritten,
                           java.util.List<Long> runBytesWrittenByLevel) {
}
