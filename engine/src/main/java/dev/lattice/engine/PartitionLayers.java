package dev.lattice.engine;

import dev.lattice.engine.lsm.RunEntry;
import dev.lattice.engine.lsm.RunReader;
import dev.lattice.spi.RunNotFoundException;

import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The layers of a partition below its memtable (ARCHITECTURE.md 5.3): frozen memtables waiting for their flush,
 * newest first, then the live runs (level 0 newest first, then the deeper levels). Readers take the current
 * {@link Layers} (immutable) and look down through it; the partition's maintenance replaces it when a flush or a
 * compaction publishes a manifest. Runs a compaction replaced are deleted once no scan holds a layer set that still
 * names them.
 *
 * <p>Thread-safe: any thread reads; one maintenance task at a time per partition changes the layers.
 */
final class PartitionLayers {

    private static final Cleaner CLEANER = Cleaner.create();

    /**
     * One immutable view of the layers.
     *
     * @param ranges the range deletes of every frozen memtable and run (all visible to every snapshot)
     */
    record Layers(List<FrozenMemtable> frozen, List<RunHandle> runs, long generation,
                  List<dev.lattice.engine.lsm.RangeTombstone> ranges) {

        Layers(List<FrozenMemtable> frozen, List<RunHandle> runs, long generation) {
            this(frozen, runs, generation, rangesOf(frozen, runs));
        }

        private static List<dev.lattice.engine.lsm.RangeTombstone> rangesOf(List<FrozenMemtable> frozen,
                                                                          List<RunHandle> runs) {
            List<dev.lattice.engine.lsm.RangeTombstone> out = new ArrayList<>();
            for (FrozenMemtable f : frozen) {
                out.addAll(f.ranges());
            }
            for (RunHandle r : runs) {
                out.addAll(r.ref.meta().ranges());
            }
            return List.copyOf(out);
        }

        boolean isEmpty() {
            return frozen.isEmpty() && runs.isEmpty();
        }

        /** @return the runs of {@code level}, in list order */
        List<RunHandle> level(int level) {
            List<RunHandle> out = new ArrayList<>();
            for (RunHandle r : runs) {
                if (r.ref.level() == level) {
                    out.add(r);
                }
            }
            return out;
        }
    }

    private record Retired(RunHandle run, long generation) {
    }

    private volatile Layers layers = new Layers(List.of(), List.of(), 0);
    private final Map<Layers, AtomicInteger> pins = new ConcurrentHashMap<>();
    private final List<Retired> retired = new ArrayList<>();
    private final Consumer<RunHandle> deleter;

    /** @param deleter deletes a run from the run store (called once no reader can reach it; may throw) */
    PartitionLayers(Consumer<RunHandle> deleter) {
        this.deleter = deleter;
    }

    Layers current() {
        return layers;
    }

    boolean isEmpty() {
        return layers.isEmpty();
    }

    // ------------------------------------------------------------------ changes (maintenance, applier)

    /** Applier, at a freeze: the frozen memtable becomes the top layer below the new memtable. */
    synchronized void addFrozen(FrozenMemtable f) {
        Layers l = layers;
        List<FrozenMemtable> frozen = new ArrayList<>(l.frozen.size() + 1);
        frozen.add(f);
        frozen.addAll(l.frozen);
        layers = new Layers(List.copyOf(frozen), l.runs, l.generation + 1);
    }

    /** At open: the runs of the manifest. */
    synchronized void setRuns(List<RunHandle> runs) {
        layers = new Layers(List.of(), List.copyOf(runs), layers.generation + 1);
    }

    /** After a move: the same runs, read from the target provider's run store (the mover copied them). */
    synchronized void rebind(dev.lattice.spi.RunStore store, dev.lattice.engine.lsm.BlockCache cache) {
        Layers l = layers;
        List<RunHandle> runs = new ArrayList<>(l.runs.size());
        for (RunHandle r : l.runs) {
            runs.add(new RunHandle(r.ref, store, r.log(), cache));
        }
        layers = new Layers(l.frozen, List.copyOf(runs), l.generation + 1);
    }

    /** After a flush's manifest is published: its runs replace the frozen memtable. */
    synchronized void flushed(FrozenMemtable f, List<RunHandle> newRuns) {
        Layers l = layers;
        List<FrozenMemtable> frozen = new ArrayList<>(l.frozen);
        frozen.removeIf(x -> x == f);
        List<RunHandle> runs = new ArrayList<>(newRuns.size() + l.runs.size());
        runs.addAll(newRuns);
        runs.addAll(l.runs);
        layers = new Layers(List.copyOf(frozen), List.copyOf(runs), l.generation + 1);
    }

    /** After a compaction's manifest is published: {@code outputs} replace {@code inputs}, which retire. */
    synchronized void compacted(Collection<RunHandle> inputs, List<RunHandle> outputs, List<RunHandle> ordered) {
        Layers l = layers;
        layers = new Layers(l.frozen, List.copyOf(ordered), l.generation + 1);
        for (RunHandle r : inputs) {
            retired.add(new Retired(r, layers.generation));
        }
        sweep();
    }

