package dev.lattice.spi;

/**
 * A batch's offsets do not fit the log: it is not at the next offsets, it overlaps committed entries, it overlaps an
 * already staged batch with another batch id, or a {@code commit(through)} found an unstaged offset at or below
 * {@code through}. The call changed nothing.
 */
public class OffsetConflictException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param log the log
     * @param message what conflicted, with the offsets
     */
    public OffsetConflictException(LogId log, String message) {
        super(log, message);
    }

    /**
     * Creates the exception.
     *
     * @param log the log
     * @param message what conflicted, with the offsets
     * @param cause the backend's failure, or null
     */
    public OffsetConflictException(LogId log, String message, Throwable cause) {
        super(log, message, cause);
    }
}
