package dev.lattice.cluster;

import org.apache.pekko.actor.typed.ActorRef;

import java.util.List;

/**
 * One operation on one log, sent to the log's entity. Which fields are used depends on {@link #op}: {@code key}
 * (point operations, scan start), {@code toKey} (scan end, exclusive), {@code value}, {@code number} (ttl in
 * milliseconds, expected version, or scan page size), {@code flag} (scan in reverse), {@code keys}/{@code values}
 * (getAll, putAll). Unused strings and lists are null. Serialized by {@link LatticeSerializer}. Immutable.
 */
record Request(Op op, String key, String toKey, byte[] value, long number, boolean flag, List<String> keys,
               List<byte[]> values, ActorRef<Response> replyTo) implements EntityMessage {

    static Request point(Op op, String key, byte[] value, long number, ActorRef<Response> replyTo) {
        return new Request(op, key, null, value, number, false, null, null, replyTo);
    }
}
