package dev.lattice.engine.lsm;

import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunStore;

/**
 * Where a {@link RunReader} reads a run's bytes from: usually a provider's {@link RunStore}. Implementations are
 * thread-safe (readers read blocks from many threads).
 */
public interface RunSource {

    /**
     * The log the run belongs to.
     *
     * @return the log
     */
    LogId log();

    /**
     * The run.
     *
     * @return its id
     */
    RunId id();

    /**
     * The run's length.
     *
     * @return bytes
     */
    long length();

    /**
     * Reads bytes, as {@link RunStore#read}.
     *
     * @param position first byte
     * @param dst buffer
     * @param off offset in {@code dst}
     * @param len bytes wanted
     * @return bytes read, fewer only at the end, -1 at or past the end
     */
    int read(long position, byte[] dst, int off, int len);

    /**
     * A source over a run store.
     *
     * @param store the store
     * @param log the log
     * @param id the run
     * @param length the run's length in bytes (from the manifest)
     * @return the source
     */
    static RunSource of(RunStore store, LogId log, RunId id, long length) {
        return new RunSource() {
            @Override
            public LogId log() {
                return log;
            }

            @Override
            public RunId id() {
                return id;
            }

            @Override
            public long length() {
                return length;
            }

            @Override
            public int read(long position, byte[] dst, int off, int len) {
                return store.read(log, id, position, dst, off, len);
            }
        };
    }
}
