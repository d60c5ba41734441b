package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.PlacementPolicy;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Lattice connection a plugin opens: a provider URI with its options, optional named providers and a placement of
 * trees on them, and the engine settings the plugin exposes. Read from a connection block such as
 * {@code lattice.persistence.connection} (see {@code reference.conf}).
 *
 * <p>Immutable and thread-safe.
 *
 * @param uri the main provider URI, e.g. {@code chronicle:./data} or {@code postgres://host:5432/db?user=u}
 * @param options the main provider's options (e.g. {@code password}, {@code connectionString})
 * @param namedProviders provider key to its URI and options
 * @param placement tree name to the provider keys its partitions go to (round robin); trees not named stay on the
 *     main provider
 * @param partitions the partition count of trees this connection creates
 * @param ownershipCheckInterval how often an idle log proves its fence ({@link LatticeConfig.Builder#ownershipCheckInterval})
 * @param providerCallTimeout the deadline of one provider call ({@link LatticeConfig.Builder#providerCallTimeout})
 */
public record ConnectionSettings(String uri, Map<String, String> options, Map<String, NamedProvider> namedProviders,
                                 Map<String, List<String>> placement, int partitions,
                                 Duration ownershipCheckInterval, Duration providerCallTimeout) {

    /**
     * A further provider registered under a key.
     *
     * @param uri its URI
     * @param options its options
     */
    public record NamedProvider(String uri, Map<String, String> options) {
        /**
         * @param uri its URI
         * @param options its options
         * @throws NullPointerException if an argument is null
         */
        public NamedProvider {
            Objects.requireNonNull(uri, "uri");
            options = Map.copyOf(options);
        }
    }

    /**
     * @param uri the main provider URI
     * @param options its options
     * @param namedProviders further providers by key
     * @param placement tree name to provider keys
     * @param partitions partitions of new trees, 1..1024
     * @param ownershipCheckInterval zero or at least 10 ms
     * @param providerCallTimeout zero (off) or positive, at most 1 hour
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the URI is blank or {@code partitions} is out of range
     */
    public ConnectionSettings {
        Objects.requireNonNull(uri, "uri");
        if (uri.isBlank()) {
            throw new IllegalArgumentException("the Lattice connection needs a provider URI (connection.uri), "
                    + "e.g. \"chronicle:./lattice-data\" or \"postgres://127.0.0.1:5432/db?user=app\"");
        }
        if (partitions < 1 || partitions > 1024) {
            throw new IllegalArgumentException("connection.partitions must be in 1..1024, got " + partitions);
        }
        options = Map.copyOf(options);
        namedProviders = Collections.unmodifiableMap(new LinkedHashMap<>(namedProviders));
        placement = Map.copyOf(placement);
        Objects.requireNonNull(ownershipCheckInterval, "ownershipCheckInterval");
        Objects.requireNonNull(providerCallTimeout, "providerCallTimeout");
    }

    /**
     * Reads a connection block.
     *
     * @param c the block ({@code uri}, {@code options}, {@code named-providers}, {@code placement},
     *     {@code partitions}, {@code ownership-check-interval}, {@code provider-call-timeout})
     * @return the settings
     * @throws ConfigException if a key is missing or has the wrong type
     * @throws IllegalArgumentException if a value is out of range (message names the key)
     */
    public static ConnectionSettings fromConfig(Config c) {
        Map<String, NamedProvider> named = new LinkedHashMap<>();
        ConfigObject np = c.getObject("named-providers");
        for (String key : np.keySet()) {
            Config one = c.getConfig("named-providers." + quote(key));
            named.put(key, new NamedProvider(one.getString("uri"),
                    one.hasPath("options") ? strings(one.getObject("options")) : Map.of()));
        }
        Map<String, List<String>> placement = new LinkedHashMap<>();
        ConfigObject pl = c.getObject("placement");
        for (String tree : pl.keySet()) {
            List<String> keys = c.getStringList("placement." + quote(tree));
            if (keys.isEmpty()) {
                throw new IllegalArgumentException("connection.placement." + tree + " lists no provider key");
            }
            for (String k : keys) {
                if (!k.equals(PlacementPolicy.DEFAULT_KEY) && !named.containsKey(k)) {
                    throw new IllegalArgumentException("connection.placement." + tree + " names provider key '" + k
                            + "', which is neither 'default' nor in connection.named-providers " + named.keySet());
                }
            }
            placement.put(tree, List.copyOf(keys));
        }
        return new ConnectionSettings(c.getString("uri"), strings(c.getObject("options")), named, placement,
                c.getInt("partitions"), c.getDuration("ownership-check-interval"),
                c.getDuration("provider-call-timeout"));
    }

    private static String quote(String key) {
        return "\"" + key.replace("\"", "\\\"") + "\"";
    }

    private static Map<String, String> strings(ConfigObject o) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigValue> e : o.entrySet()) {
            out.put(e.getKey(), String.valueOf(e.getValue().unwrapped()));
        }
        return out;
    }

    /**
     * The engine configuration for these settings.
     *
     * @return a Lattice configuration (the providers are opened by {@code Lattice.open})
     * @throws IllegalArgumentException if the engine refuses a value (message names it)
     */
    public LatticeConfig toLatticeConfig() {
        LatticeConfig.Builder b = LatticeConfig.builder().uri(uri).providerOptions(options).partitions(partitions)
                .ownershipCheckInterval(ownershipCheckInterval).providerCallTimeout(providerCallTimeout);
        namedProviders.forEach((k, p) -> b.namedProvider(k, p.uri(), p.options()));
        if (!placement.isEmpty()) {
            Map<String, List<String>> byTree = placement;
            PlacementPolicy fallback = PlacementPolicy.allOnDefault();
            b.placement((tree, parts, registered) -> {
                List<String> keys = byTree.get(tree);
                return keys == null ? fallback.place(tree, parts, registered)
                        : PlacementPolicy.roundRobin(keys.toArray(String[]::new)).place(tree, parts, registered);
            });
        }
        return b.build();
    }

    /** @return the settings without option values (they may hold passwords) */
    @Override
    public String toString() {
        return "ConnectionSettings[uri=" + redact(uri) + ", options=" + options.keySet() + ", namedProviders="
                + namedProviders.keySet() + ", placement=" + placement + ", partitions=" + partitions + "]";
    }

    private static String redact(String u) {
        int q = u.indexOf('?');
        return q < 0 ? u : u.substring(0, q) + "?...";
    }
}
