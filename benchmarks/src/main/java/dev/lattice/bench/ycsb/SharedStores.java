package dev.lattice.bench.ycsb;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Reference-counted stores shared by the per-thread instances of a YCSB binding: YCSB creates one {@code DB} per
 * client thread and calls {@code init()}/{@code cleanup()} on each, while the store (a Lattice, a RocksDB) must be
 * opened once per location. The first {@link #acquire} opens, the last {@link #release} closes. A runner can hold
 * one extra reference across the load and run phases so the store stays open between them. Thread-safe.
 *
 * @param <S> the store type
 */
public final class SharedStores<S extends AutoCloseable> {

    private final Map<String, Holder<S>> open = new HashMap<>();

    private static final class Holder<S> {
        final S store;
        int refs;

        Holder(S store) {
            this.store = store;
        }
    }

    /** Creates an empty registry. */
    public SharedStores() {
    }

    /**
     * Returns the store for {@code location}, opening it if no reference is held.
     *
     * @param location the store's identity (a provider URI, a directory)
     * @param opener opens the store; its exceptions propagate and nothing is registered
     * @return the store; pair every call with one {@link #release}
     */
    public synchronized S acquire(String location, Function<String, S> opener) {
        Holder<S> h = open.get(location);
        if (h == null) {
            h = new Holder<>(opener.apply(location));
            open.put(location, h);
        }
        h.refs++;
        return h.store;
    }

    /**
     * Drops one reference; the last one closes the store.
     *
     * @param location the store's identity
     * @throws IllegalStateException if no reference is held for {@code location}
     * @throws Exception whatever the store's {@code close()} throws
     */
    public synchronized void release(String location) throws Exception {
        Holder<S> h = open.get(location);
        if (h == null) {
            throw new IllegalStateException("no open store for " + location);
        }
        if (--h.refs == 0) {
            open.remove(location);
            h.store.close();
        }
    }

    /**
     * @param location the store's identity
     * @return the references held, 0 when closed
     */
    public synchronized int references(String location) {
        Holder<S> h = open.get(location);
        return h == null ? 0 : h.refs;
    }
}
