package dev.lattice.cluster;

import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.TreeEntry;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;

/**
 * The scan of the previous wire protocol level ({@link PeerProtocols}), used while some hosting member does not
 * understand the held scans: per partition, pages of the owner's {@link Op#SCAN} (each page its own engine scan of
 * the partition, starting just after the last key returned, or below it in reverse), the partitions' heads merged in
 * key order, every partition's first page asked for at once.
 *
 * <p><b>Consistency: per page, not one cut.</b> Each key is returned at most once and in order, with a value it held
 * when its page was read (the owner's scan waits for atomic writes pending on its keys, as any read); but pages are
 * read at different moments, so the scan is not one snapshot: a multi-partition atomic write committed while it runs
 * may be seen in one partition and not in another, and within one partition a key written after its page was read
 * is not seen while a later key is. Nothing is held on the owners (no session to lose, none to close). Not
 * thread-safe (one reader, as any cursor).
 */
final class PagedScanCursor implements ScanCursor {

    private final PriorityQueue<Pager> heads;
    private boolean closed;

    PagedScanCursor(Router router, String tree, int partitions, String from, String to, boolean reverse,
                    int pageEntries) {
        Comparator<Pager> byKey = Comparator.comparing(p -> p.head().key());
        this.heads = new PriorityQueue<>(Math.max(1, partitions), reverse ? byKey.reversed() : byKey);
        Pager[] pagers = new Pager[partitions];
        for (int p = 0; p < partitions; p++) {
            pagers[p] = new Pager(router, new LogAddress(tree, p), from, to, reverse, pageEntries);
        }
        for (Pager p : pagers) {
            if (p.advance()) {
                heads.add(p);
            }
        }
    }

    /** @return true when an entry is left (may wait for a partition's next page) */
    @Override
    public boolean hasNext() {
        return !closed && !heads.isEmpty();
    }

    /**
     * @return the next entry in key order (reverse order for a reverse scan)
     * @throws NoSuchElementException if none is left
     */
    @Override
    public TreeEntry next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Pager p = heads.poll();
        TreeEntry e = p.take();
        if (p.advance()) {
            heads.add(p);
        }
        return e;
    }

    /** Ends the scan (nothing is held on the owners). Idempotent. */
    @Override
    public void close() {
        closed = true;
        heads.clear();
    }

    /** The pages of one partition. */
    private static final class Pager {
        private final Router router;
        private final LogAddress log;
        private final boolean reverse;
        private final int pageEntries;
        private String from;
        private String to;
        private final ArrayDeque<TreeEntry> page = new ArrayDeque<>();
        private boolean more = true;
        private CompletableFuture<Response> pending;

        Pager(Router router, LogAddress log, String from, String to, boolean reverse, int pageEntries) {
            this.router = router;
            this.log = log;
            this.from = from;
            this.to = to;
            this.reverse = reverse;
            this.pageEntries = pageEntries;
            this.pending = fetch();
        }

        private CompletableFuture<Response> fetch() {
            String f = from;
            String t = to;
            return router.send(log, Op.SCAN,
                    r -> new Request(Op.SCAN, f, t, null, pageEntries, reverse, null, null, r));
        }

        /** @return true when a head entry is ready (fetching the next page if needed) */
        boolean advance() {
            while (page.isEmpty() && (more || pending != null)) {
                if (pending == null) {
                    pending = fetch();
                }
                Response r = Router.await(pending);
                pending = null;
                for (int i = 0; i < r.keys().size(); i++) {
                    page.add(new TreeEntry(r.keys().get(i), r.values().get(i), r.versions()[i]));
                }
                more = r.flag();
                if (!page.isEmpty()) {
                    String last = page.peekLast().key();
                    if (reverse) {
                        to = last; // exclusive: the next page ends below it
                    } else {
                        from = last + '\0'; // the smallest key after it
                    }
                }
            }
            return !page.isEmpty();
        }

        TreeEntry head() {
            return page.peekFirst();
        }

        TreeEntry take() {
            return page.pollFirst();
        }
    }
}
