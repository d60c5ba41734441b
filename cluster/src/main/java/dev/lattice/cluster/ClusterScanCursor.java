package dev.lattice.cluster;

import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.TreeEntry;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;

/**
 * A scan over every partition of a cluster tree: one pager per partition fetches pages of its owner's scan (the
 * next page starts just after the last key seen, or below it in reverse), and a heap merges the pagers' heads in
 * key order. The first page of every partition is asked for at once. Not thread-safe (one reader, as any cursor).
 */
final class ClusterScanCursor implements ScanCursor {

    private final PriorityQueue<Pager> heads;
    private boolean closed;

    ClusterScanCursor(Router router, String tree, int partitions, String from, String to, boolean reverse,
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

    @Override
    public boolean hasNext() {
        return !closed && !heads.isEmpty();
    }

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

    @Override
    public void close() {
        closed = true;
        heads.clear();
    }

    /** The pages of one partition's scan. */
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
            return router.send(log, Op.SCAN, r -> new Request(Op.SCAN, f, t, null, pageEntries, reverse, null, null,
                    r));
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
                        to = last;
                    } else {
                        from = last + '\0';
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
