package dev.lattice.cluster;

/**
 * The operations a partition's entity serves. The wire code of each is its {@link #code}; codes are never reused
 * or renumbered, so two adjacent versions of the message format agree on them. Each names the protocol
 * {@link #level} that introduced it; a sender checks that the tree's owners understand it ({@link PeerProtocols})
 * and falls back to the operations of the level below when they do not (docs/cluster.md "Rolling upgrades").
 */
enum Op {
    GET(1, 1), PUT(2, 1), PUT_TTL(3, 1), PUT_IF_ABSENT(4, 1), PUT_IF_VERSION(5, 1), DELETE(6, 1), GET_ALL(7, 1),
    PUT_ALL(8, 1), PUT_ALL_ATOMIC(9, 1), SCAN(10, 1), COUNT(11, 1),
    /** A multi-partition atomic write, sent to its coordinator log's entity. */
    ATOMIC_COMMIT(12, 1),
    /** Coordinator to participant: prepare your part. */
    PREPARE(13, 1),
    /** Coordinator to participant: the outcome. */
    RESOLVE(14, 1),
    /** Participant to coordinator: what was decided (records an abort when nothing was and nothing is in flight). */
    DECISION(15, 1),
    /**
     * An atomic write over several trees (its parts name their trees), sent to its coordinator log's entity; a code
     * of its own so that a node of the previous version refuses it instead of taking every part for its own tree.
     */
    ATOMIC_COMMIT_TREES(16, 1),
    /**
     * Opens a held scan of the partition (the engine's snapshot, kept until closed or idle past the session timeout):
     * answers its first page, its session id and the partition's atomic-prepare counter.
     */
    SCAN_OPEN(17, 2),
    /** The next page of a held scan (its index in {@code number}: asking again for the last page answers it again). */
    SCAN_NEXT(18, 2),
    /** The partition's atomic-prepare counter now, while the scan's session still exists (a scan's validation). */
    SCAN_CHECK(19, 2),
    /** Closes a held scan (a no-op when it is gone). */
    SCAN_CLOSE(20, 2),
    /**
     * An atomic write with an idempotency key ({@code toKey}); its parts always name their trees. A code of its own
     * so that a node of the previous version refuses it instead of committing it without the key.
     */
    ATOMIC_COMMIT_IDEMPOTENT(21, 2),
    /**
     * The partition's live-key count with its atomic-prepare counter read just before it (the answer's
     * {@code session}), for a count across partitions that is one cut ({@code ClusterTree.count}).
     */
    COUNT_CUT(22, 2),
    /**
     * Holds the atomic-write prepares that would begin a write's part in the partition's tree
     * ({@link PrepareGate}), for a scan or count across partitions whose validation failed: the hold's id in
     * {@code session}, the milliseconds asked for in {@code number}; answers the milliseconds granted in
     * {@code number} (0: nothing held). The hold ends by itself after that. Sent only while every hosting member
     * reads level 2 ({@link PeerProtocols}); an owner that cannot read it anyway (a level-1 member seen late) drops
     * it, so the attempt is refused or times out, and {@link CutHolds} goes on without holds.
     */
    PREPARE_HOLD(23, 2),
    /** Ends a hold placed by {@link #PREPARE_HOLD} (id in {@code session}); a no-op when it ended already. */
    PREPARE_RELEASE(24, 2),
    /**
     * Point reads of several keys of the partition in one message ({@link ReadBatcher}): {@code keys} in the order
     * asked (repeats allowed); the answer holds, in that order, the first keys it answers ({@code flag} true when it
     * stopped short at the message budget: the sender asks again for the rest), {@code values} (null where a key is
     * absent), {@code versions} (0 where absent) and {@code expiries}. Each key is read as {@link #GET} reads it.
     * Sent only while every hosting member reads level 3; otherwise, or when an owner answers that it cannot read
     * it, the sender falls back to one {@link #GET} per key.
     */
    GET_BATCH(25, 3);

    final int code;
    /**
     * The wire protocol level that introduced the operation ({@link PeerProtocols}): 1 for the release before the
     * held scans (codes 1 to 16), 2 for the held scans, idempotency keys, {@code COUNT_CUT} and the prepare holds
     * (17 to 24), 3 for the batched point reads (25). A node whose level is below it cannot read the code.
     */
    final int level;


    Op(int code, int level) {
        this.code = code;
        this.level = level;
    }

    /** @throws IllegalArgumentException for a code this version does not know (a newer node's operation) */
    static Op ofCode(int code) {
        return ofCode(code, PeerProtocols.CURRENT);
    }

    /**
     * @param level the reading node's protocol level (1..{@link PeerProtocols#CURRENT})
     * @return the operation of {@code code}
     * @throws IllegalArgumentException for a code unknown at that level (a newer node's operation)
     */
    static Op ofCode(int code, int level) {
        for (Op o : values()) {
            if (o.code == code && o.level <= level) {
                return o;
            }
        }
        throw new IllegalArgumentException("unknown operation code " + code + " (sent by a newer node?)");
    }

    /** @return true when the operation changes data (its outcome is unknown when its answer is lost) */
    boolean writes() {
        return this != GET && this != GET_BATCH && this != GET_ALL && this != SCAN && this != COUNT && this != DECISION
                && this != SCAN_OPEN && this != SCAN_NEXT && this != SCAN_CHECK && this != SCAN_CLOSE
                && this != COUNT_CUT && this != PREPARE_HOLD && this != PREPARE_RELEASE;
    }
}
