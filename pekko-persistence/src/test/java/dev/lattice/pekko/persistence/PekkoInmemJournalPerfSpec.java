package dev.lattice.pekko.persistence;

import com.typesafe.config.ConfigFactory;

/**
 * The baseline: {@code JournalPerfSpec} on Pekko's own in-memory journal ({@code pekko.persistence.journal.inmem}), in
 * the same run as the Lattice ones (only with {@code -Dlattice.pekko.perf}). Pekko's in-memory journal does not
 * serialize by default; the flags it cannot honour are switched off.
 */
public class PekkoInmemJournalPerfSpec extends AbstractLatticeJournalPerfTck {
    /** Pekko's in-memory journal. */
    public PekkoInmemJournalPerfSpec() {
        super(ConfigFactory.parseString("""
                pekko.loglevel = ERROR
                pekko.stdout-loglevel = ERROR
                pekko.persistence.journal.plugin = "pekko.persistence.journal.inmem"
                pekko.persistence.snapshot-store.plugin = "pekko.persistence.no-snapshot-store"
                pekko.persistence.journal.inmem.test-serialization = on
                """));
    }

    @Override
    public org.apache.pekko.persistence.CapabilityFlag supportsRejectingNonSerializableObjects() {
        return org.apache.pekko.persistence.CapabilityFlag.off();
    }
}
