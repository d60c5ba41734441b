package dev.lattice.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The key locks of one log: a multi-log atomic write locks its keys in each participant log from before its prepare
 * entry is admitted until its resolve entry is applied, so that no other entry on those keys lies between the two in
 * the log. Writes and lock requests on a locked key wait here in arrival order and are let through when the locks
 * are released (a waiter is never overtaken by a later one on the same keys).
 *
 * <p>Not thread-safe: guarded by the owning {@link LogPipeline}'s lock.
 */
final class KeyLocks {

    /** A multi-log atomic write waiting to lock its keys. */
    private static final class LockRequest {
        final Txn txn;
        final List<String> keys;
        final CompletableFuture<Void> granted = new CompletableFuture<>();

        LockRequest(Txn txn, List<String> keys) {
            this.txn = txn;
            this.keys = keys;
        }
    }

    // key -> owner; owner id -> its keys; writes and lock requests waiting on them
    private final HashMap<String, Txn> locks = new HashMap<>();
    private final HashMap<String, List<String>> lockedKeys = new HashMap<>();
    private final ArrayDeque<Object> parked = new ArrayDeque<>();

    /** @return true when {@code w} must wait: one of its keys is locked by another atomic write */
    boolean blocks(PendingWrite w) {
        return !locks.isEmpty() && conflicts(w.keys(), w.txn);
    }

    /** Parks a write until its keys are free ({@link #release}). */
    void park(PendingWrite w) {
        parked.add(w);
    }

    /**
     * Locks {@code keys} for {@code t} now, or parks the request until no other write holds any of them.
     *
     * @return completes when granted (exceptionally when {@link #failAll} is called first)
     */
    CompletableFuture<Void> lock(Txn t, List<String> keys) {
        if (conflicts(keys, t)) {
            LockRequest r = new LockRequest(t, keys);
            parked.add(r);
            return r.granted;
        }
        grant(t, keys);
        return CompletableFuture.completedFuture(null);
    }

    /** Locks keys without waiting (replay resolution at open, when nothing else can hold them). */
    void lockNow(Txn t, List<String> keys) {
        grant(t, keys);
    }

    /**
     * Releases the locks of atomic write {@code id} (and drops its own waiting request), then lets through the
     * parked writes and requests that nothing blocks any more.
     *
     * @param admit takes each write let through (into the admission queue)
     * @return the lock requests granted: complete them outside the pipeline's lock
     */
    List<CompletableFuture<Void>> release(String id, Consumer<PendingWrite> admit) {
        parked.removeIf(o -> o instanceof LockRequest r && r.txn.id.equals(id));
        List<String> ks = lockedKeys.remove(id);
        if (ks != null) {
            for (String k : ks) {
                Txn o = locks.get(k);
                if (o != null && o.id.equals(id)) {
                    locks.remove(k);
                }
            }
        }
        return admitParked(admit);
    }

    /** Fails every parked write and lock request. */
    void failAll(Supplier<RuntimeException> cause, Consumer<PendingWrite> failWrite) {
        Object o;
        while ((o = parked.poll()) != null) {
            if (o instanceof PendingWrite w) {
                failWrite.accept(w);
            } else {
                ((LockRequest) o).granted.completeExceptionally(cause.get());
            }
        }
    }

    private boolean conflicts(List<String> keys, Txn owner) {
        for (String k : keys) {
            Txn o = locks.get(k);
            if (o != null && o != owner) {
                return true;
            }
        }
        return false;
    }

    private void grant(Txn t, List<String> keys) {
        for (String k : keys) {
            locks.put(k, t);
        }
        lockedKeys.computeIfAbsent(t.id, id -> new ArrayList<>()).addAll(keys);
    }

    private List<CompletableFuture<Void>> admitParked(Consumer<PendingWrite> admit) {
        if (parked.isEmpty()) {
            return List.of();
        }
        List<CompletableFuture<Void>> granted = new ArrayList<>();
        Set<String> blocked = new HashSet<>();
        Iterator<Object> it = parked.iterator();
        while (it.hasNext()) {
            Object o = it.next();
            List<String> ks = o instanceof PendingWrite w ? w.keys() : ((LockRequest) o).keys;
            Txn owner = o instanceof PendingWrite w ? w.txn : ((LockRequest) o).txn;
            boolean wait = conflicts(ks, owner);
            for (int i = 0; !wait && i < ks.size(); i++) {
                wait = blocked.contains(ks.get(i));
            }
            if (wait) {
                blocked.addAll(ks);
                continue;
            }
            it.remove();
            if (o instanceof PendingWrite w) {
                admit.accept(w);
            } else {
                LockRequest r = (LockRequest) o;
                grant(r.txn, r.keys);
                granted.add(r.granted);
            }
        }
        return granted;
    }
}
