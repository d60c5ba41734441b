package dev.lattice.testkit;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;

/**
 * The transient failure a {@link FaultInjectingProvider} throws in place of a real backend failure. It is a
 * {@link ProviderUnavailableException}, so code under test treats it like a throttled, timed-out or dropped request;
 * tests can tell it apart from a real failure by type and see whether the call had reached the provider.
 */
public class InjectedFaultException extends ProviderUnavailableException {

    private static final long serialVersionUID = 1L;

    /** The faulted call. */
    private final SpiOperation operation;
    /** Before or after delegating. */
    private final FaultInjectingProvider.Timing timing;

    /**
     * Creates the exception.
     *
     * @param log the log the call addressed, or null
     * @param operation the faulted call
     * @param timing whether the call was dropped before reaching the provider or its response was lost after
     * @param detail what happened, for the message
     */
    public InjectedFaultException(LogId log, SpiOperation operation, FaultInjectingProvider.Timing timing,
                                  String detail) {
        super(log, "injected fault: " + operation + " " + detail, null);
        this.operation = operation;
        this.timing = timing;
    }

    /** {@return the faulted call} */
    public SpiOperation operation() {
        return operation;
    }

    /** {@return {@link FaultInjectingProvider.Timing#BEFORE} (nothing happened) or {@code AFTER} (the call landed)} */
    public FaultInjectingProvider.Timing timing() {
        return timing;
    }

    /** {@return true when the call reached the provider and completed there (only its response was lost)} */
    public boolean landed() {
        return timing == FaultInjectingProvider.Timing.AFTER;
    }
}
