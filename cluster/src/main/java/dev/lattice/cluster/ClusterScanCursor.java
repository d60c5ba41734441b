package dev.lattice.cluster;

import dev.lattice.engine.LatticeSaturatedException;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.ScanSessionLostException;
import dev.lattice.engine.TreeEntry;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A scan over every partition of a cluster tree, as one snapshot: a held scan ({@link Op#SCAN_OPEN}) on each
 * partition's owner keeps that partition's engine snapshot for the whole scan, the cursor pulls its pages
 * ({@link Op#SCAN_NEXT}, one page fetched ahead) and a heap merges the partitions' heads in key order.
 *
 * <p><b>A consistent cut.</b> The partitions' snapshots are taken at different moments on different nodes, so on
 * their own they could show a multi-partition atomic write in one partition and not in another. The open therefore
 * validates them: each owner answers its first page with the partition's atomic-prepare counter read just before its
 * snapshot ({@link dev.lattice.engine.PartialTree#atomicPreparesSeen}); after every partition answered, each is
 * asked once more for its counter ({@link Op#SCAN_CHECK}). When every counter is unchanged (the same value also
 * proves the same hosting, and the session still held proves the same entity), the snapshots form a consistent cut:
 * take an atomic write W visible in partition a's snapshot, taken at time S_a; W was decided, so every participant b
 * of W registered its prepare (P_b) before the decision, which came before S_a, which came before b's check (V_b,
 * sent after every first page came back). If P_b came before the counter reading at b, b's snapshot opened after it,
 * and the engine's scan waits (bounded) for pending atomic writes holding keys of its range before it takes its
 * snapshot, so b's snapshot holds W's keys of the range (it waited for W's outcome, or W was resolved already). If
 * P_b came after the reading, it came before V_b, so b's counter changed and the validation fails. So every snapshot
 * shows W whole, or W has no key in that partition's part of the range. A failed validation closes the sessions and
 * opens them all again, after a short random pause, until the operation timeout (then
 * {@link LatticeSaturatedException}); a one-partition scan needs no validation. The counter is per partition, not per
 * range, so any atomic write prepared meanwhile in a scanned partition fails the round, even outside the range.
 *
 * <p><b>Progress beside continuous atomic writes.</b> A writer that never pauses prepares within nearly every
 * round's window, so from the second round on the cursor holds the prepares of the partitions it reads
 * ({@link CutHolds}: a write with no part prepared in the tree yet waits, bounded, at each partition's
 * {@link PrepareGate}; writes that had begun go on and end), opens and validates under the holds, and releases them
 * as soon as a round validated or the scan gave up. The holds only make a round likely to validate: every round is
 * validated as above, so the cut is consistent with or without them (an owner that does not serve holds, or a hold
 * that expired, costs rounds, not consistency).
 *
 * <p>A held snapshot lives on its owner until the scan ends or is closed, or sits idle past the session timeout (the
 * operation timeout), or its partition is handed off; then the next page fails with
 * {@link ScanSessionLostException} (the scan cannot go on from another snapshot consistently). Not thread-safe (one
 * reader, as any cursor); close it to release the owners' snapshots early.
 *
 * <p>Its operations are of wire protocol level 2: {@link ClusterTree#scan} uses it only while every hosting member
 * reads that level, and {@link PagedScanCursor} (per partition, not one cut) otherwise ({@link PeerProtocols}).
 */
final class ClusterScanCursor implements ScanCursor {

    private final Router router;
    private final PriorityQueue<Pager> heads;
    private final List<Pager> pagers = new ArrayList<>();
    private boolean closed;
    private int rounds;
    private boolean held;

    ClusterScanCursor(Router router, CutHolds holds, String tree, int partitions, String from, String to,
                      boolean reverse, int pageEntries) {
        this.router = router;
        Comparator<Pager> byKey = Comparator.comparing(p -> p.head().key());
        this.heads = new PriorityQueue<>(Math.max(1, partitions), reverse ? byKey.reversed() : byKey);
        long deadline = System.nanoTime() + router.operationTimeout().toNanos();
        CutHolds.Cut hold = holds.begin(tree, partitions);
        try {
            for (int round = 1; ; round++) {
                boolean holding = round > 1 && hold.ensure();
                List<Pager> opened = open(tree, partitions, from, to, reverse, pageEntries);
                if (partitions == 1 || validated(opened)) {
                    rounds = round;
                    pagers.addAll(opened);
                    break;
                }
                opened.forEach(Pager::close);
                if (System.nanoTime() > deadline) {
                    throw new LatticeSaturatedException("scan over " + partitions + " partitions of tree '" + tree
                            + "' found an atomic write prepared in one of them while its snapshots were taken, in"
                            + " each of " + round + " rounds within the operation timeout of "
                            + router.operationTimeout().toMillis() + " ms" + (hold.sent() ? " (with prepare holds)"
                            : " (without prepare holds)") + "; no consistent snapshot was taken", null);
                }
                pause(round, holding);
            }
        } finally {
            held = hold.sent();
            hold.release(); // the snapshots are taken (or given up): writers go on
        }
        for (Pager p : pagers) {
            if (p.advance()) {
                heads.add(p);
            }
        }
    }

    /** @return true when this scan placed prepare holds to take its snapshot */
    boolean held() {
        return held;
    }

    /** @return how many rounds of opens it took to take a consistent snapshot (1 when the first was) */
    int rounds() {
        return rounds;
    }

    /** One round: a held scan on every partition at once; on an error the ones opened are closed. */
    private List<Pager> open(String tree, int partitions, String from, String to, boolean reverse, int pageEntries) {
        List<CompletableFuture<Response>> firsts = new ArrayList<>(partitions);
        for (int p = 0; p < partitions; p++) {
            firsts.add(router.send(new LogAddress(tree, p), Op.SCAN_OPEN,
                    r -> new Request(Op.SCAN_OPEN, from, to, null, pageEntries, reverse, null, null, r)));
        }
        List<Pager> opened = new ArrayList<>(partitions);
        RuntimeException failure = null;
        for (int p = 0; p < partitions; p++) {
            try {
                opened.add(new Pager(router, new LogAddress(tree, p), Router.await(firsts.get(p))));
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            opened.forEach(Pager::close);
            throw failure;
        }
        return opened;
    }

    /** @return true when every partition's prepare counter is what it was before its snapshot (see the class doc) */
    private boolean validated(List<Pager> opened) {
        List<CompletableFuture<Response>> checks = new ArrayList<>(opened.size());
        for (Pager p : opened) {
            checks.add(p.check());
        }
        boolean same = true;
        RuntimeException failure = null;
        for (int i = 0; i < opened.size(); i++) {
            try {
                same &= Router.await(checks.get(i)).number() == opened.get(i).preparesSeen;
            } catch (ScanSessionLostException e) {
                same = false; // handed off or restarted meanwhile: another round
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            opened.forEach(Pager::close);
            throw failure;
        }
        return same;
    }

    /**
     * Between rounds: a short random pause, growing with the rounds without holds; with holds, only long enough for
     * the writes that had begun to end (the holds are short).
     */
    static void pause(int round, boolean holding) {
        long micros = holding ? ThreadLocalRandom.current().nextLong(100, 1000)
                : ThreadLocalRandom.current().nextLong(100, 1000L * Math.min(20, 1 + round));
        try {
            TimeUnit.MICROSECONDS.sleep(micros);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new dev.lattice.engine.LatticeException("interrupted while opening a scan", e);
        }
    }

    /**
     * @return true when an entry is left
     * @throws ScanSessionLostException if an owner lost the scan's snapshot (see the class doc)
     */
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
        try {
            if (p.advance()) {
                heads.add(p);
            }
        } catch (RuntimeException err) {
            close();
            throw err;
        }
        return e;
    }

    /** Releases the owners' held snapshots (without waiting for their answers). Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            heads.clear();
            pagers.forEach(Pager::close);
        }
    }

    /** The pages of one partition's held scan. */
    private static final class Pager {
        private final Router router;
        private final LogAddress log;
        private final long session;
        final long preparesSeen;
        private final ArrayDeque<TreeEntry> page = new ArrayDeque<>();
        private boolean more;
        private long nextIndex = 1;
        private CompletableFuture<Response> pending;
        private boolean closed;

        Pager(Router router, LogAddress log, Response first) {
            this.router = router;
            this.log = log;
            this.session = first.session();
            this.preparesSeen = first.number();
            add(first);
        }

        private void add(Response r) {
            for (int i = 0; i < r.keys().size(); i++) {
                page.add(new TreeEntry(r.keys().get(i), r.values().get(i), r.versions()[i]));
            }
            more = r.flag();
        }

        CompletableFuture<Response> check() {
            return router.send(log, Op.SCAN_CHECK, r -> Request.scanStep(Op.SCAN_CHECK, session, 0, r));
        }

        private CompletableFuture<Response> fetch() {
            long index = nextIndex++;
            return router.send(log, Op.SCAN_NEXT, r -> Request.scanStep(Op.SCAN_NEXT, session, index, r));
        }

        /** @return true when a head entry is ready (waiting for the next page if needed; the one after is asked) */
        boolean advance() {
            while (page.isEmpty() && more) {
                if (pending == null) {
                    pending = fetch();
                }
                Response r = Router.await(pending);
                pending = null;
                add(r);
            }
            if (more && pending == null) {
                pending = fetch(); // one page ahead while this one is read
            }
            if (!more) {
                close(); // the owner closed its cursor already; this drops the session
            }
            return !page.isEmpty();
        }

        TreeEntry head() {
            return page.peekFirst();
        }

        TreeEntry take() {
            return page.pollFirst();
        }

        void close() {
            if (!closed) {
                closed = true;
                router.send(log, Op.SCAN_CLOSE, r -> Request.scanStep(Op.SCAN_CLOSE, session, 0, r));
            }
        }
    }
}
