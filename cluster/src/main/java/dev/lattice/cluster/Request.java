package dev.lattice.cluster;

import org.apache.pekko.actor.typed.ActorRef;

import java.util.List;

/**
 * One operation on one log, sent to the log's entity. Which fields are used depends on {@link #op}: {@code key}
 * (point operations, scan start), {@code toKey} (scan end, exclusive), {@code value}, {@code number} (ttl in
 * milliseconds, expected version, or scan page size), {@code flag} (scan in reverse), {@code keys}/{@code values}
 * (getAll, putAll, atomic parts), and for atomic parts {@code kinds} ({@link dev.lattice.engine.AtomicOp.Kind}
 * ordinals) and {@code numbers} (per operation: expiry or expected version) of the same length as {@code keys}.
 * For atomic steps {@code key} is the write's id and {@code toKey} the coordinator's entity id; {@code trees} names
 * the tree of each atomic part of a cross-tree write ({@link Op#ATOMIC_COMMIT_TREES}). A held scan: {@link Op#SCAN_OPEN}
 * uses {@code key}, {@code toKey}, {@code number} (page size) and {@code flag} as {@link Op#SCAN} does; its later
 * steps name the scan's {@code session} (0 when unused), and {@link Op#SCAN_NEXT} its page index in {@code number}.
 * {@link Op#PREPARE} sets {@code flag} when the write has a part prepared in the same tree already (its prepare
 * does not wait at a scan's hold, {@link PrepareGate}); older coordinators send false. {@link Op#PREPARE_HOLD} and
 * {@link Op#PREPARE_RELEASE} name the hold in {@code session}, and the hold's milliseconds in {@code number}.
 * Unused fields are null. Serialized by {@link LatticeSerializer}. Immutable by convention (arrays are not copied).
 */
record Request(Op op, String key, String toKey, byte[] value, long number, boolean flag, List<String> keys,
               List<byte[]> values, ActorRef<Response> replyTo, byte[] kinds, long[] numbers, List<String> trees,
               long session) implements EntityMessage {

    Request(Op op, String key, String toKey, byte[] value, long number, boolean flag, List<String> keys,
            List<byte[]> values, ActorRef<Response> replyTo, byte[] kinds, long[] numbers, List<String> trees) {
        this(op, key, toKey, value, number, flag, keys, values, replyTo, kinds, numbers, trees, 0);
    }

    /**
     * A step of a held scan ({@link Op#SCAN_NEXT}, {@link Op#SCAN_CHECK}, {@link Op#SCAN_CLOSE}).
     *
     * @param page for {@link Op#SCAN_NEXT}, the page's index (the open's page is 0); 0 otherwise
     */
    static Request scanStep(Op op, long session, long page, ActorRef<Response> replyTo) {
        return new Request(op, null, null, null, page, false, null, null, replyTo, null, null, null, session);
    }

    Request(Op op, String key, String toKey, byte[] value, long number, boolean flag, List<String> keys,
            List<byte[]> values, ActorRef<Response> replyTo) {
        this(op, key, toKey, value, number, flag, keys, values, replyTo, null, null, null);
    }

    Request(Op op, String key, String toKey, byte[] value, long number, boolean flag, List<String> keys,
            List<byte[]> values, ActorRef<Response> replyTo, byte[] kinds, long[] numbers) {
        this(op, key, toKey, value, number, flag, keys, values, replyTo, kinds, numbers, null);
    }

    /**
     * An atomic step carrying operations: {@code key} is the write's id, {@code toKey} the coordinator's entity id
     * (null for a commit request), {@code trees} the tree of each operation (null when all are the target's).
     */
    static Request atomic(Op op, String txnId, String coordinatorEntity, List<dev.lattice.engine.AtomicOp> ops,
                          List<String> trees, ActorRef<Response> replyTo) {
        List<String> keys = new java.util.ArrayList<>(ops.size());
        List<byte[]> values = new java.util.ArrayList<>(ops.size());
        byte[] kinds = new byte[ops.size()];
        long[] numbers = new long[ops.size()];
        for (int i = 0; i < ops.size(); i++) {
            dev.lattice.engine.AtomicOp o = ops.get(i);
            keys.add(o.key());
            values.add(o.value());
            kinds[i] = (byte) o.kind().ordinal();
            numbers[i] = o.number();
        }
        return new Request(op, txnId, coordinatorEntity, null, 0, false, keys, values, replyTo, kinds, numbers, trees);
    }

    /**
     * A participant's {@link Op#PREPARE}.
     *
     * @param continuesTree true when the write has a part prepared in the participant's tree already
     */
    static Request prepare(String txnId, String coordinatorEntity, List<dev.lattice.engine.AtomicOp> ops,
                           boolean continuesTree, ActorRef<Response> replyTo) {
        Request r = atomic(Op.PREPARE, txnId, coordinatorEntity, ops, null, replyTo);
        return new Request(r.op, r.key, r.toKey, null, 0, continuesTree, r.keys, r.values, replyTo, r.kinds,
                r.numbers, null);
    }

    /**
     * A {@link Op#PREPARE_HOLD} or {@link Op#PREPARE_RELEASE}.
     *
     * @param id the hold's id
     * @param millis how long the hold is asked for (0 for a release)
     */
    static Request hold(Op op, long id, long millis, ActorRef<Response> replyTo) {
        return new Request(op, null, null, null, millis, false, null, null, replyTo, null, null, null, id);
    }

    /** @return the operations of an atomic step, in order */
    List<dev.lattice.engine.AtomicOp> atomicOps() {
        List<dev.lattice.engine.AtomicOp> ops = new java.util.ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            ops.add(new dev.lattice.engine.AtomicOp(dev.lattice.engine.AtomicOp.Kind.values()[kinds[i]], keys.get(i),
                    values.get(i), numbers[i]));
        }
        return ops;
    }

    static Request point(Op op, String key, byte[] value, long number, ActorRef<Response> replyTo) {
        return new Request(op, key, null, value, number, false, null, null, replyTo);
    }
}
