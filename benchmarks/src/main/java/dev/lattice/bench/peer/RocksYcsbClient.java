package dev.lattice.bench.peer;

import dev.lattice.bench.ycsb.FieldCodec;
import dev.lattice.bench.ycsb.SharedStores;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small YCSB binding of RocksDB for the peer comparison ({@code -db dev.lattice.bench.peer.RocksYcsbClient}), the
 * same mapping as {@link dev.lattice.bench.ycsb.LatticeYcsbClient}: one column family per table, the fields in one
 * {@link FieldCodec} value, scan from the start key in key order, update as get + merge + put (not atomic), delete of
 * an absent key is {@code NOT_FOUND}. Properties: {@code rocksdb.dir} (required), {@code rocksdb.sync}
 * ({@code true}/{@code false}, default false, see {@link RocksStore}). Instances with the same directory share one
 * database. Each instance is used by one thread.
 */
public final class RocksYcsbClient extends DB {

    /** The database directory property. */
    public static final String DIR_PROPERTY = "rocksdb.dir";
    /** The fsync-every-write property. */
    public static final String SYNC_PROPERTY = "rocksdb.sync";

    private static final SharedStores<RocksStore> STORES = new SharedStores<>();
    private static final AtomicLong ERRORS = new AtomicLong();

    private String location;
    private RocksStore store;

    /** Creates an unopened binding. */
    public RocksYcsbClient() {
    }

    /**
     * Opens (or shares) the database.
     *
     * @throws DBException if {@code rocksdb.dir} is missing or RocksDB fails to open
     */
    @Override
    public void init() throws DBException {
        Properties p = getProperties();
        String dir = p.getProperty(DIR_PROPERTY);
        if (dir == null || dir.isBlank()) {
            throw new DBException(DIR_PROPERTY + " is required");
        }
        boolean sync = Boolean.parseBoolean(p.getProperty(SYNC_PROPERTY, "false"));
        try {
            store = STORES.acquire(dir, d -> new RocksStore(Path.of(d), sync));
            location = dir;
        } catch (RuntimeException e) {
            throw new DBException(e.getMessage(), e);
        }
    }

    /**
     * Releases this instance's reference; the last one closes the database.
     *
     * @throws DBException if closing fails
     */
    @Override
    public void cleanup() throws DBException {
        if (location == null) {
            return;
        }
        try {
            STORES.release(location);
        } catch (Exception e) {
            throw new DBException(e.getMessage(), e);
        } finally {
            location = null;
            store = null;
        }
    }

    /**
     * Keeps the database in {@code dir} open between the load and run phases.
     *
     * @param dir the directory
     * @param sync fsync every write
     * @return the store
     */
    public static RocksStore pin(String dir, boolean sync) {
        return STORES.acquire(dir, d -> new RocksStore(Path.of(d), sync));
    }

    /**
     * Keeps a database the caller opens (e.g. with a block cache of a given size) registered under {@code dir} until
     * {@link #unpin}: YCSB clients whose {@code rocksdb.dir} is {@code dir} share it.
     *
     * @param dir the directory, as the clients' {@code rocksdb.dir} property names it
     * @param opener opens the database if none is registered under {@code dir}
     * @return the store
     */
    public static RocksStore pin(String dir, java.util.function.Supplier<RocksStore> opener) {
        return STORES.acquire(dir, d -> opener.get());
    }

    /**
     * Drops the reference taken by {@link #pin}.
     *
     * @param dir the directory
     * @throws Exception if closing fails
     */
    public static void unpin(String dir) throws Exception {
        STORES.release(dir);
    }

    /** @return the operations that returned ERROR in this JVM so far */
    public static long errors() {
        return ERRORS.get();
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        try {
            byte[] v = store.get(table, key);
            if (v == null) {
                return Status.NOT_FOUND;
            }
            FieldCodec.decode(v, fields, result);
            return Status.OK;
        } catch (RocksDBException | RuntimeException e) {
            return error("read", e);
        }
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        try (RocksIterator it = store.iterator(table)) {
            int n = 0;
            for (it.seek(startkey.getBytes(StandardCharsets.UTF_8)); it.isValid() && n < recordcount; it.next()) {
                HashMap<String, ByteIterator> row = new HashMap<>();
                FieldCodec.decode(it.value(), fields, row);
                result.add(row);
                n++;
            }
            return n == 0 ? Status.NOT_FOUND : Status.OK;
        } catch (RuntimeException e) {
            return error("scan", e);
        }
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        try {
            byte[] old = store.get(table, key);
            if (old == null) {
                return Status.NOT_FOUND;
            }
            TreeMap<String, byte[]> all = new TreeMap<>();
            FieldCodec.decodeBytes(old, null, all);
            for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
                all.put(e.getKey(), e.getValue().toArray());
            }
            store.put(table, key, FieldCodec.encodeBytes(all));
            return Status.OK;
        } catch (RocksDBException | RuntimeException e) {
            return error("update", e);
        }
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        try {
            store.put(table, key, FieldCodec.encode(values));
            return Status.OK;
        } catch (RocksDBException | RuntimeException e) {
            return error("insert", e);
        }
    }

    @Override
    public Status delete(String table, String key) {
        try {
            return store.delete(table, key) ? Status.OK : Status.NOT_FOUND;
        } catch (RocksDBException | RuntimeException e) {
            return error("delete", e);
        }
    }

    private static Status error(String op, Exception e) {
        if (ERRORS.getAndIncrement() == 0) {
            System.err.println("rocksdb ycsb: first error (" + op + "): " + e);
        }
        return Status.ERROR;
    }
}
