package dev.lattice.pekko.persistence;

import dev.lattice.engine.Lattice;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.apache.pekko.actor.ExtensionIdProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Actor-system extension holding the open {@link Lattice} instances of the system's Lattice plugins, one per
 * connection block path (so a journal, snapshot store and durable state store naming the same block share one
 * Lattice). Each Lattice is opened on first use and closed when the actor system terminates.
 *
 * <p>Thread-safe.
 */
public final class LatticeConnections implements Extension {

    private static final Logger LOG = LoggerFactory.getLogger(LatticeConnections.class);

    /** The extension id; {@code LatticeConnections.ID.get(system)} returns the system's instance. */
    public static final Id ID = new Id();

    /** The id type of {@link LatticeConnections} (Pekko's extension mechanism). Thread-safe. */
    public static final class Id extends AbstractExtensionId<LatticeConnections> implements ExtensionIdProvider {
        private Id() {
        }

        /**
         * @param system the actor system
         * @return a new extension instance for it
         */
        @Override
        public LatticeConnections createExtension(ExtendedActorSystem system) {
            return new LatticeConnections(system);
        }

        /** @return this id */
        @Override
        public Id lookup() {
            return ID;
        }
    }

    private final ActorSystem system;
    private final Map<String, Lattice> open = new ConcurrentHashMap<>();
    private volatile boolean terminated;

    private LatticeConnections(ActorSystem system) {
        this.system = system;
        system.registerOnTermination(this::closeAll);
    }

    /**
     * @param system an actor system
     * @return its extension instance
     */
    public static LatticeConnections get(ClassicActorSystemProvider system) {
        return ID.get(system.classicSystem());
    }

    /**
     * The Lattice of a connection block, opened on first call.
     *
     * @param path the block's path in the actor system's configuration, e.g. {@code lattice.persistence.connection}
     * @return the open Lattice (shared; do not close it, the actor system's termination does)
     * @throws NullPointerException if {@code path} is null
     * @throws com.typesafe.config.ConfigException if the block is missing or malformed
     * @throws IllegalArgumentException if a setting is out of range or the URI is malformed
     * @throws IllegalStateException if the actor system is terminating
     * @throws dev.lattice.spi.WalStorageException if the provider fails to open
     */
    public Lattice lattice(String path) {
        Objects.requireNonNull(path, "path");
        if (terminated) {
            throw new IllegalStateException("actor system " + system.name() + " is terminating");
        }
        return open.computeIfAbsent(path, p -> {
            ConnectionSettings s = ConnectionSettings.fromConfig(system.settings().config().getConfig(p));
            LOG.debug("opening Lattice for {}: {}", p, s);
            return Lattice.open(s.toLatticeConfig());
        });
    }

    private void closeAll() {
        terminated = true;
        for (Map.Entry<String, Lattice> e : open.entrySet()) {
            try {
                e.getValue().close();
            } catch (RuntimeException ex) {
                LOG.warn("closing the Lattice of {} failed", e.getKey(), ex);
            }
        }
        open.clear();
    }
}
