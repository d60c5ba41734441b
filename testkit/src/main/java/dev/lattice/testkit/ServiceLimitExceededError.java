package dev.lattice.testkit;

/**
 * Thrown by {@link LimitEnforcingProvider} when a call carries more than the real service allows, or when a
 * provider declares limits above the service's. An {@link AssertionError}: it marks a bug in the provider (or in the
 * code that sized the call), never a condition to handle, so no {@code catch (RuntimeException)} swallows it.
 */
public class ServiceLimitExceededError extends AssertionError {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which limit, the value and the service's limit
     */
    public ServiceLimitExceededError(String message) {
        super(message);
    }
}
