package dev.lattice.pekko.persistence;

import org.apache.pekko.persistence.state.exception.DurableStateException;

/**
 * A durable state upsert was refused because the stored revision is not the one before the requested revision
 * (another writer changed the object, or the caller's revision is stale); nothing was written.
 */
public final class RevisionMismatchException extends DurableStateException {

    private static final long serialVersionUID = 1L;

    /** @param message the persistence id, the requested and the stored revision */
    public RevisionMismatchException(String message) {
        super(message, null);
    }
}
