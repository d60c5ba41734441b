package dev.lattice.spi;

import java.net.URI;
import java.util.Objects;

/**
 * Reads the common parts of provider URIs of the forms {@code scheme:name}, {@code scheme:///name} and
 * {@code scheme://host[:port]/path/.../name} (the resource name, e.g. a table or container, is the last path
 * segment). Stateless and thread-safe.
 */
public final class ProviderUris {

    private ProviderUris() {
    }

    /**
     * The resource name: the scheme-specific part before any query of an opaque URI ({@code azure-tables:lattice}),
     * else the last segment of the path ({@code azure-tables://host/acct/lattice}).
     *
     * @param uri the provider URI
     * @return the name, or null when the URI names none
     * @throws NullPointerException if {@code uri} is null
     */
    public static String resourceName(URI uri) {
        Objects.requireNonNull(uri, "uri");
        if (uri.isOpaque()) {
            String ssp = uri.getSchemeSpecificPart();
            int q = ssp.indexOf('?');
            String name = q >= 0 ? ssp.substring(0, q) : ssp;
            return name.isEmpty() ? null : name;
        }
        String path = uri.getPath();
        if (path == null || path.isEmpty() || path.equals("/")) {
            return null;
        }
        String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        return trimmed.substring(trimmed.lastIndexOf('/') + 1);
    }

    /**
     * The HTTPS service endpoint of a hierarchical URI: {@code https://} + authority + the path without its last
     * segment ({@code azure-tables://host:10002/devstoreaccount1/lattice} gives
     * {@code https://host:10002/devstoreaccount1}).
     *
     * @param uri the provider URI
     * @return the endpoint, or null for an opaque URI or one without an authority
     * @throws NullPointerException if {@code uri} is null
     */
    public static String httpsEndpoint(URI uri) {
        Objects.requireNonNull(uri, "uri");
        if (uri.isOpaque() || uri.getRawAuthority() == null || uri.getRawAuthority().isEmpty()) {
            return null;
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        String prefix = trimmed.contains("/") ? trimmed.substring(0, trimmed.lastIndexOf('/')) : "";
        return "https://" + uri.getRawAuthority() + prefix;
    }
}
