package dev.lattice.pekko.persistence;

/**
 * A write was refused because another writer changed the same persistence id (or durable state object) since this
 * writer read it; nothing of the refused write was stored. For the journal this means two writers are active for one
 * persistence id (Pekko requires one); the first writer's acknowledged events are intact.
 */
public final class ConcurrentWriterException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what was refused and why
     * @param cause the engine's precondition failure
     */
    public ConcurrentWriterException(String message, Throwable cause) {
        super(message, cause);
    }
}
