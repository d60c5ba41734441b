package dev.lattice.bench.peer;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The child process of the recovery measurement: loads {@code n} records into a store and then either closes it
 * ({@code clean}) or prints {@code LOADED} and waits to be killed with SIGKILL ({@code crash}).
 *
 * <p>Arguments: {@code lattice|rocksdb DIR N VALUE_BYTES page-cache|fsync clean|crash PARTITIONS}. Prints
 * {@code LOADED <n>} after the last write returned, then {@code CLOSED} after a clean close. Exit code 0, or 1 with the
 * failure on standard error.
 */
public final class RecoveryChild {

    private RecoveryChild() {
    }

    /**
     * @param args see the class comment
     */
    public static void main(String[] args) {
        try {
            KvStore.Kind kind = KvStore.Kind.valueOf(args[0].toUpperCase(java.util.Locale.ROOT));
            Path dir = Path.of(args[1]);
            int n = Integer.parseInt(args[2]);
            int valueBytes = Integer.parseInt(args[3]);
            Durability durability = Durability.parse(args[4]);
            boolean crash = args[5].equals("crash");
            int partitions = Integer.parseInt(args[6]);
            KvStore store = KvStore.open(kind, dir, durability, partitions);
            load(store, n, valueBytes);
            System.out.println("LOADED " + n);
            System.out.flush();
            if (crash) {
                Thread.sleep(Long.MAX_VALUE);
            }
            store.close();
            System.out.println("CLOSED");
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    /**
     * Loads records {@code 0..n-1} ({@link DirectHarness#key}) in batches of 1,000.
     *
     * @param store the store
     * @param n records
     * @param valueBytes value size
     * @throws Exception from the store
     */
    static void load(KvStore store, int n, int valueBytes) throws Exception {
        SplittableRandom r = new SplittableRandom(11);
        Map<String, byte[]> batch = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            byte[] v = new byte[valueBytes];
            r.nextBytes(v);
            batch.put(DirectHarness.key(i), v);
            if (batch.size() == 1000 || i == n - 1) {
                store.putBatch(batch);
                batch = new LinkedHashMap<>();
            }
        }
    }
}
