package dev.lattice.engine;

import java.util.concurrent.CompletableFuture;

/**
 * The in-memory state of one atomic write, shared by its nodes in every partition it touches. Visibility is one
 * field: {@link #seq} is {@code 0} while the write is pending, the publication sequence (&gt; 0) once it is
 * committed and visible, {@code -1} once aborted. {@link Visibility#publish} writes the version first and the
 * sequence last, so a reader that sees {@code seq > 0} sees the version. Thread-safe.
 */
final class Txn {
    static final long ABORTED = -1;

    final String id;
    volatile long seq;
    volatile long version;
    /** Completes with the version when committed, or exceptionally when aborted (re-attach of idempotent retries). */
    final CompletableFuture<Long> outcome = new CompletableFuture<>();

    Txn(String id) {
        this.id = id;
    }

    boolean pending() {
        return seq == 0;
    }

    boolean committed() {
        return seq > 0;
    }

    @Override
    public String toString() {
        return "Txn[" + id + ", seq " + seq + "]";
    }
}
