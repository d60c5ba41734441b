package dev.lattice.spi;

import java.net.URI;
import java.util.Map;
import java.util.Set;

/**
 * Creates providers for one URI scheme. A provider module registers its factory as a {@link java.util.ServiceLoader}
 * service in {@code META-INF/services/dev.lattice.spi.WalStorageProviderFactory}; {@link Providers#open} finds it
 * by scheme. Implementations have a public no-argument constructor and are thread-safe.
 */
public interface WalStorageProviderFactory {

    /**
     * The URI scheme this factory handles, lower case, e.g. {@code "chronicle"} or {@code "postgres"}.
     *
     * @return the scheme; constant
     */
    String scheme();

    /**
     * Other schemes this factory accepts, lower case, e.g. {@code "postgresql"} for {@code postgres}.
     * {@link Providers#open(URI, Map)} rewrites such a URI to {@link #scheme()} before calling {@link #open}, so
     * {@code open} sees only its own scheme. A {@code jdbc:} prefix ({@code jdbc:postgresql://...}) is removed first,
     * unless a factory claims the scheme {@code jdbc} itself.
     *
     * @return the aliases; empty by default; constant
     */
    default Set<String> aliases() {
        return Set.of();
    }

    /**
     * One line saying what the provider stores to and how its URI looks, for {@code lattice providers}.
     *
     * @return a short description
     */
    default String description() {
        return scheme() + " provider";
    }

    /**
     * Opens a provider.
     *
     * @param uri the location, with this factory's scheme; options may come in its query ({@code ?k=v&k2=v2})
     * @param options further options; they win over query options with the same name. Secrets may be passed here
     *     and are never logged nor put in exception messages
     * @return an open provider; the caller closes it
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the URI or an option is malformed or unknown (the message names it)
     * @throws ProviderUnavailableException if the backend cannot be reached
     * @throws WalStorageException on any other failure to open
     */
    WalStorageProvider open(URI uri, Map<String, String> options);

    /**
     * Opens a provider instance that only reads: {@code read}, {@code state}, {@code logs}, {@code trees},
     * {@code describe}, checkpoints {@code latest}/{@code open}, runs {@code list}/{@code read}/{@code limits}.
     * Such an instance may run beside a writer instance on the same storage, in another process, and sees what that
     * writer has committed, trimmed, published and written (how fresh a read is depends on the provider; its page in
     * docs/providers says). Write calls (claim, stage, commit, abort, trim, reconcile, repair, drop, checkpoint
     * publish and delete, run write and delete) should throw {@link ReadOnlyProviderException}.
     *
     * <p>The default returns {@link #open(URI, Map)}: right for providers whose normal instance already allows a
     * second instance beside a writer (network stores fence writers by epoch and take no exclusive lock); the
     * returned instance then does not refuse writes itself. A provider whose normal instance locks its storage
     * exclusively, or keeps the committed state only in the writer's memory, overrides this.
     *
     * @param uri the location, with this factory's scheme; options may come in its query
     * @param options further options; they win over query options with the same name
     * @return an open provider instance; the caller closes it
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the URI or an option is malformed or unknown (the message names it)
     * @throws ProviderUnavailableException if the backend cannot be reached
     * @throws WalStorageException on any other failure to open
     */
    default WalStorageProvider openReadOnly(URI uri, Map<String, String> options) {
        return open(uri, options);
    }
}
