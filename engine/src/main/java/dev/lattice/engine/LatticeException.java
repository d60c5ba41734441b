package dev.lattice.engine;

/** Base of the engine's own failures. Provider failures are attached as the cause. Unchecked. */
public class LatticeException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong
     * @param cause the underlying failure, or null
     */
    public LatticeException(String message, Throwable cause) {
        super(message, cause);
    }

    /**

     * Creates the exception.

     *

     * @param message what went wrong

     */
    public LatticeException(String message) {
        super(message);
    }
}
