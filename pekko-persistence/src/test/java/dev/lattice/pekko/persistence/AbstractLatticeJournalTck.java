package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import org.apache.pekko.persistence.CapabilityFlag;
import org.apache.pekko.persistence.japi.journal.JavaJournalSpec;
import org.junit.runner.RunWith;

/**
 * Pekko's journal TCK on the Lattice journal with every capability flag it can honour switched on: atomic
 * {@code persistAll} of several events, rejection of non-serializable events, serialization and metadata. (Pekko
 * 1.7.0's TCK has no {@code supportsReplayWindowSpanningDeletedPrefix} flag.) Subclasses pick the provider.
 */
@RunWith(ScalaTestJUnitRunner.class)
public abstract class AbstractLatticeJournalTck extends JavaJournalSpec {

    /** @param config the actor system configuration ({@link TestProviders#config}) */
    protected AbstractLatticeJournalTck(Config config) {
        super(config);
    }

    @Override
    public boolean supportsAtomicPersistAllOfSeveralEvents() {
        return true;
    }

    @Override
    public CapabilityFlag supportsRejectingNonSerializableObjects() {
        return CapabilityFlag.on();
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
        PluginSettings.fromConfig(system().settings().config().getConfig("lattice.persistence.journal"))
                .openTree(LatticeConnections.get(system()).lattice("lattice.persistence.connection"));
        super.beforeAll();
    }
}
