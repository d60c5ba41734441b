package dev.lattice.bench.ycsb;

import dev.lattice.engine.lsm.RunFormat;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testkit.ForwardingProvider;

import java.util.concurrent.atomic.LongAdder;

/**
 * A provider decorator that counts run-store reads, split by what the engine reads: a run's footer (exactly
 * {@link RunFormat#FOOTER_BYTES} bytes, read once when a run's reader opens, followed by three more reads of its
 * filter, index and meta blocks) or anything else (data blocks: each is one block-cache miss of a get, a scan or a
 * compaction). Counts reads as calls; bytes are the bytes asked for. Everything else is forwarded untouched. The
 * split relies on the engine's reader reading each block with one call, which the Chronicle run store does (it reads
 * the whole range asked for); a store returning short reads would inflate the data-read count.
 *
 * <p>Thread-safe: counters are {@link LongAdder}s.
 */
public final class RunReadCounter extends ForwardingProvider {

    private final LongAdder reads = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder footers = new LongAdder();

    /**
     * Wraps a provider.
     *
     * @param delegate the provider doing the work
     * @throws NullPointerException if {@code delegate} is null
     */
    public RunReadCounter(WalStorageProvider delegate) {
        super(delegate);
    }

    @Override
    protected int readRun(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        reads.increment();
        bytes.add(len);
        if (len == RunFormat.FOOTER_BYTES) {
            footers.increment();
        }
        return delegate.runs().read(log, id, position, dst, off, len); // no interception lambda: count, then read
    }

    /** @return run-store read calls so far */
    public long reads() {
        return reads.sum();
    }

    /** @return bytes asked for by those calls */
    public long bytes() {
        return bytes.sum();
    }

    /** @return run readers opened so far (footer reads) */
    public long readersOpened() {
        return footers.sum();
    }

    /**
     * @return reads other than a reader's four opening reads (footer, filter, index, meta): data blocks read on a
     *     block-cache miss, by gets, scans and compactions
     */
    public long dataBlockReads() {
        return reads.sum() - 4 * footers.sum();
    }
}
