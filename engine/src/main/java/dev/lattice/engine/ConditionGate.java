package dev.lattice.engine;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides conditional writes (put-if-version / put-if-absent, atomic writes with preconditions) when their batch is
 * cut, so that the log holds only their outcome: a write whose condition held is logged without its condition (a
 * plain PUT, or an atomic entry without its {@code EXPECT} ops), one whose condition failed is not logged at all and
 * is answered at once. Live apply, replay, followers and every change feed then read the same unconditional entry.
 *
 * <p>The decision is the one apply would make in log order: it reads the applied (committed) state, and a write is
 * decided only once no earlier write that is not applied yet (in a batch in flight, or cut before it into the same
 * batch) touches a key its condition reads; until then it waits at the head of the queue ({@link #blocked}). Keys
 * of multi-log atomic writes are locked from before their prepare until their resolution is applied (a write on a
 * locked key is parked, not queued), so no other log's applier can settle pending nodes on a queued conditional
 * write's keys between its decision and its apply. Because the decided form is what is logged,
 * live apply and replay apply the same entry whatever the decision was: replay stays deterministic by construction.
 *
 * <p>Used under the log pipeline's lock only. Unconditional writes never reach this class.
 */
final class ConditionGate {

    private final PartitionState state;
    /** What each not-yet-applied write list touches, built on demand, by list identity. */
    private final Map<List<PendingWrite>, Touched> index = new IdentityHashMap<>();

    ConditionGate(PartitionState state) {
        this.state = state;
    }

    /** @return true when an entry of {@code kind} with mutations {@code ms} is a write this class decides */
    static boolean conditional(byte kind, List<WalRecord.Mutation> ms) {
        if (kind == WalRecord.KIND_MUTATIONS) {
            return ms.size() == 1 && ms.get(0).op() == WalRecord.Mutation.PUT_IF_VERSION;
        }
        if (kind != WalRecord.KIND_ATOMIC && kind != WalRecord.KIND_PREPARE) {
            return false;
        }
        for (WalRecord.Mutation m : ms) {
            if (m.op() == WalRecord.Mutation.EXPECT) {
                return true;
            }
        }
        return false;
    }

    /** Drops what is known of a write list (the pipeline's reused list of the batch being cut, before a new cut). */
    void forget(List<PendingWrite> ws) {
        if (!index.isEmpty()) {
            index.remove(ws);
        }
    }

    /**
     * Whether {@code w} must wait: an earlier write not applied yet touches a key its condition reads.
     *
     * @param unapplied the write lists ahead of {@code w} that are not applied yet, in log order (the batches in
     *     flight, then the batch being cut)
     */
    boolean blocked(PendingWrite w, List<List<PendingWrite>> unapplied) {
        prune(unapplied);
        for (List<PendingWrite> ws : unapplied) {
            if (ws.isEmpty()) {
                continue;
            }
            Touched t = index.computeIfAbsent(ws, x -> new Touched());
            t.extend(ws);
            for (WalRecord.Mutation m : w.mutations) {
                if (readsCondition(m) && t.touches(m.key())) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Decides {@code w} (its version assigned) against the applied state. When the condition holds, rewrites the
     * write's mutations and entry to their unconditional form and returns null; else returns the caller's answer
     * ({@link Boolean#FALSE}, or the {@link PartitionState.PreconditionFailure}) and the write must not be logged.
     */
    Object decide(PendingWrite w) {
        if (w.kind == WalRecord.KIND_MUTATIONS) {
            WalRecord.Mutation m = w.mutations.get(0);
            if (!state.versionMatches(m.key(), m.expectedVersion(), w.version)) {
                return Boolean.FALSE;
            }
            w.decided(List.of(WalRecord.Mutation.put(m.key(), m.keyBytes(), m.value())), Boolean.TRUE);
            return null;
        }
        PartitionState.PreconditionFailure f = state.check(w.mutations, PartitionState.timeOf(w.version));
        if (f != null) {
            return f;
        }
        List<WalRecord.Mutation> writes = new ArrayList<>(w.mutations.size());
        for (WalRecord.Mutation m : w.mutations) {
            if (m.op() != WalRecord.Mutation.EXPECT) {
                writes.add(m);
            }
        }
        w.decided(writes, null);
        return null;
    }

    private static boolean readsCondition(WalRecord.Mutation m) {
        return m.op() == WalRecord.Mutation.PUT_IF_VERSION || m.op() == WalRecord.Mutation.EXPECT;
    }

    /** Drops the indexes of lists that are applied (or failed) by now. */
    private void prune(List<List<PendingWrite>> unapplied) {
        if (index.isEmpty()) {
            return;
        }
        Iterator<List<PendingWrite>> it = index.keySet().iterator();
        while (it.hasNext()) {
            List<PendingWrite> k = it.next();
            boolean live = false;
            for (List<PendingWrite> u : unapplied) {
                if (u == k) {
                    live = true;
                    break;
                }
            }
            if (!live) {
                it.remove();
            }
        }
    }

    /** The keys and ranges a list of writes touches; extended as the list grows (the batch being cut). */
    private static final class Touched {
        private final Set<String> keys = new HashSet<>();
        private final List<String[]> ranges = new ArrayList<>(0);
        private boolean all;
        private int scanned;

        void extend(List<PendingWrite> ws) {
            for (int n = ws.size(); scanned < n; scanned++) {
                add(ws.get(scanned));
            }
        }

        private void add(PendingWrite w) {
            if (w.kind != WalRecord.KIND_MUTATIONS && w.kind != WalRecord.KIND_ATOMIC
                    && w.kind != WalRecord.KIND_PREPARE) {
                all = true; // a resolve or decision settles pending nodes: wait for it, it is rare
                return;
            }
            for (WalRecord.Mutation m : w.mutations) {
                switch (m.op()) {
                    case WalRecord.Mutation.PUT, WalRecord.Mutation.PUT_TTL, WalRecord.Mutation.DELETE,
                         WalRecord.Mutation.PUT_IF_VERSION -> keys.add(m.key());
                    case WalRecord.Mutation.DELETE_RANGE -> ranges.add(new String[] {m.key(), m.rangeEnd()});
                    default -> {
                        // EXPECT, TXN: read or control only
                    }
                }
            }
        }

        boolean touches(String key) {
            if (all || keys.contains(key)) {
                return true;
            }
            for (String[] r : ranges) {
                if (key.compareTo(r[0]) >= 0 && key.compareTo(r[1]) < 0) {
                    return true;
                }
            }
            return false;
        }
    }
}
