package dev.lattice.cluster;

import org.apache.pekko.actor.typed.ActorRef;

/**
 * A request whose operation code this node does not know (a newer node's operation), as {@link LatticeSerializer}
 * reads it: the code and whom to answer. The entity answers it with {@link UnsupportedOperationException} naming the
 * code and this node's protocol level ({@link PeerProtocols}), so that the sender fails at once (or falls back)
 * instead of waiting for an answer that never comes. Serialized as a request with that code and no other field.
 * Immutable.
 *
 * @param code the operation code read
 * @param replyTo where the answer goes
 */
record UnknownRequest(int code, ActorRef<Response> replyTo) implements EntityMessage {

    /** @return the typed error this node answers */
    Response refusal(int ownLevel) {
        return RemoteErrors.toResponse(new UnsupportedOperationException("operation code " + code + " is not known"
                + " by this node (wire protocol level " + ownLevel + "): the sender is of a newer version; use the"
                + " operations of level " + ownLevel + " until every node is upgraded"));
    }
}
