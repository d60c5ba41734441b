package dev.lattice.pekko.persistence;

import dev.lattice.engine.AtomicWrite;
import dev.lattice.engine.LatticeSaturatedException;
import dev.lattice.engine.LatticeShuttingDownException;
import dev.lattice.engine.MemoryBudgetExceededException;
import dev.lattice.engine.OwnershipLostException;
import dev.lattice.engine.PreconditionFailedException;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeEntry;
import dev.lattice.engine.Versioned;
import dev.lattice.engine.WriteFailedException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The journal's storage logic on one Lattice tree, without actors or Pekko types: events are serialized bytes keyed
 * by persistence id and sequence number (layout: {@link Keys}).
 *
 * <ul>
 *   <li>{@link #write} commits each {@link Batch} (one Pekko {@code AtomicWrite}) all or nothing, combining
 *       consecutive batches into one Lattice atomic write up to the configured key and byte limits, together with
 *       the persistence id's highest-sequence-number key, under a version precondition on that key: a second writer
 *       that wrote in between makes the write fail as a whole instead of interleaving.</li>
 *   <li>{@link #replay} reads in bounded batches of {@code replayBatchSize} keys: never more in memory at once.</li>
 *   <li>{@link #deleteTo} first raises the deleted-to marker (so the deletion is visible at once and survives a
 *       crash), then removes the keys in bounded atomic batches; leftovers of an interrupted deletion stay hidden
 *       behind the marker and are removed by the next deletion.</li>
 * </ul>
 *
 * <p>Thread-safety: {@link #replay} and {@link #highest} may run on any thread at any time; {@link #write} and
 * {@link #deleteTo} must be called by one thread at a time (the journal runs them on one writer thread), which keeps
 * the writes of a persistence id in call order.
 */
final class JournalStore {

    /**
     * One all-or-nothing write of one persistence id.
     *
     * @param persistenceId the persistence id
     * @param sequenceNrs the events' sequence numbers, ascending
     * @param events the serialized events, same order
     */
    record Batch(String persistenceId, long[] sequenceNrs, List<byte[]> events) {
        Batch {
            Objects.requireNonNull(persistenceId, "persistenceId");
            if (sequenceNrs.length == 0 || sequenceNrs.length != events.size()) {
                throw new IllegalArgumentException("a batch needs one or more events with one sequence number each");
            }
        }

        long bytes() {
            long n = 0;
            for (byte[] e : events) {
                n += e.length + 64L;
            }
            return n;
        }
    }

    /** Consumes replayed events in order. */
    @FunctionalInterface
    interface EventConsumer {
        /**
         * @param sequenceNr the event's sequence number
         * @param event its serialized bytes (do not modify)
         */
        void accept(long sequenceNr, byte[] event);
    }

    private final Tree tree;
    private final int batchSize;
    private final int maxWriteKeys;
    private final long maxWriteBytes;
    /** Entries read by scans since creation; for tests that check replay stays bounded. */
    private final java.util.concurrent.atomic.LongAdder scanned = new java.util.concurrent.atomic.LongAdder();

    JournalStore(Tree tree, int batchSize, int maxWriteKeys, long maxWriteBytes) {
        this.tree = Objects.requireNonNull(tree, "tree");
        this.batchSize = batchSize;
        this.maxWriteKeys = maxWriteKeys;
        this.maxWriteBytes = maxWriteBytes;
    }

    Tree tree() {
        return tree;
    }

    long scannedEntries() {
        return scanned.sum();
    }

    /**
     * Writes batches in order.
     *
     * @param batches the batches
     * @return per batch: empty when written, else why it was rejected (nothing of it written)
     * @throws RuntimeException (e.g. {@link dev.lattice.engine.WriteOutcomeUnknownException}) when the outcome of a
     *     commit is unknown; batches before it are written, it and later ones have unknown outcome
     */
    List<Optional<Exception>> write(List<Batch> batches) {
        List<Optional<Exception>> out = new ArrayList<>(batches.size());
        int i = 0;
        while (i < batches.size()) {
            int keys = 0;
            long bytes = 0;
            int j = i;
            Set<String> ids = new HashSet<>();
            while (j < batches.size()) {
                Batch b = batches.get(j);
                // the chunk's keys: its events plus one highest-sequence-number key per persistence id
                int k = b.events().size() + (ids.contains(b.persistenceId()) ? 0 : 1);
                if (j > i && (keys + k > maxWriteKeys || bytes + b.bytes() > maxWriteBytes)) {
                    break;
                }
                keys += k;
                bytes += b.bytes();
                ids.add(b.persistenceId());
                j++;
            }
            List<Batch> chunk = batches.subList(i, j);
            List<Optional<Exception>> r = writeChunk(chunk);
            out.addAll(r);
            i = j;
        }
        return out;
    }

    private List<Optional<Exception>> writeChunk(List<Batch> chunk) {
        Exception[] rejected = new Exception[chunk.size()];
        Map<String, Versioned> highest = new HashMap<>();
        Map<String, Long> running = new LinkedHashMap<>();
        AtomicWrite w = tree.atomic();
        int included = 0;
        for (int n = 0; n < chunk.size(); n++) {
            Batch b = chunk.get(n);
            String pid = b.persistenceId();
            try {
                String hKey = Keys.highest(pid);
                Long seen = running.get(pid);
                if (seen == null) {
                    Versioned v = tree.getVersioned(hKey).orElse(null);
                    highest.put(pid, v);
                    seen = v == null ? 0L : Keys.bytesLong(v.value());
                }
                long first = b.sequenceNrs()[0];
                if (first <= seen) {
                    throw new IllegalStateException("persistence id '" + pid + "': sequence number " + first
                            + " is not above the highest written (" + seen + "); is another writer active?");
                }
                for (int e = 1; e < b.sequenceNrs().length; e++) {
                    if (b.sequenceNrs()[e] <= b.sequenceNrs()[e - 1]) {
                        throw new IllegalArgumentException("persistence id '" + pid
                                + "': sequence numbers of one write must ascend");
                    }
                }
                for (int e = 0; e < b.events().size(); e++) {
                    w.put(Keys.event(pid, b.sequenceNrs()[e]), b.events().get(e));
                }
                running.put(pid, b.sequenceNrs()[b.sequenceNrs().length - 1]);
                included++;
            } catch (OwnershipLostException | LatticeShuttingDownException e) {
                // the tree is no longer ours (another process claimed its logs) or closing: nothing is written
                Arrays.fill(rejected, e);
                return asList(rejected);
            } catch (IllegalArgumentException | IllegalStateException e) {
                if (chunk.size() > 1) {
                    return writeSingly(chunk);
                }
                rejected[n] = e;
            }
        }
        if (included > 0) {
            for (Map.Entry<String, Long> e : running.entrySet()) {
                String hKey = Keys.highest(e.getKey());
                Versioned v = highest.get(e.getKey());
                w.expectVersion(hKey, v == null ? 0 : v.version());
                w.put(hKey, Keys.longBytes(e.getValue()));
            }
            try {
                w.commit();
            } catch (IllegalArgumentException | PreconditionFailedException | WriteFailedException
                     | LatticeSaturatedException | MemoryBudgetExceededException | OwnershipLostException
                     | LatticeShuttingDownException e) {
                // nothing of the chunk was written
                if (chunk.size() > 1 && (e instanceof IllegalArgumentException
                        || e instanceof PreconditionFailedException)) {
                    return writeSingly(chunk);
                }
                Arrays.fill(rejected, e instanceof PreconditionFailedException
                        ? new ConcurrentWriterException("another writer wrote persistence id(s) "
                        + running.keySet() + " meanwhile; nothing of this write was stored", e) : e);
            }
        }
        return asList(rejected);
    }

    private static List<Optional<Exception>> asList(Exception[] rejected) {
        List<Optional<Exception>> out = new ArrayList<>(rejected.length);
        for (Exception e : rejected) {
            out.add(Optional.ofNullable(e));
        }
        return out;
    }

    private List<Optional<Exception>> writeSingly(List<Batch> chunk) {
        List<Optional<Exception>> out = new ArrayList<>(chunk.size());
        for (Batch b : chunk) {
            out.addAll(writeChunk(List.of(b)));
        }
        return out;
    }

    /**
     * @param persistenceId the persistence id
     * @return the highest sequence number ever written for it (also after deleting every event), 0 if none
     */
    long highest(String persistenceId) {
        return tree.get(Keys.highest(persistenceId)).map(Keys::bytesLong).orElse(0L);
    }

    /**
     * @param persistenceId the persistence id
     * @return the deleted-to marker (events up to it count as deleted), 0 if none
     */
    long deletedTo(String persistenceId) {
        return tree.get(Keys.deletedTo(persistenceId)).map(Keys::bytesLong).orElse(0L);
    }

    /**
     * Streams the events of {@code [from, to]} (both inclusive) in order, at most {@code max}, reading at most
     * {@code replayBatchSize} keys at a time.
     *
     * @param persistenceId the persistence id
     * @param from the lowest sequence number, inclusive
     * @param to the highest sequence number, inclusive
     * @param max the most events to deliver
     * @param consumer called once per event, on the calling thread
     * @return the number of events delivered
     */
    long replay(String persistenceId, long from, long to, long max, EventConsumer consumer) {
        long start = Math.max(Math.max(from, 1), deletedTo(persistenceId) + 1);
        String prefix = Keys.pid('e', persistenceId);
        long delivered = 0;
        while (delivered < max && start <= to) {
            int limit = (int) Math.min(batchSize, max - delivered);
            List<TreeEntry> page = page(prefix, start, to, limit);
            for (TreeEntry e : page) {
                consumer.accept(Keys.seqOf(e.key()), e.value());
            }
            delivered += page.size();
            if (page.size() < limit) {
                break;
            }
            long last = Keys.seqOf(page.get(page.size() - 1).key());
            if (last == Long.MAX_VALUE) {
                break;
            }
            start = last + 1;
        }
        return delivered;
    }

    private List<TreeEntry> page(String prefix, long from, long to, int limit) {
        String upper = to == Long.MAX_VALUE ? prefix + ";" : Keys.seq(prefix, to + 1);
        List<TreeEntry> page = new ArrayList<>(Math.min(limit, 1024));
        try (ScanCursor c = tree.scan(Keys.seq(prefix, from), upper, false)) {
            while (page.size() < limit && c.hasNext()) {
                page.add(c.next());
            }
        }
        scanned.add(page.size());
        return page;
    }

    /**
     * Deletes the events up to {@code toSequenceNr} (inclusive; clamped to the highest written). Never lowers the
     * highest sequence number.
     *
     * @param persistenceId the persistence id
     * @param toSequenceNr the highest sequence number to delete
     * @throws RuntimeException as {@link AtomicWrite#commit()} when the marker or a key batch cannot be written
     */
    void deleteTo(String persistenceId, long toSequenceNr) {
        long to = Math.min(toSequenceNr, highest(persistenceId));
        String dKey = Keys.deletedTo(persistenceId);
        Optional<Versioned> marker = tree.getVersioned(dKey);
        long old = marker.map(v -> Keys.bytesLong(v.value())).orElse(0L);
        if (to > old) {
            AtomicWrite w = tree.atomic();
            w.expectVersion(dKey, marker.map(Versioned::version).orElse(0L));
            w.put(dKey, Keys.longBytes(to));
            w.commit();
        }
        long upTo = Math.max(to, old);
        if (upTo < 1) {
            return;
        }
        String prefix = Keys.pid('e', persistenceId);
        int perWrite = Math.max(1, Math.min(batchSize, maxWriteKeys));
        long from = 1;
        while (true) {
            List<TreeEntry> page = page(prefix, from, upTo, perWrite);
            if (page.isEmpty()) {
                return;
            }
            AtomicWrite w = tree.atomic();
            for (TreeEntry e : page) {
                w.delete(e.key());
            }
            w.commit();
            if (page.size() < perWrite) {
                return;
            }
            from = Keys.seqOf(page.get(page.size() - 1).key()) + 1;
        }
    }
}
