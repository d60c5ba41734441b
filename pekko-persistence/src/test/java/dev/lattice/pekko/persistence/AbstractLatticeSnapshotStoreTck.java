package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import org.apache.pekko.persistence.CapabilityFlag;
import org.apache.pekko.persistence.japi.snapshot.JavaSnapshotStoreSpec;
import org.junit.runner.RunWith;

/**
 * Pekko's snapshot store TCK on the Lattice snapshot store with serialization and metadata switched on. Subclasses
 * pick the provider.
 */
@RunWith(ScalaTestJUnitRunner.class)
public abstract class AbstractLatticeSnapshotStoreTck extends JavaSnapshotStoreSpec {

    /** @param config the actor system configuration ({@link TestProviders#config}) */
    protected AbstractLatticeSnapshotStoreTck(Config config) {
        super(config);
    }

    @Override
    public CapabilityFlag supportsSerialization() {
        return CapabilityFlag.on();
    }

    @Override
    public CapabilityFlag supportsMetadata() {
        return CapabilityFlag.on();
    }

    /** Opens Lattice and the plugin's tree before the first test, so that its timeouts do not include the open. */
    @Override
    public void beforeAll() {
        PluginSettings.fromConfig(system().settings().config().getConfig("lattice.persistence.snapshot-store"))
                .openTree(LatticeConnections.get(system()).lattice("lattice.persistence.connection"));
        super.beforeAll();
    }
}
