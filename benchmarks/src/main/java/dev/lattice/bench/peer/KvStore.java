package dev.lattice.bench.peer;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

import java.nio.file.Path;
import java.util.Map;

/**
 * The minimal key-value surface the direct harness and the recovery measurement drive, over Lattice or RocksDB.
 * Implementations are thread-safe.
 */
public interface KvStore extends AutoCloseable {

    /** The table (tree, column family) the direct harness uses. */
    String TABLE = "direct";

    /**
     * @param key the key
     * @param value the value
     * @throws Exception from the store
     */
    void put(String key, byte[] value) throws Exception;

    /**
     * Writes many keys (a Lattice {@code putAll}, a RocksDB {@code WriteBatch}); used to load, not measured.
     *
     * @param entries keys and values
     * @throws Exception from the store
     */
    void putBatch(Map<String, byte[]> entries) throws Exception;

    /**
     * @param key the key
     * @return the value or null
     * @throws Exception from the store
     */
    byte[] get(String key) throws Exception;

    /** @return the number of keys of {@link #TABLE} */
    long count();

    @Override
    void close();

    /** @return the Lattice's cumulative counters, or null for another store */
    default dev.lattice.engine.LatticeStats latticeStats() {
        return null;
    }

    /** Which store. */
    enum Kind {
        /** Lattice on the Chronicle provider. */
        LATTICE,
        /** RocksDB JNI. */
        ROCKSDB;

        /** @return the lower-case name */
        public String label() {
            return name().equals("LATTICE") ? "Lattice" : "RocksDB";
        }
    }

    /**
     * Opens a store in a directory.
     *
     * @param kind which store
     * @param dir its directory (Lattice: the Chronicle provider's root)
     * @param durability the durability setting
     * @param partitions Lattice partitions of the tree (ignored by RocksDB)
     * @return the open store
     */
    static KvStore open(Kind kind, Path dir, Durability durability, int partitions) {
        if (kind == Kind.ROCKSDB) {
            return new Rocks(new RocksStore(dir, durability.rocksSync()), durability.rocksSync());
        }
        return openLattice("chronicle:" + dir.toAbsolutePath() + "?durability=" + durability.chronicleOption(),
                partitions);
    }

    /**
     * Opens Lattice on any provider URI (the harness smoke tests use {@code memory:}).
     *
     * @param uri the provider URI
     * @param partitions partitions of the tree
     * @return the open store; opening includes replay of the tree
     */
    static KvStore openLattice(String uri, int partitions) {
        Lattice l = Lattice.open(LatticeConfig.builder().uri(uri).partitions(partitions).build());
        try {
            return new LatticeKv(l, l.tree(TABLE));
        } catch (RuntimeException e) {
            l.close();
            throw e;
        }
    }

    /** Lattice: one tree. */
    final class LatticeKv implements KvStore {
        private final Lattice lattice;
        private final Tree tree;

        LatticeKv(Lattice lattice, Tree tree) {
            this.lattice = lattice;
            this.tree = tree;
        }

        @Override
        public void put(String key, byte[] value) {
            tree.put(key, value);
        }

        @Override
        public void putBatch(Map<String, byte[]> entries) {
            tree.putAll(entries);
        }

        @Override
        public byte[] get(String key) {
            return tree.get(key).orElse(null);
        }

        @Override
        public long count() {
            return tree.count();
        }

        @Override
        public dev.lattice.engine.LatticeStats latticeStats() {
            return lattice.stats();
        }

        @Override
        public void close() {
            lattice.close();
        }
    }

    /** RocksDB: one column family. */
    final class Rocks implements KvStore {
        private final RocksStore store;
        private final boolean sync;

        Rocks(RocksStore store, boolean sync) {
            this.store = store;
            this.sync = sync;
        }

        @Override
        public void put(String key, byte[] value) throws RocksDBException {
            store.put(TABLE, key, value);
        }

        @Override
        public void putBatch(Map<String, byte[]> entries) throws RocksDBException {
            try (WriteBatch b = new WriteBatch(); WriteOptions o = new WriteOptions().setSync(sync)) {
                for (Map.Entry<String, byte[]> e : entries.entrySet()) {
                    b.put(store.table(TABLE), e.getKey().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                            e.getValue());
                }
                store.write(o, b);
            }
        }

        @Override
        public byte[] get(String key) throws RocksDBException {
            return store.get(TABLE, key);
        }

        @Override
        public long count() {
            return store.count(TABLE);
        }

        @Override
        public void close() {
            store.close();
        }
    }
}
