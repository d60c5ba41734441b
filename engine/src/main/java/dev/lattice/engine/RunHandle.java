package dev.lattice.engine;

import dev.lattice.engine.lsm.BlockCache;
import dev.lattice.engine.lsm.Manifest;
import dev.lattice.engine.lsm.RunReader;
import dev.lattice.engine.lsm.RunSource;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunStore;

/**
 * One live run of a partition: its manifest reference (key range and statistics, known without I/O) and a reader
 * whose footer, index and Bloom filter load on first use, so an open reads the manifest only. Thread-safe.
 */
final class RunHandle {

    final Manifest.RunRef ref;
    private final RunStore store;
    private final LogId log;
    private final BlockCache cache;
    private volatile RunReader reader;

    RunHandle(Manifest.RunRef ref, RunStore store, LogId log, BlockCache cache) {
        this.ref = ref;
        this.store = store;
        this.log = log;
        this.cache = cache;
    }

    /** @return the reader, opening it (footer, index, filter) on first use */
    RunReader reader() {
        RunReader r = reader;
        if (r == null) {
            synchronized (this) {
                r = reader;
                if (r == null) {
                    r = RunReader.open(RunSource.of(store, log, ref.id(), ref.lengthBytes()), cache);
                    reader = r;
                }
            }
        }
        return r;
    }

    LogId log() {
        return log;
    }

    /** @return true when the key lies inside the run's key range */
    boolean covers(String key) {
        String first = ref.meta().firstKey();
        return first != null && key.compareTo(first) >= 0 && key.compareTo(ref.meta().lastKey()) <= 0;
    }

    /** @return bytes held in the heap for this run (index and filter once loaded) */
    long residentBytes() {
        RunReader r = reader;
        return r == null ? 0 : r.residentBytes();
    }

    @Override
    public String toString() {
        return ref.id() + "@L" + ref.level();
    }
}
