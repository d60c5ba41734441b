package dev.lattice.engine;

/**
 * The {@link Lattice} is closing or closed: the operation was not admitted (nothing written), or it was parked
 * waiting for admission when {@code close()} began.
 */
public class LatticeShuttingDownException extends LatticeException {

    private static final long serialVersionUID = 1L;

    /**

     * Creates the exception.

     *

     * @param message what was refused

     */
    public LatticeShuttingDownException(String message) {
        super(message);
    }
}
