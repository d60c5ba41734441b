package dev.lattice.engine;

/**
 * A catalog change (create, drop or move of a tree) lost the race for the catalog log {@code _catalog/0} to other
 * writers on every one of its bounded attempts: each time it claimed the log, another process claimed it after it and
 * fenced it out before its record landed. Nothing of this call was written. Retryable: the catalog is busy, not
 * broken; the cause is the last {@link dev.lattice.spi.FencedException} (or offset conflict) seen.
 * Immutable and thread-safe.
 */
public class CatalogContendedException extends LatticeException {

    private static final long serialVersionUID = 1L;

    private final int attempts;

    /**
     * Creates the exception.
     *
     * @param what the catalog change, for the message (for example {@code "create tree 'orders'"})
     * @param attempts how many claims of the catalog log were made (1 or more)
     * @param cause the last fence or offset conflict seen
     */
    public CatalogContendedException(String what, int attempts, Throwable cause) {
        super("catalog contended: " + what + " was fenced out of _catalog/0 by other catalog writers on all "
                + attempts + " attempts; retry later", cause);
        this.attempts = attempts;
    }

    /** {@return how many claims of the catalog log were made before giving up} */
    public int attempts() {
        return attempts;
    }
}
