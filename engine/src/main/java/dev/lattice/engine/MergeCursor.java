package dev.lattice.engine;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A scan over a tree's partitions: a k-way merge of the partitions' ordered iterators, reading each key as of the
 * snapshot taken when the scan started (atomic writes published later are not seen, and none is seen in part).
 * The merge is a binary heap of one reusable source per partition, replaced at the top for each entry, so the
 * merge allocates nothing per entry beyond the {@link TreeEntry} it hands out; a one-partition scan skips the heap.
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

    private final Source[] heap;
    private int size;
    private final boolean reverse;
    private final long snapshot;
    private final java.lang.ref.Cleaner.Cleanable lease;
    private boolean closed;

    /**
     * Takes over {@code snapshot}, opened before the iterators were created; releases it when done.
     *
     * @param its the partitions' iterators, each ascending (descending when {@code reverse})
     */
    MergeCursor(List<Iterator<Map.Entry<String, Object>>> its, boolean reverse, Visibility vis, long snapshot) {
        this.reverse = reverse;
        this.snapshot = snapshot;
        this.lease = CLEANER.register(this, new SnapshotLease(vis, snapshot));
        this.heap = new Source[its.size()];
        for (Iterator<Map.Entry<String, Object>> it : its) {
            Source s = new Source(it);
            if (s.advance(snapshot)) {
                heap[size++] = s;
            }
        }
        for (int i = size / 2 - 1; i >= 0; i--) {
            siftDown(i);
        }
        if (size == 0) {
            close();
        }
    }

    private boolean before(Source a, Source b) {
        int c = a.key.compareTo(b.key);
        return reverse ? c > 0 : c < 0;
    }

    private void siftDown(int i) {
        Source s = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && before(heap[right], heap[child])) {
                child = right;
            }
            if (!before(heap[child], s)) {
                break;
            }
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = s;
    }

    @Override
    public boolean hasNext() {
        return !closed && size > 0;
    }

    @Override
    public TreeEntry next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Source top = heap[0];
        TreeEntry out = new TreeEntry(top.key, top.value.value(), top.value.version());
        if (!top.advance(snapshot)) {
            heap[0] = heap[--size];
            heap[size] = null;
        }
        if (size > 1) {
            siftDown(0);
        } else if (size == 0) {
            lease.clean();
        }
        return out;
    }

    @Override
    public void close() {
        closed = true;
        for (int i = 0; i < size; i++) {
            heap[i] = null;
        }
        size = 0;
        lease.clean();
    }
}
