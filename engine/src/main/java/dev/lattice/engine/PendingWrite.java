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
    /** Replaced only at batch cut, under the log's lock, when a conditional write is decided ({@link #decided}). */
    List<WalRecord.Mutation> mutations;
    /** Encoded once at admission; re-encoded only with {@link #mutations}. */
    byte[] entry;
    /** A conditional write, decided when its batch is cut ({@link ConditionGate}). */
    final boolean conditional;
    /** The caller's answer once applied when it differs from the applied entry's result, else null. */
    Object answer;
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
        this.conditional = ConditionGate.conditional(kind, mutations);
        this.keys = keys;
        this.txn = txn;
        this.versionSource = versionSource;
        this.releases = releases;
    }

    /**
     * At batch cut: the condition held; the write is logged as {@code unconditional} (its condition dropped) and its
     * caller answered {@code answer} (null = the applied entry's result).
     */
    void decided(List<WalRecord.Mutation> unconditional, Object answer) {
        this.mutations = unconditional;
        this.entry = WalRecord.encode(kind, unconditional);
        this.answer = answer;
    }
}
