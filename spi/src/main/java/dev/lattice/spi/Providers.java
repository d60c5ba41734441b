package dev.lattice.spi;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Finds provider factories on the classpath ({@link ServiceLoader}) and opens providers by URI scheme.
 *
 * <p>Stateless and thread-safe; every call looks the factories up again with the given (or the context) class
 * loader, so it sees modules added to a class loader later.
 */
public final class Providers {

    private Providers() {
    }

    /**
     * The factories found by a class loader, by scheme. When two factories claim one scheme, the first one found
     * wins.
     *
     * @param loader the class loader to search
     * @return factories keyed by scheme, sorted by scheme
     * @throws java.util.ServiceConfigurationError if a registered factory cannot be loaded
     */
    public static Map<String, WalStorageProviderFactory> factories(ClassLoader loader) {
        Map<String, WalStorageProviderFactory> found = new TreeMap<>();
        for (WalStorageProviderFactory f : ServiceLoader.load(WalStorageProviderFactory.class, loader)) {
            found.putIfAbsent(f.scheme().toLowerCase(java.util.Locale.ROOT), f);
        }
        return found;
    }

    /**
     * The factories found by the thread's context class loader (or this class's loader when there is none).
     *
     * @return factories keyed by scheme, sorted by scheme
     */
    public static Map<String, WalStorageProviderFactory> factories() {
        return factories(defaultLoader());
    }

    /**
     * The schemes found on the classpath.
     *
     * @return sorted schemes
     */
    public static List<String> schemes() {
        return new ArrayList<>(factories().keySet());
    }

    /**
     * The factory for a scheme.
     *
     * @param scheme the scheme, case-insensitive
     * @return the factory
     * @throws UnknownSchemeException if none is on the classpath; its message lists the schemes found
     */
    public static WalStorageProviderFactory factory(String scheme) {
        Map<String, WalStorageProviderFactory> all = factories();
        WalStorageProviderFactory f = scheme == null ? null : all.get(scheme.toLowerCase(java.util.Locale.ROOT));
        if (f == null) {
            throw new UnknownSchemeException(scheme, new ArrayList<>(all.keySet()));
        }
        return f;
    }

    /**
     * Opens a provider for a URI with the factory of its scheme.
     *
     * @param uri e.g. {@code chronicle:./lattice-data} or {@code postgres://host:5432/db?schema=lattice}
     * @param options options that win over the URI's query options; may be empty
     * @return an open provider; the caller closes it
     * @throws NullPointerException if an argument is null
     * @throws UnknownSchemeException if no factory handles the scheme
     * @throws IllegalArgumentException if the URI or an option is malformed
     * @throws WalStorageException if the provider fails to open
     */
    public static WalStorageProvider open(URI uri, Map<String, String> options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        return factory(uri.getScheme()).open(uri, options);
    }

    /**
     * Opens a provider from a URI string with no extra options.
     *
     * @param uri the URI text
     * @return an open provider
     * @throws IllegalArgumentException if the text is not a URI (the message quotes the parser) or as
     *     {@link #open(URI, Map)}
     * @throws WalStorageException if the provider fails to open
     */
    public static WalStorageProvider open(String uri) {
        return open(parse(uri), Map.of());
    }

    /**
     * Parses a provider URI string.
     *
     * @param uri the text, e.g. {@code chronicle:./data}
     * @return the URI
     * @throws NullPointerException if {@code uri} is null
     * @throws IllegalArgumentException if it is not a URI or has no scheme
     */
    public static URI parse(String uri) {
        Objects.requireNonNull(uri, "uri");
        URI parsed;
        try {
            parsed = new URI(uri);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not a provider URI: '" + uri + "': " + e.getMessage(), e);
        }
        if (parsed.getScheme() == null) {
            throw new IllegalArgumentException("provider URI '" + uri
                    + "' has no scheme; expected e.g. chronicle:./lattice-data (schemes found: " + schemes() + ")");
        }
        return parsed;
    }

    private static ClassLoader defaultLoader() {
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        return cl != null ? cl : Providers.class.getClassLoader();
    }
}
