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
 * the tree of each atomic part of a cross-tree write ({@link Op#ATOMIC_COMMIT_TREES}). Unused fields are null. Serialized by {@link LatticeSerializer}. Immutable by convention (arrays are not copied).
 */
record Request(Op op, String key, String toKey, byte[] value, long number, boolean flag, List<String> keys,
               List<byte[]> values, ActorRef<Response> replyTo, byte[] kinds, long[] numbers, List<String> trees)
        implements EntityMessage {

    Request(Op op, String key, String toKey, byte[] value, long number, boolean flag, List<String> keys,
            List<byte[]> values, ActorRef<Response> replyTo) {
        this(op, key, toKey, value, number, flag, keys, values, replyTo, null, null, null);
    }

    Request(Op op, String key, String toKey, byte[] value, long number, boolean flag, List<String> keys,
            List<byte[]> values, ActorRef<Response> replyTo, byte[] kinds, long[] numbers) {
        this(op, key, toKey, value, number, flag, keys, values, replyTo, kinds, numbers, null);
    }

    static Request point(Op op, String key, byte[] value, long number, ActorRef<Response> replyTo) {
        return new Request(op, key, null, value, number, false, null, null, replyTo);
    }
}
