package dev.lattice.provider.chronicle;

/**
 * An argument error (fencing part of the protocol, docs/providers/chronicle.md "On-disk layout": the epoch record):
 * a fence with an epoch above anything claimed on the log.
 */
final class UnclaimedFenceException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what was wrong
     */
    UnclaimedFenceException(String message) {
        super(message);
    }
}
