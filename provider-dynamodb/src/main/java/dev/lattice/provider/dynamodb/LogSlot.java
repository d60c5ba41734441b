package dev.lattice.provider.dynamodb;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.LogId;
import dev.lattice.spi.support.StagedRange;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one provider instance knows about one log: the last head it saw and the registry of batches staged under
 * the epoch it writes with. Every field is guarded by the slot's monitor; I/O happens outside it except for the
 * head update of a commit (so commits of one log are serialised).
 */
final class LogSlot {

    /** Life of a staged batch in the registry. */
    enum State {
        /** Its chunks are being written. */
        IN_FLIGHT,
        /** Every chunk is stored: committable. */
        STAGED,
        /** A stage or abort failed part-way: some chunks may be stored; they must be deleted before the offsets
         *  are reused by another batch (a retry of the same batch rewrites them instead). */
        DIRTY,
        /** Its chunks are being deleted. */
        CLEANING
    }

    /** A batch staged by this instance (or found staged under its epoch). Guarded by the slot. */
    static final class Staged implements StagedRange {
        final long first;
        final long last;
        final BatchId id;
        final long epoch;
        final long entries;
        final long payloadBytes;
        final long itemBytes;
        final long[] chunkKeys;
        State state;

        Staged(long first, long last, BatchId id, long epoch, long entries, long payloadBytes, long itemBytes,
               long[] chunkKeys, State state) {
            this.first = first;
            this.last = last;
            this.id = id;
            this.epoch = epoch;
            this.entries = entries;
            this.payloadBytes = payloadBytes;
            this.itemBytes = itemBytes;
            this.chunkKeys = chunkKeys;
            this.state = state;
        }

        @Override
        public long firstOffset() {
            return first;
        }

        @Override
        public long lastOffset() {
            return last;
        }

        @Override
        public long epoch() {
            return epoch;
        }

        @Override
        public BatchId batchId() {
            return id;
        }

        boolean sameBatch(long first, long last, BatchId id) {
            return this.first == first && this.last == last && this.id.equals(id);
        }

        @Override
        public String toString() {
            return first + ".." + last + " (id " + id + ", epoch " + epoch + ", " + state + ")";
        }
    }

    final LogId log;
    final String pk;
    /** Last head seen; null when unknown (after a failed head update). */
    Head head;
    /** The epoch the registry speaks for; 0 when none. */
    long registryEpoch;
    /** Batches staged under {@link #registryEpoch}, by first offset. */
    final TreeMap<Long, Staged> staged = new TreeMap<>();

    LogSlot(LogId log, String pk) {
        this.log = log;
        this.pk = pk;
    }

    /**
     * Records a head read or written, if it is newer than the one known (higher version), keeping the higher of the
     * two watermarks (a trim within the tail does not raise the version); forgets the registry of an older epoch and
     * staged batches the tail has passed.
     *
     * @param h the head
     */
    void install(Head h) {
        if (head == null || h.version() >= head.version()) {
            head = h.withWatermarkOf(head);
        } else {
            head = head.withWatermarkOf(h);
        }
        if (registryEpoch != 0 && h.epoch() > registryEpoch) {
            registryEpoch = 0;
            staged.clear();
        }
        if (!staged.isEmpty()) {
            staged.headMap(h.tail(), true).values().removeIf(s -> s.last <= h.tail());
        }
    }

    /** @return the registry entries whose offsets intersect {@code first..last} */
    List<Staged> overlapping(long first, long last) {
        List<Staged> out = new ArrayList<>();
        Map.Entry<Long, Staged> below = staged.floorEntry(first);
        if (below != null && below.getValue().last >= first) {
            out.add(below.getValue());
        }
        out.addAll(staged.subMap(first, false, last, true).values());
        return out;
    }
}
