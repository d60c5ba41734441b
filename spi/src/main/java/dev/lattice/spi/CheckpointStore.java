package dev.lattice.spi;

import java.io.InputStream;
import java.util.Optional;

/**
 * Stores checkpoints: snapshots of a partition's state as of an offset, so that replay reads the latest checkpoint
 * plus the log after it. Obtained from {@link WalStorageProvider#checkpoints()}; shares its provider's life cycle
 * (closed provider: {@link IllegalStateException}) and argument rules. Thread-safe.
 */
public interface CheckpointStore {

    /**
     * Publishes a checkpoint atomically: a reader sees the previous latest checkpoint or this one, never a partial
     * one, whatever the crash point. Reads {@code data} to its end; does not close it.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}; must be current
     * @param throughOffset the snapshot covers every entry at or below this offset; {@code >= -1}, at most the
     *     committed tail, and at least the latest checkpoint's through-offset (equal replaces it)
     * @param formatVersion the engine's snapshot format version, {@code >= 0}, stored verbatim
     * @param data the snapshot bytes
     * @return the published checkpoint's description
     * @throws FencedException if the fence is stale (the previous checkpoint stays latest)
     * @throws OffsetConflictException if {@code throughOffset} is above the committed tail or below the latest
     *     checkpoint's
     * @throws CheckpointTooLargeException if the stream is longer than {@link ProviderLimits#maxCheckpointBytes()}
     * @throws ProviderUnavailableException on a transient failure (the previous checkpoint stays latest)
     * @throws WalStorageException on any other failure, including an {@code IOException} from {@code data} (cause)
     */
    CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion, InputStream data);

    /**
     * The latest published checkpoint of a log.
     *
     * @param log the log
     * @return the checkpoint with the highest through-offset, or empty when none was published
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    Optional<CheckpointInfo> latest(LogId log);

    /**
     * Opens a published checkpoint's bytes. The caller closes the stream. A stream whose bytes fail the provider's
     * integrity check throws {@link CorruptLogException} from {@code read}.
     *
     * @param log the log
     * @param info a description returned by {@link #latest} or {@link #publish}
     * @return the bytes, exactly as published
     * @throws WalStorageException if that checkpoint no longer exists or cannot be read
     * @throws ProviderUnavailableException on a transient failure
     */
    InputStream open(LogId log, CheckpointInfo info);

    /**
     * Deletes checkpoints whose through-offset is below {@code throughOffsetExclusive}. Never deletes the latest
     * checkpoint. Idempotent.
     *
     * @param log the log
     * @param throughOffsetExclusive checkpoints with a lower through-offset go
     * @throws ProviderUnavailableException on a transient failure
     * @throws WalStorageException on any other backend failure
     */
    void deleteBefore(LogId log, long throughOffsetExclusive);
}
