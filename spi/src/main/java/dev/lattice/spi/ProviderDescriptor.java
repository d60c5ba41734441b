package dev.lattice.spi;

import java.util.Objects;
import java.util.Set;

/**
 * What a provider is and can do, as returned by {@link WalStorageProvider#describe()}.
 *
 * <p>Immutable and thread-safe.
 *
 * @param name a short human-readable name, e.g. {@code "chronicle"}
 * @param version the provider implementation's version
 * @param limits the provider's real limits
 * @param durability what a committed entry survives with the provider's current configuration
 * @param features the optional behaviours it implements
 * @param replayCost the provider's replay cost estimate ({@link ReplayCostModel#UNKNOWN} when it gives none)
 */
public record ProviderDescriptor(String name, String version, ProviderLimits limits, DurabilityLevel durability,
                                 Set<ProviderFeature> features, ReplayCostModel replayCost) {

    /**
     * Creates a descriptor.
     *
     * @param name a short human-readable name, e.g. {@code "chronicle"}
     * @param version the provider implementation's version
     * @param limits the provider's real limits
     * @param durability what a committed entry survives with the provider's current configuration
     * @param features the optional behaviours it implements
     * @param replayCost the provider's replay cost estimate ({@link ReplayCostModel#UNKNOWN} when it gives none)
     * @throws NullPointerException if any component is null
     */
    public ProviderDescriptor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(durability, "durability");
        features = Set.copyOf(Objects.requireNonNull(features, "features"));
        Objects.requireNonNull(replayCost, "replayCost");
    }

    /**
     * A descriptor with no replay cost estimate ({@link ReplayCostModel#UNKNOWN}).
     *
     * @param name a short human-readable name
     * @param version the implementation's version
     * @param limits the real limits
     * @param durability what a committed entry survives
     * @param features the optional behaviours
     * @throws NullPointerException if any argument is null
     */
    public ProviderDescriptor(String name, String version, ProviderLimits limits, DurabilityLevel durability,
                              Set<ProviderFeature> features) {
        this(name, version, limits, durability, features, ReplayCostModel.UNKNOWN);
    }

    /**
     * Whether the provider declares a feature.
     *
     * @param feature a feature
     * @return true when the provider declares it
     */
    public boolean has(ProviderFeature feature) {
        return features.contains(feature);
    }
}
