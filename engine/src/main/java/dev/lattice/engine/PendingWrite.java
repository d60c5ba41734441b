package dev.lattice.engine;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * One admitted log entry on its way through a log pipeline: its kind and mutations, its encoded bytes, its caller's
 * future; for atomic writes also the keys it touches (checked against the log's key locks), its {@link Txn}, and
 * where its version comes from.
 */
final class PendingWrite {
    final byte kind;
    final List<WalRecord.Mutation> mutations;
    final byte[] entry;
    final CompletableFuture<Object> future = new CompletableFuture<>();
    final long admittedNanos = System.nanoTime();
    /** Keys checked against the log's key locks before admission (empty = none); null = the single mutation's key. */
    private final List<String> keys;
    /** The atomic write this entry belongs to (prepare, decision), or null. */
    final Txn txn;
    /** Supplies the version at batch cut instead of the tree's clock (a decision's cross-tree version), or null. */
    final LongSupplier versionSource;
    /** After this entry is applied, release the key locks of this atomic write id (resolve entries), or null. */
    final String releases;
    long version;
    /** The runner of the blocking caller waiting for this write (it may be handed the log's steps), or null. */
    StepRunner waiter;
    /** The apply result, kept between apply and completion (applier only). */
    Object result;

    /** @return the keys checked against the log's key locks (derived on demand for a single-key write) */
    List<String> keys() {
        return keys != null ? keys : List.of(mutations.get(0).key());
    }

    PendingWrite(WalRecord.Mutation mutation) {
        this(WalRecord.KIND_MUTATIONS, List.of(mutation), null, null, null, null);
    }

    PendingWrite(byte kind, List<WalRecord.Mutation> mutations, List<String> keys, Txn txn,
                 LongSupplier versionSource, String releases) {
        this.kind = kind;
        this.mutations = mutations;
        this.entry = WalRecord.encode(kind, mutations);
        this.keys = keys;
        this.txn = txn;
        this.versionSource = versionSource;
        this.releases = releases;
    }
}
