package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.memory.InMemoryStorage;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Two processes over one in-memory storage, as a cluster places them: {@code a} hosts partition 0 and {@code b}
 * partition 1 of the two-partition tree "t". Tests drive the steps of an atomic write across them by hand.
 */
record TwoHosts(Lattice a, Lattice b, PartialTree ta, PartialTree tb) implements AutoCloseable {

    static TwoHosts open(InMemoryStorage storage, Duration admissionTimeout) {
        Lattice a = EngineBasicsTest.open(storage, LatticeConfig.builder().admissionTimeout(admissionTimeout));
        Lattice b = EngineBasicsTest.open(storage, LatticeConfig.builder().admissionTimeout(admissionTimeout));
        PartialTree ta = a.hostTree("t", TreeOptions.partitions(2));
        PartialTree tb = b.hostTree("t", TreeOptions.partitions(2));
        ta.host(0);
        tb.host(1);
        return new TwoHosts(a, b, ta, tb);
    }

    /** {@return the first key {@code prefix + i} of partition {@code p}} */
    String keyIn(int p, String prefix) {
        for (int i = 0; ; i++) {
            if (ta.partitionOf(prefix + i) == p) {
                return prefix + i;
            }
        }
    }

    /**
     * Prepares puts of {@code value} to {@code k0} (partition 0, the coordinator) and {@code k1} (partition 1) and
     * decides the write committed; partition 1 is left unresolved.
     *
     * @return the write's version
     */
    long decided(String txn, String k0, String k1, String value) throws Exception {
        LogId coord = new LogId("t", 0);
        long f0 = ta.prepareAtomic(0, txn, coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k0, EngineBasicsTest.b(value),
                0))).get(5, TimeUnit.SECONDS);
        long f1 = tb.prepareAtomic(1, txn, coord, List.of(new AtomicOp(AtomicOp.Kind.PUT, k1, EngineBasicsTest.b(value),
                0))).get(5, TimeUnit.SECONDS);
        return ta.decideAtomic(0, txn, true, List.of(new LogId("t", 1)), Math.max(f0, f1)).get(5, TimeUnit.SECONDS);
    }

    /** Resolves partition 1's part committed at {@code version} and tells the coordinator. */
    void resolve(String txn, long version) throws Exception {
        tb.resolveAtomic(1, txn, true, version).get(5, TimeUnit.SECONDS);
        ta.atomicResolvedAt(0, txn, new LogId("t", 1));
    }

    @Override
    public void close() {
        try (a) {
            b.close();
        }
    }
}
