package dev.lattice.spi.memory;

import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.support.ProviderOptions;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.WalStorageProviderFactory;

import java.net.URI;
import java.util.Map;
import java.util.Set;

/**
 * Factory for scheme {@code memory}: {@code memory:<name>} opens a provider over the JVM-wide
 * {@link InMemoryStorage#named(String) named storage}, so two opens of one name see the same logs. Options
 * {@code maxEntryBytes}, {@code maxBatchBytes}, {@code maxEntriesPerBatch}, {@code maxCheckpointBytes} override the
 * {@link InMemoryWalStorageProvider#DEFAULT_LIMITS default limits}. Thread-safe.
 */
public final class InMemoryProviderFactory implements WalStorageProviderFactory {

    /** Creates the factory (ServiceLoader needs a public no-argument constructor). */
    public InMemoryProviderFactory() {
    }

    @Override
    public String scheme() {
        return "memory";
    }

    @Override
    public String description() {
        return "in-process memory (tests, demos); memory:<name> shares storage by name within the JVM";
    }

    @Override
    public WalStorageProvider open(URI uri, Map<String, String> options) {
        ProviderOptions o = ProviderOptions.of(uri, options)
                .requireKnown(Set.of("maxEntryBytes", "maxBatchBytes", "maxEntriesPerBatch", "maxCheckpointBytes"));
        String ssp = uri.getSchemeSpecificPart();
        int q = ssp.indexOf('?');
        String name = (q >= 0 ? ssp.substring(0, q) : ssp).replaceFirst("^//", "");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("memory URI needs a storage name, e.g. memory:test");
        }
        ProviderLimits d = InMemoryWalStorageProvider.DEFAULT_LIMITS;
        ProviderLimits limits = new ProviderLimits(
                (int) o.getLong("maxEntryBytes", d.maxEntryBytes(), 1, Integer.MAX_VALUE),
                o.getLong("maxBatchBytes", d.maxBatchBytes(), 1, Long.MAX_VALUE),
                (int) o.getLong("maxEntriesPerBatch", d.maxEntriesPerBatch(), 1, Integer.MAX_VALUE),
                o.getLong("maxCheckpointBytes", d.maxCheckpointBytes(), 1, Long.MAX_VALUE));
        return new InMemoryWalStorageProvider(InMemoryStorage.named(name), limits);
    }
}
