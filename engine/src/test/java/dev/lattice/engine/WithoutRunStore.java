package dev.lattice.engine;

import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testkit.ForwardingProvider;

import java.util.EnumSet;
import java.util.Set;

/**
 * A real provider that does not declare {@link ProviderFeature#RUNS}, as a third-party provider written before run
 * stores: the engine keeps such trees in memory with whole-partition checkpoints.
 */
final class WithoutRunStore extends ForwardingProvider {

    WithoutRunStore(WalStorageProvider delegate) {
        super(delegate);
    }

    @Override
    public ProviderDescriptor describe() {
        ProviderDescriptor d = delegate.describe();
        Set<ProviderFeature> features = d.features().isEmpty() ? EnumSet.noneOf(ProviderFeature.class)
                : EnumSet.copyOf(d.features());
        features.remove(ProviderFeature.RUNS);
        return new ProviderDescriptor(d.name(), d.version(), d.limits(), d.durability(), features, d.replayCost());
    }

    @Override
    public RunStore runs() {
        throw new UnsupportedOperationException("this provider has no run store");
    }
}
