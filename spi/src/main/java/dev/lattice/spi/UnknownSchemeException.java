package dev.lattice.spi;

import java.util.List;

/** No provider factory on the classpath handles a URI's scheme. The message lists the schemes that were found. */
public class UnknownSchemeException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String scheme;
    private final List<String> available;

    /**
     * @param scheme the scheme asked for (may be null when the URI had none)
     * @param available the schemes found on the classpath
     */
    public UnknownSchemeException(String scheme, List<String> available) {
        super("no Lattice provider for scheme '" + scheme + "' on the classpath; available schemes: " + available
                + " (add the provider module, e.g. lattice-provider-" + scheme + ", to the classpath)");
        this.scheme = scheme;
        this.available = List.copyOf(available);
    }

    /** @return the scheme asked for */
    public String scheme() {
        return scheme;
    }

    /** @return the schemes that were found */
    public List<String> available() {
        return available;
    }
}
