package dev.lattice.bench.peer;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Statistics;
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
    private final ColumnFamilyOptions familyOptions;
    private final LRUCache blockCache;
    private final Statistics statistics;

    /**
     * Opens (creating if missing) the database in {@code dir}, with every column family it has.
     *
     * @param dir the database directory
     * @param sync true to fsync the WAL on every write
     * @throws IllegalStateException if RocksDB fails to open (message from RocksDB)
     */
    public RocksStore(Path dir, boolean sync) {
        this(dir, sync, -1, 0, false);
    }

    /**
     * Opens (creating if missing) the database in {@code dir} with a block cache of a given size: every column
     * family's {@code BlockBasedTableConfig} uses one shared {@code LRUCache} of {@code blockCacheBytes} (RocksDB's
     * default table options otherwise: 4 KiB blocks, index and filter blocks outside the cache).
     *
     * @param dir the database directory
     * @param sync true to fsync the WAL on every write
     * @param blockCacheBytes the LRU block cache's capacity in bytes; negative keeps RocksDB's default cache
     * @param bloomBitsPerKey bits per key of a Bloom filter in every table (0: RocksDB's default, no filter)
     * @param statistics true to collect RocksDB {@code Statistics} (tickers such as block cache hits), read with
     *     {@link #statistics()}
     * @throws IllegalStateException if RocksDB fails to open (message from RocksDB)
     */
    public RocksStore(Path dir, boolean sync, long blockCacheBytes, int bloomBitsPerKey, boolean statistics) {
        this.dir = dir;
        this.blockCache = blockCacheBytes < 0 ? null : new LRUCache(blockCacheBytes);
        this.statistics = statistics ? new Statistics() : null;
        if (blockCache != null || bloomBitsPerKey > 0) {
            BlockBasedTableConfig table = new BlockBasedTableConfig();
            if (blockCache != null) {
                table.setBlockCache(blockCache);
            }
            if (bloomBitsPerKey > 0) {
                table.setFilterPolicy(new BloomFilter(bloomBitsPerKey));
            }
            familyOptions = new ColumnFamilyOptions().setTableFormatConfig(table);
        } else {
            familyOptions = null;
        }
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
                descriptors.add(familyOptions == null ? new ColumnFamilyDescriptor(n)
                        : new ColumnFamilyDescriptor(n, familyOptions));
            }
            options = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
            if (this.statistics != null) {
                options.setStatistics(this.statistics);
            }
            db = RocksDB.open(options, dir.toString(), descriptors, handles);
            for (int i = 0; i < names.size(); i++) {
                families.put(new String(names.get(i), StandardCharsets.UTF_8), handles.get(i));
            }
            writeOptions = new WriteOptions().setSync(sync).setDisableWAL(false);
        } catch (RocksDBException | java.io.IOException e) {
            throw new IllegalStateException("cannot open RocksDB in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** @return the RocksDB statistics, or null when the store was opened without them */
    public Statistics statistics() {
        return statistics;
    }

    /**
     * @param property a RocksDB property name ({@code rocksdb.block-cache-usage}, {@code rocksdb.levelstats}, ...)
     * @return its value on the default column family, or null when RocksDB does not know it
     */
    public String property(String property) {
        try {
            return db.getProperty(property);
        } catch (RocksDBException e) {
            return null;
        }
    }

    /**
     * @param table the table (column family)
     * @param property a RocksDB property name
     * @return its value on that column family, or null when RocksDB does not know it
     */
    public String property(String table, String property) {
        try {
            return db.getProperty(table(table), property);
        } catch (RocksDBException e) {
            return null;
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
                    byte[] name = table.getBytes(StandardCharsets.UTF_8);
                    h = db.createColumnFamily(familyOptions == null ? new ColumnFamilyDescriptor(name)
                            : new ColumnFamilyDescriptor(name, familyOptions));
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
            if (familyOptions != null) {
                familyOptions.close();
            }
            if (blockCache != null) {
                blockCache.close();
            }
            if (statistics != null) {
                statistics.close();
            }
        }
    }
}
