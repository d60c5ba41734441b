package dev.lattice.provider.chronicle;

import dev.lattice.spi.support.ProviderOptions;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.WalStorageProviderFactory;

import java.net.URI;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Factory for scheme {@code chronicle}: {@code chronicle:<directory>[?option=value&...]}, e.g.
 * {@code chronicle:./lattice-data} (relative to the working directory), {@code chronicle:/var/lib/app/wal} or
 * {@code chronicle:///var/lib/app/wal?durability=fsync}. Options (query or map, the map wins) are listed in
 * {@link ChronicleConfig#OPTIONS}; unknown ones are rejected. Registered for {@link java.util.ServiceLoader}.
 * Stateless and thread-safe.
 */
public final class ChronicleProviderFactory implements WalStorageProviderFactory {

    /** The URI scheme. */
    public static final String SCHEME = "chronicle";

    static {
        ChronicleQuiet.properties();
    }

    /** Creates the factory (ServiceLoader needs a public no-argument constructor). */
    public ChronicleProviderFactory() {
    }

    @Override
    public String scheme() {
        return SCHEME;
    }

    @Override
    public String description() {
        return "local disk through Chronicle Queue (the embedded default): chronicle:<directory>"
                + "[?durability=process|fsync&blockSize=16m&rollCycle=hourly]";
    }

    /**
     * Opens a provider on the URI's directory.
     *
     * @throws IllegalArgumentException if the scheme is not {@code chronicle}, the URI has a host or no path, or an
     *     option is unknown or malformed
     * @throws MissingJvmFlagsException if the JVM lacks the flags Chronicle needs (the message lists them)
     * @throws DirectoryLockedException if another provider instance holds the directory
     * @throws dev.lattice.spi.WalStorageException if the directory cannot be created, locked or read
     */
    @Override
    public WalStorageProvider open(URI uri, Map<String, String> options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        if (uri.getScheme() == null || !SCHEME.equals(uri.getScheme().toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("not a chronicle URI: " + uri);
        }
        Path root = directoryOf(uri);
        return ChronicleWalStorageProvider.open(ChronicleConfig.fromOptions(root, ProviderOptions.of(uri, options)));
    }

    /**
     * Opens a read-only instance on the URI's directory (docs/providers/chronicle.md "Read-only instances"): no
     * directory lock, so it opens beside a writer instance in this or another process; it never creates or changes
     * a file; {@code read} and {@code state} reflect what the writer has committed and trimmed at the time of each
     * call, checkpoints and runs are re-listed per call; write calls throw
     * {@link dev.lattice.spi.ReadOnlyProviderException}. Same URI and options as {@link #open(URI, Map)}.
     *
     * @throws IllegalArgumentException if the scheme is not {@code chronicle}, the URI has a host or no path, or an
     *     option is unknown or malformed
     * @throws MissingJvmFlagsException if the JVM lacks the flags Chronicle needs (the message lists them)
     * @throws dev.lattice.spi.WalStorageException if the directory's format record cannot be read
     */
    @Override
    public WalStorageProvider openReadOnly(URI uri, Map<String, String> options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        if (uri.getScheme() == null || !SCHEME.equals(uri.getScheme().toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("not a chronicle URI: " + uri);
        }
        ChronicleConfig c = ChronicleConfig.fromOptions(directoryOf(uri), ProviderOptions.of(uri, options));
        return ChronicleWalStorageProvider.open(c.asReadOnly());
    }

    /**
     * The directory a chronicle URI names.
     *
     * @param uri the URI
     * @return the path (relative paths stay relative to the working directory)
     * @throws IllegalArgumentException if the URI has a host or names no directory
     */
    static Path directoryOf(URI uri) {
        String path;
        if (uri.isOpaque()) {
            String raw = uri.getRawSchemeSpecificPart();
            int q = raw.indexOf('?');
            path = URI.create(SCHEME + ":" + (q >= 0 ? raw.substring(0, q) : raw)).getSchemeSpecificPart();
        } else {
            if (uri.getRawAuthority() != null && !uri.getRawAuthority().isEmpty()) {
                throw new IllegalArgumentException("chronicle URI '" + uri + "' names a host ('"
                        + uri.getRawAuthority() + "'); use chronicle:/absolute/dir, chronicle:///absolute/dir or "
                        + "chronicle:relative/dir");
            }
            path = uri.getPath();
        }
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("chronicle URI '" + uri + "' names no directory; e.g. "
                    + "chronicle:./lattice-data");
        }
        try {
            return Path.of(path);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("chronicle URI '" + uri + "' has an invalid path: " + e.getMessage(), e);
        }
    }
}
