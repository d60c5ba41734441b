package dev.lattice.spi;

import java.util.List;

/**
 * A log is placed on a provider key that this process did not register. The engine fails closed: it never falls
 * back to another provider.
 */
public class ProviderMissingException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    private final String providerKey;
    private final List<String> registeredKeys;

    /**
     * Creates the exception.
     *
     * @param log the log, or null
     * @param providerKey the missing key
     * @param registeredKeys the keys this process has
     */
    public ProviderMissingException(LogId log, String providerKey, List<String> registeredKeys) {
        super(log, "provider key '" + providerKey + "' is not registered in this process; registered keys: "
                + registeredKeys);
        this.providerKey = providerKey;
        this.registeredKeys = List.copyOf(registeredKeys);
    }

    /** {@return the missing key} */
    public String providerKey() {
        return providerKey;
    }

    /** {@return the keys that are registered} */
    public List<String> registeredKeys() {
        return registeredKeys;
    }
}
