package dev.lattice.spi;

import java.io.InputStream;
import java.util.List;

/**
 * A log's runs: immutable byte objects written once and read by byte range (ARCHITECTURE.md 4.9). The engine keeps a
 * partition's sorted data in runs and names them from its manifest (the checkpoint); the log then only holds what
 * came after the manifest.
 *
 * <p>Rules every implementation keeps (the conformance suite's run store spec checks them):
 * <ul>
 *   <li><b>Whole or nothing.</b> A run is visible to {@link #read} only once {@link #write} returned, and then exactly
 *       as written. A write that fails or crashes leaves nothing readable; at most a leftover that {@link #list}
 *       reports with {@link RunInfo#complete()} false.</li>
 *   <li><b>Immutable.</b> Writing an existing id with the same bytes is a success; with other bytes a
 *       {@link RunConflictException}.</li>
 *   <li><b>Ranged reads are byte-exact</b> at every position, including across the provider's internal chunk
 *       boundaries.</li>
 *   <li><b>Isolated per log.</b> A log's runs are invisible to every other log.</li>
 *   <li>Safety against stale writers comes from the manifest, not from the run store: a run is referenced only by a
 *       published (fenced) manifest, so a stale writer's run is at worst an orphan the owner deletes. A provider may
 *       refuse a stale fence on {@code write}/{@code delete} but need not check it.</li>
 * </ul>
 *
 * <p>Thread-safe: any method may be called from any thread, reads concurrently with each other and with writes and
 * deletes of other runs.
 */
public interface RunStore {

    /**
     * Writes a run whole.
     *
     * @param log the log the run belongs to
     * @param fence the writer's fence on {@code log}
     * @param id the run's id
     * @param data the run's bytes; read to exactly {@code length} bytes, not closed
     * @param length the run's length in bytes, at most {@link RunLimits#maxRunBytes()}
     * @return what was stored (or found: a rewrite with the same bytes)
     * @throws IllegalArgumentException if {@code length} is negative, above the limit, or {@code data} ends before
     *     {@code length} bytes (nothing is stored)
     * @throws RunConflictException if the id exists with other bytes
     * @throws FencedException if the provider knows the fence is stale (optional, see the class comment)
     * @throws ProviderUnavailableException on a transient failure (nothing readable is left; retry)
     * @throws WalStorageException on any other backend failure or a closed provider
     */
    RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length);

    /**
     * Reads bytes of a run at a position.
     *
     * @param log the log
     * @param id the run
     * @param position the first byte to read, 0-based
     * @param dst the buffer to fill
     * @param off where in {@code dst} to start
     * @param len how many bytes to read at most
     * @return the number of bytes read: {@code len}, fewer only where the run ends, {@code -1} when {@code position}
     *     is at or past the end ({@code 0} when {@code len} is 0)
     * @throws IndexOutOfBoundsException if {@code off}/{@code len} do not fit {@code dst}
     * @throws IllegalArgumentException if {@code position} is negative
     * @throws RunNotFoundException if the run does not exist or is an incomplete leftover
     * @throws CorruptLogException if the stored bytes fail the provider's own check
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure or a closed provider
     */
    int read(LogId log, RunId id, long position, byte[] dst, int off, int len);

    /**
     * Deletes a run (complete or a leftover). Idempotent: deleting a missing run is a success. The caller ensures that
     * no published manifest references it and no reader still needs it.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}
     * @param id the run
     * @throws FencedException if the provider knows the fence is stale (optional)
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure or a closed provider
     */
    void delete(LogId log, Fence fence, RunId id);

    /**
     * Every run of a log, complete ones and leftovers of failed writes, for orphan collection.
     *
     * @param log the log
     * @return the runs, in id order
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure or a closed provider
     */
    List<RunInfo> list(LogId log);

    /**
     * The store's limits and costs.
     *
     * @return the limits; the same on every call
     */
    RunLimits limits();
}
