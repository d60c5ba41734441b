package dev.lattice.engine;

import dev.lattice.spi.LogId;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

/**
 * The range deletes of an atomic write: a range covers every partition of its tree (keys are placed by hash), so it
 * becomes one DELETE_RANGE mutation in each of them and the write a multi-log write when the tree has several
 * partitions. Stateless.
 */
final class AtomicRanges {

    private AtomicRanges() {
    }

    /**
     * Adds a DELETE_RANGE op to the part of every partition of its tree.
     *
     * @param written the identities of what the write writes so far (a range given twice is refused)
     * @return the writes it counts for (1)
     * @throws IllegalArgumentException if the same range is deleted twice in one write
     */
    static int addRange(AtomicWrite.Op op, Map<LogId, AtomicWrites.Part> byLog, Set<String> written) {
        String to = new String(op.value(), StandardCharsets.UTF_8);
        if (!written.add(op.tree().name() + "\u0001" + op.key() + "\u0000" + to)) {
            throw new IllegalArgumentException("range ['" + op.key() + "', '" + to + "') of tree '" + op.tree().name()
                    + "' is deleted twice in one atomic write");
        }
        byte[] fromBytes = op.key().getBytes(StandardCharsets.UTF_8);
        for (LogPipeline lp : op.tree().everyPipeline("a range delete")) {
            AtomicWrites.Part p = byLog.computeIfAbsent(lp.log, k -> new AtomicWrites.Part(op.tree(), lp));
            p.mutations.add(WalRecord.Mutation.deleteRange(op.key(), fromBytes, to));
            if (!p.keys.contains(op.key())) {
                p.keys.add(op.key()); // locks the range's first key: two writes of one range serialise
            }
        }
        return 1;
    }
}
