package dev.lattice.bench.ycsb;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block-cache YCSB child's steps in this JVM at a tiny scale: a load and a workload-B run on Lattice (Chronicle in
 * a temp dir) and on RocksDB report their throughput and the read counters the harness tabulates.
 */
class BlockCacheYcsbSmokeTest {

    @Test
    void loadsAndRunsWorkloadBOnBothStores(@TempDir Path dir) throws Exception {
        for (String store : new String[] {"lattice", "rocksdb"}) {
            Path d = dir.resolve(store);
            Map<String, String> load = step(Map.of("mode", "load", "store", store, "dir", d.toString(),
                    "records", "2000", "threads", "4", "cacheBytes", Long.toString(1 << 20), "settleSeconds", "1"));
            assertEquals("2000", load.get("load.operations"), store + " " + load);
            Map<String, String> run = step(Map.of("mode", "run", "store", store, "dir", d.toString(),
                    "records", "2000", "threads", "4", "cacheBytes", Long.toString(1 << 20), "workload", "b",
                    "warmup", "200", "operations", "1000"));
            assertEquals("1000", run.get("operations"), store + " " + run);
            assertEquals("1000", run.get("gets"), store + ": every read and update is one get " + run);
            assertTrue(Double.parseDouble(run.get("throughput")) > 0, store + " " + run);
            assertTrue(run.containsKey("READ.p99Us") && run.containsKey("UPDATE.p99Us"), store + " " + run);
            double ratio = Double.parseDouble(run.getOrDefault("blockCacheHitRatio", "NaN"));
            assertTrue(store.equals("lattice") && !run.containsKey("blockCacheHitRatio") || ratio >= 0 && ratio <= 1,
                    store + " hit ratio " + run);
            if (store.equals("lattice")) {
                assertTrue(Long.parseLong(run.get("runReads")) >= 0 && run.containsKey("runReadsPerGet"), "" + run);
            }
        }
    }

    private static Map<String, String> step(Map<String, String> args) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        BlockCacheYcsbChild.execute(new LinkedHashMap<>(args), out::put);
        return out;
    }
}
