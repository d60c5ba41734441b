package dev.lattice.engine;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A scan over a tree's partitions: a k-way merge of the partitions' ordered iterators, reading each key as of the
 * snapshot taken when the scan started (atomic writes published later are not seen, and none is seen in part).
 * The merge is a {@link LoserTree} over one reusable source per partition: each entry costs one comparison per tree
 * level (log2 of the partition count) and no allocation beyond the {@link TreeEntry} it hands out; a one-partition
 * scan has no tree levels and compares nothing.
 * One thread at a time.
 */
final class MergeCursor implements ScanCursor {

    /** One partition's iterator and its current head. */
    private static final class Source {
        final Iterator<Map.Entry<String, Object>> it;
        String key;
        Versioned value;

        Source(Iterator<Map.Entry<String, Object>> it) {
            this.it = it;
        }

        /** Moves to the next key visible in the snapshot; false when the partition is done. */
        boolean advance(long snapshot) {
            while (it.hasNext()) {
                Map.Entry<String, Object> e = it.next();
                Versioned v = PartitionState.at(e.getValue(), snapshot);
                if (v != null) {
                    key = e.getKey();
                    value = v;
                    return true;
                }
            }
            key = null;
            value = null;
            return false;
        }
    }

    /** Keeps a scan's snapshot registered until the cursor is closed, exhausted, or garbage. */
    private static final class SnapshotLease implements Runnable {
        private final Visibility vis;
        private final long seq;
        private final AtomicBoolean released = new AtomicBoolean();

        SnapshotLease(Visibility vis, long seq) {
            this.vis = vis;
            this.seq = seq;
        }

        @Override
        public void run() {
            if (released.compareAndSet(false, true)) {
                vis.closeSnapshot(seq);
            }
        }
    }

    private static final java.lang.ref.Cleaner CLEANER = java.lang.ref.Cleaner.create();

    /** Stands in for every source once the cursor is closed. */
    private static final Source DONE = new Source(java.util.Collections.emptyIterator());

    private final Source[] src;
    private final LoserTree merge;
    private final long snapshot;
    private final java.lang.ref.Cleaner.Cleanable lease;
    private boolean closed;

    /**
     * Takes over {@code snapshot}, opened before the iterators were created; releases it when done.
     *
     * @param its the partitions' iterators, each ascending (descending when {@code reverse}), their keys disjoint
     */
    MergeCursor(List<Iterator<Map.Entry<String, Object>>> its, boolean reverse, Visibility vis, long snapshot) {
        this.snapshot = snapshot;
        this.lease = CLEANER.register(this, new SnapshotLease(vis, snapshot));
        int k = Math.max(1, its.size());
        this.src = new Source[k];
        this.merge = new LoserTree(k, reverse);
        for (int i = 0; i < its.size(); i++) {
            Source s = new Source(its.get(i));
            s.advance(snapshot);
            src[i] = s;
            merge.init(i, s.key);
        }
        if (its.isEmpty()) {
            src[0] = DONE;
        }
        merge.start();
        if (merge.winnerKey() == null) {
            close();
        }
    }

    @Override
    public boolean hasNext() {
        return !closed && merge.winnerKey() != null;
    }

    @Override
    public TreeEntry next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Source top = src[merge.winner()];
        TreeEntry out = new TreeEntry(top.key, top.value.value(), top.value.version());
        top.advance(snapshot);
        merge.advanceWinner(top.key);
        if (merge.winnerKey() == null) {
            lease.clean();
        }
        return out;
    }

    @Override
    public void close() {
        closed = true;
        merge.finishAll();
        java.util.Arrays.fill(src, DONE); // the partitions' iterators (and the layer sets they pin) become garbage
        lease.clean();
    }
}
