package dev.lattice.bench.ycsb;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeEntry;
import dev.lattice.engine.Versioned;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The YCSB binding of Lattice ({@code -db dev.lattice.bench.ycsb.LatticeYcsbClient}).
 *
 * <h2>Mapping</h2>
 * <ul>
 *   <li>One Lattice {@link Tree} per YCSB table, named after it (YCSB's default {@code usertable}); created with
 *       {@code lattice.partitions} partitions on first use.</li>
 *   <li>The YCSB key is the tree key; the record's fields are one value in the {@link FieldCodec} encoding.</li>
 *   <li>{@code read}: one {@code get}, decoding only the requested fields (all when the set is null).</li>
 *   <li>{@code scan}: {@code tree.scan(startkey, null, false)}, the first {@code recordcount} entries.</li>
 *   <li>{@code insert}: one {@code put} of the whole record (replaces any existing record).</li>
 *   <li>{@code update}: read-modify-write of the fields: {@code get}, merge the new fields over the old, {@code put}.
 *       With {@code lattice.update=rmw} (default) this is a get followed by a put and <b>not atomic</b>: two
 *       concurrent updates of different fields of one key can lose one of them (the later put carries the older
 *       copy of the other field). With {@code lattice.update=cas} it is {@code getVersioned} + {@code putIfVersion}
 *       retried until it wins, which is atomic (every update's fields survive) at the cost of retries under
 *       contention. YCSB's core workloads never check field values, so both measure the same work when there is
 *       no conflict.</li>
 *   <li>{@code delete}: one {@code delete}.</li>
 * </ul>
 *
 * <h2>Status codes</h2>
 * {@link Status#OK}; {@link Status#NOT_FOUND} for a read, update or delete of an absent key (and a scan that finds
 * nothing); {@link Status#ERROR} for any failure (engine exception, undecodable value, key over the limit). The
 * binding never throws from an operation (YCSB's client thread would exit the JVM). The first error's message is
 * printed on standard error, and {@link #errors()} counts them.
 *
 * <h2>Properties</h2>
 * <ul>
 *   <li>{@code lattice.provider}: the provider URI (default {@value #DEFAULT_PROVIDER}).</li>
 *   <li>{@code lattice.partitions}: partitions of new trees (default {@link LatticeConfig#DEFAULT_PARTITIONS}).</li>
 *   <li>{@code lattice.update}: {@code rmw} or {@code cas} (see above).</li>
 * </ul>
 * All instances (one per YCSB client thread) with the same provider URI share one {@link Lattice}, opened by the
 * first {@link #init()} and closed by the last {@link #cleanup()}. Each instance is used by one thread.
 */
public final class LatticeYcsbClient extends DB {

    /** The provider URI property. */
    public static final String PROVIDER_PROPERTY = "lattice.provider";
    /** The default provider URI. */
    public static final String DEFAULT_PROVIDER = "chronicle:./ycsb-data";
    /** The partitions-per-new-tree property. */
    public static final String PARTITIONS_PROPERTY = "lattice.partitions";
    /** The update mode property: {@code rmw} or {@code cas}. */
    public static final String UPDATE_PROPERTY = "lattice.update";

    private static final SharedStores<Lattice> STORES = new SharedStores<>();
    private static final AtomicLong ERRORS = new AtomicLong();

    private String location;
    private Lattice lattice;
    private boolean cas;
    private final Map<String, Tree> trees = new HashMap<>();

    /** Creates an unopened binding (YCSB's {@code DBFactory} calls this, then {@link #init()}). */
    public LatticeYcsbClient() {
    }

    /**
     * Opens (or shares) the lattice named by {@code lattice.provider}.
     *
     * @throws DBException if a property is malformed or the provider cannot be opened
     */
    @Override
    public void init() throws DBException {
        Properties p = getProperties();
        String uri = p.getProperty(PROVIDER_PROPERTY, DEFAULT_PROVIDER);
        String mode = p.getProperty(UPDATE_PROPERTY, "rmw");
        if (!mode.equals("rmw") && !mode.equals("cas")) {
            throw new DBException(UPDATE_PROPERTY + " must be rmw or cas, got '" + mode + "'");
        }
        cas = mode.equals("cas");
        int partitions;
        try {
            partitions = Integer.parseInt(p.getProperty(PARTITIONS_PROPERTY, "" + LatticeConfig.DEFAULT_PARTITIONS));
        } catch (NumberFormatException e) {
            throw new DBException(PARTITIONS_PROPERTY + " must be an integer, got '"
                    + p.getProperty(PARTITIONS_PROPERTY) + "'");
        }
        try {
            lattice = STORES.acquire(uri, u -> Lattice.open(LatticeConfig.builder().uri(u).partitions(partitions)
                    .build()));
            location = uri;
        } catch (RuntimeException e) {
            throw new DBException("cannot open Lattice on " + uri + ": " + e.getMessage(), e);
        }
    }

    /**
     * Releases this instance's reference; the last one closes the lattice (drains and checkpoints).
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
            throw new DBException("closing Lattice on " + location + " failed: " + e.getMessage(), e);
        } finally {
            location = null;
            lattice = null;
        }
    }

    /**
     * Keeps the lattice on {@code uri} open (one extra reference) until {@link #unpin}: a runner calls it around the
     * load and run phases so that the lattice is not closed and replayed between them.
     *
     * @param uri the provider URI
     * @param partitions partitions of new trees
     * @return the shared lattice
     */
    public static Lattice pin(String uri, int partitions) {
        return STORES.acquire(uri, u -> Lattice.open(LatticeConfig.builder().uri(u).partitions(partitions).build()));
    }

    /**
     * Keeps a lattice the caller opens (e.g. on a wrapped provider, with its own block cache size) registered under
     * {@code location} until {@link #unpin}: YCSB clients whose {@code lattice.provider} property is
     * {@code location} then share it instead of opening one from a URI.
     *
     * @param location the value of {@code lattice.provider} the clients will carry (any unique text)
     * @param opener opens the lattice if none is registered under {@code location}
     * @return the shared lattice
     */
    public static Lattice pin(String location, java.util.function.Supplier<Lattice> opener) {
        return STORES.acquire(location, u -> opener.get());
    }

    /**
     * Drops the reference taken by {@link #pin}; closes the lattice if no client holds it.
     *
     * @param uri the provider URI
     * @throws Exception if closing fails
     */
    public static void unpin(String uri) throws Exception {
        STORES.release(uri);
    }

    /** @return the operations that returned {@link Status#ERROR} in this JVM so far */
    public static long errors() {
        return ERRORS.get();
    }

    private Tree tree(String table) {
        Tree t = trees.get(table);
        if (t == null) {
            t = lattice.tree(table);
            trees.put(table, t);
        }
        return t;
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        try {
            Optional<byte[]> v = tree(table).get(key);
            if (v.isEmpty()) {
                return Status.NOT_FOUND;
            }
            FieldCodec.decode(v.get(), fields, result);
            return Status.OK;
        } catch (RuntimeException e) {
            return error("read", e);
        }
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        try (ScanCursor c = tree(table).scan(startkey, null, false)) {
            int n = 0;
            while (n < recordcount && c.hasNext()) {
                TreeEntry e = c.next();
                HashMap<String, ByteIterator> row = new HashMap<>();
                FieldCodec.decode(e.value(), fields, row);
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
            Tree t = tree(table);
            TreeMap<String, byte[]> fresh = new TreeMap<>();
            for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
                fresh.put(e.getKey(), e.getValue().toArray());
            }
            if (!cas) {
                Optional<byte[]> old = t.get(key);
                if (old.isEmpty()) {
                    return Status.NOT_FOUND;
                }
                t.put(key, merge(old.get(), fresh));
                return Status.OK;
            }
            while (true) {
                Optional<Versioned> old = t.getVersioned(key);
                if (old.isEmpty()) {
                    return Status.NOT_FOUND;
                }
                if (t.putIfVersion(key, merge(old.get().value(), fresh), old.get().version())) {
                    return Status.OK;
                }
            }
        } catch (RuntimeException e) {
            return error("update", e);
        }
    }

    private static byte[] merge(byte[] old, TreeMap<String, byte[]> fresh) {
        TreeMap<String, byte[]> all = new TreeMap<>();
        FieldCodec.decodeBytes(old, null, all);
        all.putAll(fresh);
        return FieldCodec.encodeBytes(all);
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        try {
            tree(table).put(key, FieldCodec.encode(values));
            return Status.OK;
        } catch (RuntimeException e) {
            return error("insert", e);
        }
    }

    @Override
    public Status delete(String table, String key) {
        try {
            return tree(table).delete(key) ? Status.OK : Status.NOT_FOUND;
        } catch (RuntimeException e) {
            return error("delete", e);
        }
    }

    private static Status error(String op, RuntimeException e) {
        if (ERRORS.getAndIncrement() == 0) {
            System.err.println("lattice ycsb: first error (" + op + "): " + e);
        }
        return Status.ERROR;
    }
}
