package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.persistence.state.DurableStateStoreProvider;
import org.apache.pekko.persistence.state.javadsl.DurableStateStore;

import java.util.concurrent.ExecutorService;

/**
 * Pekko durable state plugin on a Lattice tree: the {@code class} of a durable state plugin block (default block
 * {@code lattice.persistence.state}). Pekko creates one instance per plugin id; the stores it returns share one
 * {@link LatticeDurableStateStore}.
 *
 * <p>Thread-safe.
 */
public final class LatticeDurableStateStoreProvider implements DurableStateStoreProvider {

    private final LatticeDurableStateStore javaStore;
    private final ScalaDurableStateStore scalaStore;

    /**
     * Called by Pekko.
     *
     * @param system the actor system
     * @param config the plugin block ({@code connection}, {@code tree}, ...)
     * @param configPath the plugin block's path
     * @throws com.typesafe.config.ConfigException if a setting is missing or malformed
     * @throws IllegalArgumentException if a setting is out of range
     * @throws RuntimeException if Lattice cannot be opened
     */
    public LatticeDurableStateStoreProvider(ExtendedActorSystem system, Config config, String configPath) {
        PluginSettings s = PluginSettings.fromConfig(config);
        var lattice = LatticeConnections.get(system).lattice(s.connection());
        var tree = s.openTree(lattice);
        ExecutorService threads = PluginThreads.pool("lattice-state-" + s.tree(), 2);
        system.registerOnTermination(threads::shutdown);
        this.javaStore = new LatticeDurableStateStore(tree, system, threads);
        this.scalaStore = new ScalaDurableStateStore(javaStore);
    }

    /** @return the Scala API store */
    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public org.apache.pekko.persistence.state.scaladsl.DurableStateStore<Object> scaladslDurableStateStore() {
        return scalaStore;
    }

    /** @return the Java API store */
    @Override
    public DurableStateStore<Object> javadslDurableStateStore() {
        return javaStore;
    }
}
