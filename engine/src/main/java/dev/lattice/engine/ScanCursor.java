package dev.lattice.engine;

import java.util.Iterator;

/**
 * An ordered iterator over a key range of a tree, merged across the tree's partitions. Weakly consistent: every
 * entry it returns was committed, keys come in strict order, a key that is not written during the scan is
 * returned exactly once (if present), and a key written during the scan is returned with one of its committed
 * values or skipped if deleted. Not thread-safe: one thread iterates it. Close it when done (it holds no
 * resources today, but may in later versions).
 */
public interface ScanCursor extends Iterator<TreeEntry>, AutoCloseable {

    /** Releases the cursor; further {@code next()} calls throw {@link java.util.NoSuchElementException}. */
    @Override
    void close();
}
