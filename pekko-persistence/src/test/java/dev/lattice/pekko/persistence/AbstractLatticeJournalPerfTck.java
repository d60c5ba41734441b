package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import org.apache.pekko.persistence.CapabilityFlag;
import org.apache.pekko.persistence.japi.journal.JavaJournalPerfSpec;
import org.junit.runner.RunWith;

/**
 * Pekko's {@code JournalPerfSpec} (persist, persistAsync and recovery of {@link #eventsCount()} events, averaged over
 * {@link #measurementIterations()} runs), plus the journal TCK it extends. Only run with {@code -Dlattice.pekko.perf}
 * (surefire excludes {@code *PerfSpec} otherwise); prints its figures to stdout. Subclasses pick the journal.
 */
@RunWith(ScalaTestJUnitRunner.class)
public abstract class AbstractLatticeJournalPerfTck extends JavaJournalPerfSpec {

    private final AutoCloseable emulator;

    /** @param config the actor system configuration */
    protected AbstractLatticeJournalPerfTck(Config config) {
        this(config, null);
    }

    /**
     * @param config the actor system configuration
     * @param emulator an emulator of this spec's own ({@link TestProviders#privateEmulator}), stopped after the last
     *     test; null when none
     */
    protected AbstractLatticeJournalPerfTck(Config config, AutoCloseable emulator) {
        super(config);
        this.emulator = emulator;
    }

    @Override
    public int eventsCount() {
        return 10_000;
    }

    @Override
    public int measurementIterations() {
        return Integer.getInteger("lattice.pekko.perf.iterations", 3);
    }

    @Override
    public long awaitDurationMillis() {
        return 300_000;
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

    /** Opens Lattice and the journal tree before the first test. */
    @Override
    public void beforeAll() {
        if (system().settings().config().getString("pekko.persistence.journal.plugin")
                .equals("lattice.persistence.journal")) {
            PluginSettings.fromConfig(system().settings().config().getConfig("lattice.persistence.journal"))
                    .openTree(LatticeConnections.get(system()).lattice("lattice.persistence.connection"));
        }
        super.beforeAll();
    }

    /** Terminates the actor system (closing Lattice), then stops this spec's own emulator, if any. */
    @Override
    public void afterAll() {
        try {
            super.afterAll();
        } finally {
            if (emulator != null) {
                try {
                    emulator.close();
                } catch (Exception e) {
                    throw new IllegalStateException("stopping the emulator failed", e);
                }
            }
        }
    }
}