    /** Deletes retired runs that no pinned layer set names any more. */
    synchronized void sweep() {
        long oldestPinned = Long.MAX_VALUE;
        for (Layers l : pins.keySet()) {
            oldestPinned = Math.min(oldestPinned, l.generation);
        }
        for (Iterator<Retired> it = retired.iterator(); it.hasNext(); ) {
            Retired r = it.next();
            if (oldestPinned >= r.generation) {
                try {
                    deleter.accept(r.run);
                    it.remove();
                } catch (RuntimeException e) {
                    return; // retried at the next sweep; an orphan left at a crash is collected at the next open
                }
            }
        }
    }

    /** @return ids of runs retired and not deleted yet */
    synchronized List<String> retiredIds() {
        List<String> out = new ArrayList<>(retired.size());
        for (Retired r : retired) {
            out.add(r.run.ref.id().value());
        }
        return out;
    }

    /** @return runs retired and not deleted yet */
    synchronized int retiredCount() {
        return retired.size();
    }

    // ------------------------------------------------------------------ reads

    /**
     * The layers a scan of {@link #scan} reads (pinned for it), so that its range deletes are taken from the same
     * layers as its entries: a compaction published meanwhile may have applied a range delete to its output and
     * dropped it, while the scan still reads the entries it covered from the inputs.
     *
     * @param scan an iterator returned by {@link #scan}
     * @return its pinned layers
     */
    static Layers layersOf(Iterator<Map.Entry<String, Object>> scan) {
        return ((ScanMerge) scan).release.layers;
    }

    /**
     * Looks a key up below the memtable.
     *
     * @param snapshot the reader's snapshot ({@code Long.MAX_VALUE} for the newest)
     * @return a {@link Versioned}, {@link Tombstone#ABSENT} when deleted, or null when no layer has the key
     * @throws dev.lattice.spi.CorruptRunException if a run block fails its check
     */
    Object find(String key, long snapshot) {
        for (int attempt = 0; ; attempt++) {
            Layers l = layers;
            try {
                return find(l, key, snapshot);
            } catch (RunNotFoundException e) {
                if (attempt >= 3 || l == layers) {
                    throw e; // not a run a compaction just replaced: the run store lost it
                }
            }
        }
    }

