package dev.lattice.engine;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The durable list of trees: partition counts, placements, partition hash versions, creation times and drops; the
 * engine's own log {@code _catalog/0} on the provider. Record formats: CREATE_TREE (format 1, hash version 1),
 * CREATE_TREE_V2 (format 2, carries the hash version), SET_PLACEMENT, DROP_TREE (docs/engine.md, "Tree lifecycle").
 * Read without a claim; a writer claims it only for the moment it adds a tree, so several processes that share a
 * backend (each owning its own trees) do not fence each other out. Thread-safe (synchronized).
 *
 * <p>Concurrent catalog writers (two processes creating the same tree at once): a claim of {@code _catalog/0} is held
 * only for one append, so a {@link FencedException} (or an offset conflict) there means "another writer changed the
 * catalog after my claim", not a lost ownership. The rule: the newer claimant wins and its record stands; the fenced
 * writer never writes with its stale fence, re-claims, re-reads the catalog and re-decides from what it finds. If the
 * winner's record already does what it wanted (the same tree), it stops without writing; so a re-claim happens only
 * while its own change is still missing, and at most {@link #MAX_ATTEMPTS} times with growing, jittered back-off
 * before {@link CatalogContendedException}. That bound and the re-read make an endless re-claim war impossible.
 */
final class Catalog {

    static final LogId LOG = new LogId("_catalog", 0);

    /** Claims of the catalog log one change makes at most before {@link CatalogContendedException}. */
    static final int MAX_ATTEMPTS = 8;

    private final EngineContext ctx;
    private final Map<String, Placement> trees = new TreeMap<>();
    private final Map<String, Meta> meta = new TreeMap<>();
    private final Map<String, Dropped> dropped = new TreeMap<>();
    private long readThrough = -1;

    /**
     * What the catalog records of a tree besides its placement.
     *
     * @param hashVersion its partition hash version
     * @param createdMillis wall-clock ms of the record that created it
     */
    record Meta(int hashVersion, long createdMillis) {
    }

    /**
     * A dropped tree whose purge may not be finished.
     *
     * @param placement its last placement
     * @param epoch the highest epoch the dropper claimed on its logs before recording the drop
     * @param droppedMillis wall-clock ms of the drop record
     */
    record Dropped(Placement placement, long epoch, long droppedMillis) {
    }

    Catalog(EngineContext ctx) {
        this.ctx = ctx;
    }

    synchronized void refresh() {
        WalStorageProvider p = ctx.provider;
        while (true) {
            ReadPage page = ctx.bounded(LOG, "read", () -> p.read(LOG, readThrough, 10_000, 8L << 20));
            if (page.isEmpty()) {
                return;
            }
            for (LogEntry e : page.entries()) {
                WalRecord.Decoded d = WalRecord.decode(LOG, e.offset(), e.payload());
                if (d.kind() != WalRecord.KIND_CATALOG) {
                    throw new CorruptLogException(LOG, e.offset(), "not a catalog entry (kind " + d.kind() + ")");
                }
                for (WalRecord.Mutation m : d.mutations()) {
                    apply(e.offset(), d.version(), m);
                }
                readThrough = e.offset();
            }
        }
    }

    private void apply(long offset, long millis, WalRecord.Mutation m) {
        byte op = m.op();
        if (op == WalRecord.Mutation.CREATE_TREE || op == WalRecord.Mutation.CREATE_TREE_V2) {
            List<String> keys;
            int hash;
            try {
                keys = m.placementOfCreateTree();
                hash = PartitionHash.of(m.hashVersion()).version();
            } catch (RuntimeException bad) {
                throw new CorruptLogException(LOG, offset, "tree record of '" + m.key() + "' cannot be decoded: "
                        + bad.getMessage(), bad);
            }
            if (trees.putIfAbsent(m.key(), new Placement(m.key(), 1, keys)) == null) {
                meta.put(m.key(), new Meta(hash, millis));
                dropped.remove(m.key());
            }
        } else if (op == WalRecord.Mutation.SET_PLACEMENT) {
            Placement cur = trees.get(m.key());
            long version;
            List<String> keys;
            try {
                version = m.placementVersion();
                keys = m.placementOfCreateTree();
            } catch (RuntimeException bad) {
                throw new CorruptLogException(LOG, offset, "placement record of '" + m.key()
                        + "' cannot be decoded: " + bad.getMessage(), bad);
            }
            if (cur != null && version == cur.version() + 1 && keys.size() == cur.keys().size()) {
                trees.put(m.key(), new Placement(m.key(), version, keys));
            }
        } else if (op == WalRecord.Mutation.DROP_TREE) {
            long epoch;
            try {
                epoch = m.droppedEpoch();
            } catch (RuntimeException bad) {
                throw new CorruptLogException(LOG, offset, "drop record of '" + m.key() + "' cannot be decoded: "
                        + bad.getMessage(), bad);
            }
            Placement cur = trees.remove(m.key());
            meta.remove(m.key());
            if (cur != null) {
                dropped.put(m.key(), new Dropped(cur, epoch, millis));
            }
        }
    }

    /** @return the stored placement of a tree, or null when it does not exist */
    synchronized Placement placement(String tree) {
        return trees.get(tree);
    }

    /** @return the partition hash and creation time of an existing tree, or null */
    synchronized Meta meta(String tree) {
        return meta.get(tree);
    }

    /** @return the drop record of a tree dropped and not created again, or null */
    synchronized Dropped dropped(String tree) {
        return dropped.get(tree);
    }

    /** @return every dropped tree not created again, by name */
    synchronized Map<String, Dropped> allDropped() {
        return new TreeMap<>(dropped);
    }

    /** Reads the catalog now; returns every tree's entry, sorted by name. */
    synchronized java.util.List<TreeInfo> treeInfos() {
        refresh();
        java.util.List<TreeInfo> out = new java.util.ArrayList<>();
        all().forEach((n, p) -> out.add(info(n, p)));
        return out;
    }

    /**
     * Reads the catalog now; returns one tree's entry.
     *
     * @throws NoSuchTreeException if the catalog has no such tree
     */
    synchronized TreeInfo treeInfo(String tree) {
        refresh();
        Placement p = placement(tree);
        if (p == null) {
            throw new NoSuchTreeException(tree, "tree '" + tree + "' does not exist");
        }
        return info(tree, p);
    }

    private TreeInfo info(String tree, Placement p) {
        Meta m = meta(tree);
        int hash = m == null ? 1 : m.hashVersion();
        java.time.Instant created = m == null ? java.time.Instant.EPOCH : java.time.Instant.ofEpochMilli(m.createdMillis());
        return new TreeInfo(tree, p.keys().size(), hash, created, p);
    }

    synchronized Map<String, Placement> all() {
        return new TreeMap<>(trees);
    }

    /**
     * Returns the stored placement, creating the tree with {@code partitions} partitions placed by the configured
     * policy and the latest partition hash if it does not exist yet.
     *
     * @throws NoSuchTreeException if the tree was dropped (only {@link #create} makes the name live again)
     * @throws IllegalArgumentException if the policy returns a wrong number of keys or an unregistered key
     * @throws TreeOptionsConflictException if another writer created the tree while this one was fenced out of the
     *         catalog, with a different partition count or hash version
     * @throws CatalogContendedException if every bounded attempt was fenced out by other catalog writers
     */
    synchronized Placement ensure(String tree, int partitions, int hashVersion) {
        Placement known = trees.get(tree);
        if (known != null) {
            return known;
        }
        checkNotDropped(tree);
        return write("create tree '" + tree + "'", (fence, raced) -> {
            Placement now = trees.get(tree);
            if (now != null) {
                if (raced) {
                    checkSameOptions(tree, now, partitions, hashVersion);
                }
                return now;
            }
            checkNotDropped(tree);
            return append(fence, tree, partitions, hashVersion);
        });
    }

    /**
     * A tree another writer created while this one was fenced out must match what this one asked for; otherwise the
     * caller would silently get a tree shaped differently from the one it just tried to create.
     */
    private void checkSameOptions(String tree, Placement stored, int partitions, int hashVersion) {
        Meta m = meta.get(tree);
        int storedHash = m == null ? 1 : m.hashVersion();
        if (stored.keys().size() != partitions || storedHash != hashVersion) {
            throw new TreeOptionsConflictException(tree, partitions, stored.keys().size(), hashVersion, storedHash);
        }
    }

    /**
     * Creates a tree that does not exist (also a dropped one, whose purge the caller finished).
     *
     * @return the new placement
     * @throws IllegalStateException if the tree exists
     */
    synchronized Placement create(String tree, int partitions, int hashVersion) {
        return write("create tree '" + tree + "'", (fence, raced) -> {
            if (trees.containsKey(tree)) {
                throw new IllegalStateException("tree '" + tree + "' exists already");
            }
            return append(fence, tree, partitions, hashVersion);
        });
    }

    /**
     * Records a drop: claims the catalog, re-reads it and appends a DROP_TREE record for an existing tree. Returns
     * the record (also when the tree was dropped before, so a repeated drop resumes its purge).
     *
     * @param epoch the highest epoch the caller claimed on the tree's logs
     * @throws NoSuchTreeException if the tree neither exists nor was dropped
     */
    synchronized Dropped drop(String tree, long epoch) {
        return write("drop tree '" + tree + "'", (fence, raced) -> {
            if (!trees.containsKey(tree)) {
                Dropped before = dropped.get(tree);
                if (before == null) {
                    throw new NoSuchTreeException(tree, "tree '" + tree + "' does not exist");
                }
                return before;
            }
            append(fence, WalRecord.Mutation.dropTree(tree, epoch));
            return dropped.get(tree);
        });
    }

    /** One catalog change decided on a freshly read catalog under a fresh claim. */
    private interface Step<T> {
        /**
         * @param fence the claim of the catalog log
         * @param raced whether an earlier attempt of this change was fenced out (another writer changed the catalog)
         */
        T run(Fence fence, boolean raced);
    }

    /**
     * Claims the catalog log, re-reads it and runs the step; on a fence or offset conflict (another writer claimed
     * and wrote after this claim) re-claims and re-runs the step on the re-read catalog, at most
     * {@link #MAX_ATTEMPTS} times with jittered back-off (see the class comment for the rule).
     *
     * @throws CatalogContendedException if every attempt was fenced out
     */
    private <T> T write(String what, Step<T> step) {
        RuntimeException last = null;
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            if (attempt > 0) {
                backoffJittered(attempt - 1);
            }
            try {
                Fence fence = claim();
                refresh();
                return step.run(fence, attempt > 0);
            } catch (FencedException | OffsetConflictException e) {
                last = e;
                refresh();
            }
        }
        throw new CatalogContendedException(what, MAX_ATTEMPTS, last);
    }

    /** Sleeps the configured back-off for this attempt times a random factor in [0.5, 1.5), so contenders part. */
    private void backoffJittered(int attempt) {
        long base = Math.max(1, ctx.config.retryBackoff.toMillis());
        long ms = Math.min(1000, base << Math.min(attempt, 10));
        long jittered = ms / 2 + java.util.concurrent.ThreadLocalRandom.current().nextLong(ms + 1);
        try {
            Thread.sleep(jittered);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LatticeShuttingDownException("interrupted while waiting to retry the catalog");
        }
    }

    private void checkNotDropped(String tree) {
        Dropped d = dropped.get(tree);
        if (d != null) {
            throw new NoSuchTreeException(tree, "tree '" + tree + "' was dropped at "
                    + java.time.Instant.ofEpochMilli(d.droppedMillis()) + "; Lattice.createTree creates it again");
        }
    }

    private Fence claim() {
        WalStorageProvider p = ctx.provider;
        Fence fence = ctx.bounded(LOG, "claim", () -> p.claim(LOG));
        ctx.bounded(LOG, "reconcile", () -> p.reconcile(LOG, fence));
        return fence;
    }

    private Placement append(Fence fence, String tree, int partitions, int hashVersion) {
        List<String> registered = new java.util.ArrayList<>(ctx.providers.keySet());
        List<String> placed = ctx.config.placementPolicy.place(tree, partitions, registered);
        if (placed == null || placed.size() != partitions) {
            throw new IllegalArgumentException("placement policy returned " + (placed == null ? "null" : placed.size()
                    + " keys") + " for tree '" + tree + "' with " + partitions + " partitions");
        }
        for (String k : placed) {
            if (!ctx.providers.containsKey(k)) {
                throw new IllegalArgumentException("placement policy put tree '" + tree + "' on provider key '" + k
                        + "', which is not registered; registered keys: " + registered);
            }
        }
        append(fence, WalRecord.Mutation.createTreeV2(tree, placed, hashVersion));
        return trees.get(tree);
    }

    /**
     * Compare-and-set of a tree's placement: claims the catalog (fencing out other catalog writers), re-reads it,
     * and appends the new placement only if the stored version is still {@code expectedVersion}.
     *
     * @return the new placement
     * @throws IllegalStateException if the placement changed meanwhile (nothing written)
     */
    synchronized Placement setPlacement(String tree, long expectedVersion, List<String> keys) {
        return write("move tree '" + tree + "'", (fence, raced) -> {
            Placement cur = trees.get(tree);
            if (cur == null || cur.version() != expectedVersion) {
                throw new IllegalStateException("placement of tree '" + tree + "' is at version "
                        + (cur == null ? "none" : cur.version()) + ", expected " + expectedVersion
                        + " (another move happened)");
            }
            append(fence, WalRecord.Mutation.setPlacement(tree, expectedVersion + 1, keys));
            Placement now = trees.get(tree);
            if (now.version() != expectedVersion + 1) {
                throw new IllegalStateException("placement of tree '" + tree + "' did not move to version "
                        + (expectedVersion + 1));
            }
            return now;
        });
    }

    private void append(Fence fence, WalRecord.Mutation m) {
        WalStorageProvider p = ctx.provider;
        byte[] entry = WalRecord.encode(WalRecord.KIND_CATALOG, List.of(m));
        WalRecord.seal(entry, System.currentTimeMillis());
        EncodedBatch batch = EncodedBatch.of(ctx.bounded(LOG, "state", () -> p.state(LOG)).committedTail() + 1,
                BatchId.random(), List.of(entry));
        for (int attempt = 0; ; attempt++) {
            try {
                ctx.bounded(LOG, "append", () -> {
                    p.append(LOG, fence, batch);
                    return null;
                });
                break;
            } catch (ProviderUnavailableException e) {
                if (attempt >= ctx.config.maxRetries) {
                    throw e;
                }
                ctx.backoff(attempt);
            }
        }
        refresh();
    }
}
