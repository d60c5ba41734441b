package dev.lattice.conformance;

import dev.lattice.spi.WalStorageProvider;

/**
 * One isolated storage location for the provider under test: a temporary directory, a fresh database schema, a
 * table or container name nobody else uses. The conformance suite asks for one per test
 * ({@link WalStorageProviderConformanceTest#newStorage()}), opens providers over it, and closes it at the end.
 *
 * <p>Implementations need not be thread-safe: the suite calls these methods from the test thread only (the
 * providers they return are used from many threads).
 */
public interface ProviderUnderTest extends AutoCloseable {

    /**
     * Opens a provider over this storage. Called again after the previous instance was closed, this is a
     * "reopen": every committed entry, trim watermark, epoch and checkpoint must still be there (staged batches may
     * be there, see {@link WalStorageProvider#reconcile}). When {@link #supportsConcurrentInstances()} is true the
     * suite may also call it while another instance is open.
     *
     * @return a new, open provider instance over this storage
     * @throws Exception when the provider cannot be opened (the test fails)
     */
    WalStorageProvider open() throws Exception;

    /**
     * Whether two provider instances may be open over this storage at once, like two processes sharing a backend.
     * False e.g. for a provider that takes an exclusive file lock; the suite then runs the multi-instance fencing
     * tests with one instance and two fences instead.
     *
     * @return true (the default) when {@link #open()} may be called while another instance is open
     */
    default boolean supportsConcurrentInstances() {
        return true;
    }

    /**
     * Deletes the storage and everything in it. Called once, after every provider the suite opened over it was
     * closed.
     *
     * @throws Exception when cleaning up fails (the test fails)
     */
    @Override
    void close() throws Exception;
}
