package dev.lattice.engine;

import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.WalStorageProvider;

/** A provider registered in a lattice under a key, with its descriptor and whether the lattice closes it. */
record ProviderHandle(String key, WalStorageProvider provider, ProviderDescriptor descriptor, boolean owned) {

    static ProviderHandle of(String key, WalStorageProvider provider, boolean owned) {
        return new ProviderHandle(key, provider, provider.describe(), owned);
    }
}
