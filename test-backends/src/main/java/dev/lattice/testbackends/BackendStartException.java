package dev.lattice.testbackends;

/**
 * A test backend could not be installed or started: Node or npm is missing, {@code npm ci} failed, or the server
 * process exited or did not accept connections in time.
 *
 * <p>Thrown instead of skipping a test: a test that needs a real backend must fail loudly when the backend is
 * absent. The message names the command that was run and ends with the tail of its output.
 */
public final class BackendStartException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, the command, and the tail of its output
     * @param cause the underlying I/O or interruption failure, or {@code null}
     */
    public BackendStartException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * @param message what failed, the command, and the tail of its output
     */
    public BackendStartException(String message) {
        super(message);
    }
}
