package dev.lattice.spi;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
            found.putIfAbsent(f.scheme().toLowerCase(Locale.ROOT), f);
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
     * The factory for a scheme or one of its {@linkplain WalStorageProviderFactory#aliases() aliases}.
     *
     * @param scheme the scheme, case-insensitive
     * @return the factory
     * @throws UnknownSchemeException if none is on the classpath; its message lists the schemes found and suggests a
     *     close one or the module that provides it
     */
    public static WalStorageProviderFactory factory(String scheme) {
        Map<String, WalStorageProviderFactory> all = factories();
        WalStorageProviderFactory f = scheme == null ? null : find(all, scheme.toLowerCase(Locale.ROOT));
        if (f == null) {
            throw new UnknownSchemeException(scheme, namesOf(all));
        }
        return f;
    }

    /**
     * The URI in the form its factory expects: a {@code jdbc:} prefix removed (unless a factory claims {@code jdbc}
     * itself), an alias scheme replaced by the factory's own ({@code jdbc:postgresql://h/db} and
     * {@code postgresql://h/db} both give {@code postgres://h/db}). Query, user info and path are kept as written.
     *
     * @param uri a provider URI
     * @return the URI with its factory's scheme
     * @throws NullPointerException if {@code uri} is null
     * @throws UnknownSchemeException if no factory handles the scheme
     * @throws IllegalArgumentException if a {@code jdbc:} URI does not hold a URI with a scheme
     */
    public static URI canonical(URI uri) {
        Objects.requireNonNull(uri, "uri");
        Map<String, WalStorageProviderFactory> all = factories();
        String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
        if (scheme != null && scheme.equals("jdbc") && !all.containsKey("jdbc") && uri.isOpaque()) {
            URI inner = parse(uri.getRawSchemeSpecificPart()
                    + (uri.getRawFragment() == null ? "" : "#" + uri.getRawFragment()));
            if (inner.getScheme().equalsIgnoreCase("jdbc")) {
                throw new IllegalArgumentException("provider URI '" + uri + "' has two jdbc: prefixes");
            }
            return canonical(inner);
        }
        WalStorageProviderFactory f = scheme == null ? null : find(all, scheme);
        if (f == null) {
            throw new UnknownSchemeException(uri.getScheme(), namesOf(all));
        }
        if (f.scheme().equalsIgnoreCase(scheme)) {
            return uri;
        }
        return URI.create(f.scheme().toLowerCase(Locale.ROOT) + uri.toString().substring(uri.getScheme().length()));
    }

    private static WalStorageProviderFactory find(Map<String, WalStorageProviderFactory> all, String scheme) {
        WalStorageProviderFactory f = all.get(scheme);
        if (f != null) {
            return f;
        }
        for (WalStorageProviderFactory candidate : all.values()) {
            for (String alias : candidate.aliases()) {
                if (alias.equalsIgnoreCase(scheme)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    private static List<String> namesOf(Map<String, WalStorageProviderFactory> all) {
        java.util.TreeSet<String> names = new java.util.TreeSet<>(all.keySet());
        for (WalStorageProviderFactory f : all.values()) {
            for (String alias : f.aliases()) {
                names.add(alias.toLowerCase(Locale.ROOT));
            }
        }
        return new ArrayList<>(names);
    }

    /**
     * Opens a provider for a URI with the factory of its scheme.
     *
     * @param uri e.g. {@code chronicle:./lattice-data} or {@code postgres://host:5432/db?schema=lattice}; a
     *     {@code jdbc:} prefix or an alias scheme is resolved first ({@link #canonical(URI)})
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
        URI c = canonical(uri);
        return factory(c.getScheme()).open(c, options);
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
     * Opens a read-only provider instance for a URI with the factory of its scheme
     * ({@link WalStorageProviderFactory#openReadOnly(URI, Map)}): it only reads, and may run beside a writer
     * instance on the same storage in another process.
     *
     * @param uri e.g. {@code chronicle:./lattice-data}; a {@code jdbc:} prefix or an alias scheme is resolved first
     *     ({@link #canonical(URI)})
     * @param options options that win over the URI's query options; may be empty
     * @return an open read-only provider instance; the caller closes it
     * @throws NullPointerException if an argument is null
     * @throws UnknownSchemeException if no factory handles the scheme
     * @throws IllegalArgumentException if the URI or an option is malformed
     * @throws WalStorageException if the provider fails to open
     */
    public static WalStorageProvider openReadOnly(URI uri, Map<String, String> options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        URI c = canonical(uri);
        return factory(c.getScheme()).openReadOnly(c, options);
    }

    /**
     * Opens a read-only provider instance from a URI string with no extra options.
     *
     * @param uri the URI text
     * @return an open read-only provider instance
     * @throws IllegalArgumentException if the text is not a URI (the message quotes the parser) or as
     *     {@link #openReadOnly(URI, Map)}
     * @throws WalStorageException if the provider fails to open
     */
    public static WalStorageProvider openReadOnly(String uri) {
        return openReadOnly(parse(uri), Map.of());
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
