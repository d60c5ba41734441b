package dev.lattice.spi;

/** Optional behaviours a provider declares in {@link ProviderDescriptor#features()}. */
public enum ProviderFeature {
    /**
     * {@code stage} only validates and keeps the batch in memory; the write happens in {@code commit}, whose one
     * backend operation is atomic. A staged batch does not survive a close or crash (reconcile finds nothing).
     */
    DEFERRED_STAGE,
    /** {@link LogState#physicalBytes()} is known (not {@code -1}). */
    PHYSICAL_BYTES,
    /** Stages of consecutive batches of one log may run concurrently from several threads. */
    CONCURRENT_STAGE,
    /** Committed data survives closing the provider and opening it again over the same storage. */
    PERSISTENT,
    /**
     * {@link WalStorageProvider#repair} truncates a damaged log at its first bad record (providers whose logs are
     * scanned for a torn tail: local files, append blobs).
     */
    REPAIR,
    /**
     * Calls are local (memory, local files): they never wait on a network or a remote server, so an engine may run
     * them on a writer's own thread instead of handing them to an I/O pool, and a hung call can only be a hung local
     * device. Providers that reach a server must not declare it: their calls stay on the engine's pool, where the
     * engine's call deadline answers the caller whatever the backend does.
     */
    LOCAL_CALLS,
    /**
     * {@link WalStorageProvider#runs()} returns a {@link RunStore}: the engine may keep a partition's data in runs
     * named by a manifest instead of whole checkpoints.
     */
    RUNS,
    /**
     * {@link WalStorageProvider#drop} deletes a log wholly (entries, staged batches, checkpoints, runs, epoch), so a
     * dropped tree leaves nothing behind on the provider.
     */
    DROP
}
