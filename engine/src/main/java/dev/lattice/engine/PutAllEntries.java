package dev.lattice.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
import java.util.function.ToIntFunction;

/**
 * Packs the puts of a non-atomic {@code putAll} into log entries: one tree-mutations entry (kind 1, docs/wal-format.md)
 * per partition holding several puts, split where the next put would pass the entry limit. All puts of one entry
 * take its version; the format always allowed n mutations per entry, so readers of every release decode them.
 * Saves the entry's header and checksum (20 bytes) per key after the first. Not instantiable; thread-safe.
 */
final class PutAllEntries {

    /** The largest entry a putAll packs, bytes: beyond it the framing saved is negligible and entries grow coarse. */
    static final int MAX_ENTRY_BYTES = 256 << 10;

    private PutAllEntries() {
    }

    /**
     * @param ms the validated puts, keys distinct, in the caller's order
     * @param partitions the tree's partition count
     * @param partitionOf a key's partition, {@code [0, partitions)}
     * @param limit a partition's largest entry in bytes (provider and batch limits; at least one put of any
     *     admitted size fits, as the tree's value limit guarantees)
     * @return per partition index, its entries in the caller's order of keys; null where the putAll has no key
     */
    static List<List<PendingWrite>> pack(List<WalRecord.Mutation> ms, int partitions,
                                         ToIntFunction<String> partitionOf, IntUnaryOperator limit) {
        List<List<WalRecord.Mutation>> byPartition = new ArrayList<>(java.util.Collections.nCopies(partitions, null));
        for (WalRecord.Mutation m : ms) {
            int p = partitionOf.applyAsInt(m.key());
            List<WalRecord.Mutation> l = byPartition.get(p);
            if (l == null) {
                l = new ArrayList<>();
                byPartition.set(p, l);
            }
            l.add(m);
        }
        List<List<PendingWrite>> out = new ArrayList<>(java.util.Collections.nCopies(partitions, null));
        for (int p = 0; p < partitions; p++) {
            List<WalRecord.Mutation> l = byPartition.get(p);
            if (l == null) {
                continue;
            }
            int max = Math.min(MAX_ENTRY_BYTES, limit.applyAsInt(p));
            List<PendingWrite> entries = new ArrayList<>();
            int from = 0;
            long size = WalRecord.HEADER_BYTES + WalRecord.TRAILER_BYTES;
            for (int i = 0; i < l.size(); i++) {
                int add = l.get(i).encodedSize();
                if (i > from && size + add > max) {
                    entries.add(entry(l.subList(from, i)));
                    from = i;
                    size = WalRecord.HEADER_BYTES + WalRecord.TRAILER_BYTES;
                }
                size += add;
            }
            entries.add(entry(l.subList(from, l.size())));
            out.set(p, entries);
        }
        return out;
    }

    private static PendingWrite entry(List<WalRecord.Mutation> ms) {
        if (ms.size() == 1) {
            return new PendingWrite(ms.get(0));
        }
        List<WalRecord.Mutation> copy = List.copyOf(ms);
        List<String> keys = new ArrayList<>(copy.size());
        for (WalRecord.Mutation m : copy) {
            keys.add(m.key());
        }
        return new PendingWrite(WalRecord.KIND_MUTATIONS, copy, keys, null, null, null);
    }
}
