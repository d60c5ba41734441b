package dev.lattice.cluster;

import java.util.List;

/**
 * The answer of an entity: on success {@code number} (a version or a count), {@code flag} (a conditional write's
 * outcome, a scan's "more"), and for reads {@code keys}, {@code values}, {@code versions} and {@code expiries}
 * (milliseconds since the epoch, 0 for none) of the same length, and for a held scan's first page its
 * {@code session} (0 otherwise) and the partition's atomic-prepare counter in {@code number}
 * ({@link dev.lattice.engine.PartialTree#atomicPreparesSeen}); for {@link Op#COUNT_CUT} the count in {@code number}
 * and that counter in {@code session} (the one answer that carries both a count and a counter); on failure the error's type name, message and
 * details (see {@link RemoteErrors}). Serialized by {@link LatticeSerializer}. Immutable by convention (the arrays
 * are not copied).
 */
record Response(boolean ok, long number, boolean flag, List<String> keys, List<byte[]> values, long[] versions,
                long[] expiries, String errorType, String errorMessage, String errorTree, int errorPartition,
                long errorEpoch, long session) {

    Response(boolean ok, long number, boolean flag, List<String> keys, List<byte[]> values, long[] versions,
             long[] expiries, String errorType, String errorMessage, String errorTree, int errorPartition,
             long errorEpoch) {
        this(ok, number, flag, keys, values, versions, expiries, errorType, errorMessage, errorTree, errorPartition,
                errorEpoch, 0);
    }

    /** The first page of a held scan, with its session and the partition's atomic-prepare counter in {@code number}. */
    Response withSession(long session, long preparesSeen) {
        return new Response(ok, preparesSeen, flag, keys, values, versions, expiries, errorType, errorMessage,
                errorTree, errorPartition, errorEpoch, session);
    }

    static Response ok(long number, boolean flag) {
        return new Response(true, number, flag, null, null, null, null, null, null, null, 0, 0);
    }

    /** A count with the partition's atomic-prepare counter read before it ({@link Op#COUNT_CUT}). */
    static Response counted(long count, long preparesSeen) {
        return new Response(true, count, true, null, null, null, null, null, null, null, 0, 0, preparesSeen);
    }

    static Response entries(List<String> keys, List<byte[]> values, long[] versions, long[] expiries, boolean more) {
        return new Response(true, 0, more, keys, values, versions, expiries, null, null, null, 0, 0);
    }
}
