package dev.lattice.spi;

import java.util.List;

/**
 * No provider factory on the classpath handles a URI's scheme. The message lists the schemes that were found and a
 * hint: a close scheme, or the module that provides it. Immutable.
 */
public class UnknownSchemeException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String scheme;
    private final List<String> available;

    /**
     * The message suggests a close scheme among {@code available} ("did you mean 'memory'?"), or names the Lattice
     * module of a first-party scheme that is missing, or says how a third-party provider is found.
     *
     * @param scheme the scheme asked for (may be null when the URI had none)
     * @param available the schemes (and aliases) found on the classpath
     */
    public UnknownSchemeException(String scheme, List<String> available) {
        super(SchemeHints.message(scheme, available));
        this.scheme = scheme;
        this.available = List.copyOf(available);
    }

    /** {@return the scheme asked for} */
    public String scheme() {
        return scheme;
    }

    /** {@return the schemes that were found} */
    public List<String> available() {
        return available;
    }
}