    static Object find(Layers l, String key, long snapshot) {
        for (FrozenMemtable f : l.frozen) {
            Object r = PartitionState.topAt(f.map().get(key), snapshot);
            if (r != null) {
                return r;
            }
        }
        dev.lattice.engine.lsm.LookupKey lookup = null;
        for (RunHandle h : l.runs) {
            if (!h.covers(key)) {
                continue;
            }
            if (lookup == null) {
                lookup = new dev.lattice.engine.lsm.LookupKey(key);
            }
            RunEntry e = h.reader().get(lookup, Long.MAX_VALUE);
            if (e != null) {
                return view(e);
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ scans

    /**
     * The visible entries of the partition in {@code [from, to)}: the memtable merged with every layer, each key
     * read from the highest layer that knows it, as of {@code snapshot}. The layers stay alive (not deleted by
     * compaction) until the iterator is exhausted or unreachable.
     *
     * @param memtable the memtable's range view, in scan order
     * @return entries whose values are {@link Versioned}, in scan order; one entry object refilled for each key
     *     (read it before the next call)
     */
    Iterator<Map.Entry<String, Object>> scan(NavigableMap<String, Object> memtable, String from, String to,
                                             boolean reverse, long snapshot) {
        Layers l = pin();
        ScanMerge it = new ScanMerge(memtable, l, from, to, reverse, snapshot, this);
        CLEANER.register(it, it.release);
        return it;
    }

    private Layers pin() {
        Layers l;
        do {
            l = layers;
            pins.computeIfAbsent(l, k -> new AtomicInteger()).incrementAndGet();
            if (l == layers) {
                return l;
            }
            unpin(l); // changed meanwhile: pin the newer one (a sweep may have missed this pin)
        } while (true);
    }

    void unpin(Layers l) {
        AtomicInteger n = pins.get(l);
        if (n != null && n.decrementAndGet() <= 0) {
            pins.remove(l, n);
            if (!retired.isEmpty()) {
                sweep();
            }
        }
    }

    /** Releases a scan's pin once (on exhaustion, or by the cleaner). */
    private static final class Release implements Runnable {
        private final PartitionLayers owner;
        private final Layers layers;
        private boolean done;

        Release(PartitionLayers owner, Layers layers) {
            this.owner = owner;
            this.layers = layers;
        }

        @Override
        public synchronized void run() {
            if (!done) {
                done = true;
                owner.unpin(layers);
            }
        }
    }

    /** K-way merge of the memtable, the frozen memtables and the runs of one partition. */
    private static final class ScanMerge implements Iterator<Map.Entry<String, Object>> {

        /**
         * One layer's position: a memtable's (or a reverse run scan's) iterator, or a forward run scan's cursor, whose
         * entry is decoded whole only when the merge takes it.
         */
        private static final class Head {
            final Iterator<?> it;
            final RunReader.Scan run;
            String key;
            Object value; // memtable object or RunEntry; unused for a run cursor

            Head(Iterator<?> it) {
                this.it = it;
                this.run = null;
            }

            Head(RunReader.Scan run) {
                this.it = null;
                this.run = run;
            }

            @SuppressWarnings("unchecked")
            boolean advance() {
                if (run != null) {
                    if (!run.next()) {
                        return false;
                    }
                    key = run.key();
                    return true;
                }
                if (!it.hasNext()) {
                    return false;
                }
                Object o = it.next();
                if (o instanceof RunEntry e) {
                    key = e.key();
                    value = e;
                } else {
                    Map.Entry<String, Object> e = (Map.Entry<String, Object>) o;
                    key = e.getKey();
                    value = e.getValue();
                }
                return true;
            }

            /** @return what the current entry says as of {@code snapshot}: a {@link Versioned}, ABSENT, or null */
            Object view(long snapshot) {
                if (run != null) {
                    return run.tombstone() ? Tombstone.ABSENT
                            : new Versioned(run.value(), run.version(), run.expiresAtMillis());
                }
                return value instanceof RunEntry e ? PartitionLayers.view(e) : PartitionState.topAt(value, snapshot);
            }
        }

        private final Head[] heads;
        private final LoserTree merge;
        private final long snapshot;
        final Release release;
        private final Slot slot = new Slot();
        private Map.Entry<String, Object> next;

        ScanMerge(NavigableMap<String, Object> memtable, Layers l, String from, String to, boolean reverse,
                  long snapshot, PartitionLayers owner) {
            this.snapshot = snapshot;
            this.release = new Release(owner, l);
            List<Head> hs = new ArrayList<>(1 + l.frozen.size() + l.runs.size());
            hs.add(new Head(memtable.entrySet().iterator()));
            for (FrozenMemtable f : l.frozen) {
                NavigableMap<String, Object> m = range(f.map(), from, to);
                hs.add(new Head((reverse ? m.descendingMap() : m).entrySet().iterator()));
            }
            for (RunHandle h : l.runs) {
                if (h.ref.meta().overlaps(from, to)) {
                    hs.add(reverse ? new Head(h.reader().scanReverse(from, to))
                            : new Head(h.reader().scanCursor(from, to)));
                }
            }
            this.heads = hs.toArray(new Head[0]);
            this.merge = new LoserTree(heads.length, reverse); // index = rank: 0 the memtable, higher are older
            for (int i = 0; i < heads.length; i++) {
                merge.init(i, heads[i].advance() ? heads[i].key : null);
            }
            merge.start();
        }

        @Override
        public boolean hasNext() {
            while (next == null) {
                String key = merge.winnerKey();
                if (key == null) {
                    break;
                }
                Object found = null;
                do { // the layers holding the key come out newest first
                    Head h = heads[merge.winner()];
                    if (found == null) {
                        found = h.view(snapshot);
                    }
                    String k;
                    do { // a run may hold older versions of the key: skip them
                        k = h.advance() ? h.key : null;
                    } while (k != null && k.equals(key));
                    merge.advanceWinner(k);
                } while (key.equals(merge.winnerKey()));
                if (found instanceof Versioned v) {
                    next = slot.set(key, v);
                }
            }
            if (next == null) {
                release.run();
            }
            return next != null;
        }

        @Override
        public Map.Entry<String, Object> next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Map.Entry<String, Object> e = next;
            next = null;
            return e;
        }
    }

    /**
     * The one entry a partition scan hands out, refilled for each key: its readers (the merge of partitions, the
     * read filter) copy key and value out before they ask for the next, so scans allocate no entry per key.
     */
    static final class Slot implements Map.Entry<String, Object> {
        private String key;
        private Object value;

        Slot set(String k, Object v) {
            key = k;
            value = v;
            return this;
        }

        @Override
        public String getKey() {
            return key;
        }

        @Override
        public Object getValue() {
            return value;
        }

        @Override
        public Object setValue(Object v) {
            throw new UnsupportedOperationException();
        }
    }

    /** @return what a run entry says: {@link Tombstone#ABSENT} or a {@link Versioned} (with its expiry) */
    static Object view(RunEntry e) {
        return e.tombstone() ? Tombstone.ABSENT : new Versioned(e.value(), e.version(), e.expiresAtMillis());
    }

    static NavigableMap<String, Object> range(NavigableMap<String, Object> m, String from, String to) {
        if (from != null && to != null) {
            return from.compareTo(to) >= 0 ? new java.util.TreeMap<>() : m.subMap(from, true, to, false);
        } else if (from != null) {
            return m.tailMap(from, true);
        } else if (to != null) {
            return m.headMap(to, false);
        }
        return m;
    }

    /** @return the runs as an identity set (for orphan collection) */
    static Map<String, RunHandle> byId(List<RunHandle> runs) {
        Map<String, RunHandle> out = new java.util.HashMap<>();
        for (RunHandle r : runs) {
            out.put(r.ref.id().value(), r);
        }
        return out;
    }
}
