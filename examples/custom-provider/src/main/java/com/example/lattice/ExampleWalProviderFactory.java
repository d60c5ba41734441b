package com.example.lattice;

import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.WalStorageProviderFactory;
import dev.lattice.spi.memory.InMemoryStorage;

import java.net.URI;
import java.util.Map;

/**
 * Opens {@link ExampleWalProvider} for URIs {@code example:<name>}; found by {@code ServiceLoader} through
 * {@code META-INF/services/dev.lattice.spi.WalStorageProviderFactory}, so {@code Lattice.open("example:orders")}
 * works with this jar on the classpath. Thread-safe.
 */
public final class ExampleWalProviderFactory implements WalStorageProviderFactory {

    /** Called by {@code ServiceLoader}. */
    public ExampleWalProviderFactory() {
    }

    @Override
    public String scheme() {
        return "example";
    }

    @Override
    public String description() {
        return "example provider (in-process memory, a template for third-party providers)";
    }

    @Override
    public WalStorageProvider open(URI uri, Map<String, String> options) {
        if (!options.isEmpty()) {
            throw new IllegalArgumentException("the example provider takes no options, got " + options.keySet());
        }
        String name = uri.getSchemeSpecificPart();
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("example URI needs a storage name, e.g. example:orders");
        }
        return new ExampleWalProvider(InMemoryStorage.named("example/" + name));
    }
}
