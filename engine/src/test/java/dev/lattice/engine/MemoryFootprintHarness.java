package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryWalStorageProvider;

/**
 * Measures the JVM heap the engine's live state costs per key (not a test). Writes N keys with values of V bytes
 * into a tree on the in-memory provider, closes the lattice (checkpoint and trim: the provider then holds only the
 * checkpoints), reopens it, and compares used heap before and after the tree's replay builds its live state.
 *
 * <p>Run: see docs/engine.md ("Memory").
 */
public final class MemoryFootprintHarness {

    private MemoryFootprintHarness() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int valueBytes = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        for (int keyChars : new int[] {16, 64}) {
            InMemoryWalStorageProvider provider = InMemoryWalStorageProvider.fresh();
            LatticeConfig cfg = LatticeConfig.builder().provider(provider, false).partitions(8)
                    .checkpointEveryEntries(Long.MAX_VALUE).build();
            try (Lattice writer = Lattice.open(cfg)) {
                Tree t = writer.tree("mem");
                String pad = "k".repeat(keyChars - 9);
                java.util.Map<String, byte[]> batch = new java.util.HashMap<>();
                for (int i = 0; i < n; i++) {
                    batch.put(pad + String.format("%09d", i), new byte[valueBytes]);
                    if (batch.size() == 10_000) {
                        t.putAll(batch);
                        batch.clear();
                    }
                }
                t.putAll(batch);
            } // close: checkpoint + trim, so the provider now holds only checkpoint byte arrays
            Lattice l = Lattice.open(cfg);
            long before = usedHeap();
            Tree t = l.tree("mem"); // replay from the checkpoints builds the live state
            long after = usedHeap();
            double perKey = (after - before) / (double) t.count();
            System.out.printf("keys=%d keyChars=%d valueBytes=%d: measured %.0f heap bytes per key "
                            + "(engine estimate %d, estimate total %d MiB)%n", n, keyChars, valueBytes, perKey,
                    PartitionState.ENTRY_OVERHEAD_BYTES + keyChars + valueBytes, l.liveDataBytes() >> 20);
            l.close();
        }
    }

    private static long usedHeap() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return rt.totalMemory() - rt.freeMemory();
    }
}
