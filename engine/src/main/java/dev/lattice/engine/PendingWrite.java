package dev.lattice.engine;

import java.util.concurrent.CompletableFuture;

/** One admitted write on its way through a log pipeline: its mutation, its encoded entry, its caller's future. */
final class PendingWrite {
    final WalRecord.Mutation mutation;
    final byte[] entry;
    final CompletableFuture<Object> future = new CompletableFuture<>();
    final long admittedNanos = System.nanoTime();
    long version;

    PendingWrite(WalRecord.Mutation mutation) {
        this.mutation = mutation;
        this.entry = WalRecord.encode(mutation);
    }
}
