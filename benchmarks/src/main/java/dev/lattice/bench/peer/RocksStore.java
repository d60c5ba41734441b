package dev.lattice.bench.peer;

import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A RocksDB database for the peer comparison (not part of the product): one column family per table, RocksDB's
 * default options otherwise, the WAL always on. Durability: {@code sync=false} writes each batch to the WAL with
 * {@code write()} (in the OS page cache: survives a process crash, not an OS crash), which matches Lattice's
 * Chronicle {@code durability=process}; {@code sync=true} fsyncs the WAL before a write returns (RocksDB groups the
 * writes of concurrent threads into one fsync), which matches {@code durability=fsync}. Thread-safe.
 */
public final class RocksStore implements AutoCloseable {

    static {
        RocksDB.loadLibrary();
    }

    private final Path dir;
    private final RocksDB db;
    private final DBOptions options;
    private final WriteOptions writeOptions;
    private final ConcurrentHashMap<String, ColumnFamilyHandle> families = new ConcurrentHashMap<>();
    private final List<ColumnFamilyHandle> handles = new ArrayList<>();

    /**
     * Opens (creating if missing) the database in {@code dir}, with every column family it has.
     *
     * @param dir the database directory
     * @param sync true to fsync the WAL on every write
     * @throws IllegalStateException if RocksDB fails to open (message from RocksDB)
     */
    public RocksStore(Path dir, boolean sync) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
            List<byte[]> names;
            try (Options o = new Options()) {
                names = RocksDB.listColumnFamilies(o, dir.toString());
            }
            if (names.isEmpty()) {
                names = List.of(RocksDB.DEFAULT_COLUMN_FAMILY);
            }
            List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
            for (byte[] n : names) {
                descriptors.add(new ColumnFamilyDescriptor(n));
            }
            options = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
            db = RocksDB.open(options, dir.toString(), descriptors, handles);
            for (int i = 0; i < names.size(); i++) {
                families.put(new String(names.get(i), StandardCharsets.UTF_8), handles.get(i));
            }
            writeOptions = new WriteOptions().setSync(sync).setDisableWAL(false);
        } catch (RocksDBException | java.io.IOException e) {
            throw new IllegalStateException("cannot open RocksDB in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** @return the database directory */
    public Path directory() {
        return dir;
    }

    /**
     * @param table the table (column family) name; created on first use
     * @return its handle
     * @throws IllegalStateException if RocksDB fails to create it
     */
    public ColumnFamilyHandle table(String table) {
        ColumnFamilyHandle h = families.get(table);
        if (h != null) {
            return h;
        }
        synchronized (this) {
            h = families.get(table);
            if (h == null) {
                try {
                    h = db.createColumnFamily(new ColumnFamilyDescriptor(table.getBytes(StandardCharsets.UTF_8)));
                } catch (RocksDBException e) {
                    throw new IllegalStateException("cannot create column family " + table + ": " + e.getMessage(), e);
                }
                handles.add(h);
                families.put(table, h);
            }
            return h;
        }
    }

    /**
     * @param table the table
     * @param key the key
     * @param value the value
     * @throws RocksDBException from RocksDB
     */
    public void put(String table, String key, byte[] value) throws RocksDBException {
        db.put(table(table), writeOptions, key.getBytes(StandardCharsets.UTF_8), value);
    }

    /**
     * Writes a batch atomically.
     *
     * @param options write options (their sync setting applies)
     * @param batch the batch
     * @throws RocksDBException from RocksDB
     */
    public void write(WriteOptions options, org.rocksdb.WriteBatch batch) throws RocksDBException {
        db.write(options, batch);
    }

    /**
     * @param table the table
     * @param key the key
     * @return the value, or null when absent
     * @throws RocksDBException from RocksDB
     */
    public byte[] get(String table, String key) throws RocksDBException {
        return db.get(table(table), key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * @param table the table
     * @param key the key
     * @return true when the key was present before (RocksDB's delete is blind: this reads first)
     * @throws RocksDBException from RocksDB
     */
    public boolean delete(String table, String key) throws RocksDBException {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        ColumnFamilyHandle h = table(table);
        if (db.get(h, k) == null) {
            return false;
        }
        db.delete(h, writeOptions, k);
        return true;
    }

    /**
     * @param table the table
     * @return a new iterator over the table (the caller closes it)
     */
    public RocksIterator iterator(String table) {
        return db.newIterator(table(table), new ReadOptions());
    }

    /**
     * @param table the table
     * @return the number of keys, by a full iteration
     */
    public long count(String table) {
        long n = 0;
        try (RocksIterator it = iterator(table)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                n++;
            }
        }
        return n;
    }

    /** Closes the database (column families, then the database, then the options). */
    @Override
    public void close() {
        for (ColumnFamilyHandle h : handles) {
            h.close();
        }
        try {
            db.closeE();
        } catch (RocksDBException e) {
            throw new IllegalStateException("closing RocksDB in " + dir + " failed: " + e.getMessage(), e);
        } finally {
            writeOptions.close();
            options.close();
        }
    }
}
