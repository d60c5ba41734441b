package dev.lattice.engine;

/**
 * A write was refused because the live data of the open trees would exceed the configured memory budget
 * ({@link LatticeConfig.Builder#memoryBudgetBytes}). Nothing was written. Deletes are still accepted.
 */
public class MemoryBudgetExceededException extends LatticeException {

    private static final long serialVersionUID = 1L;

    /**

     * Creates the exception.

     *

     * @param message the budget and the current estimate, in bytes

     */
    public MemoryBudgetExceededException(String message) {
        super(message);
    }
}
