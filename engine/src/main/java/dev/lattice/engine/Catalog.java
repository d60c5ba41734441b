package dev.lattice.engine;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The durable list of trees and their partition counts: the engine's own log {@code _catalog/0} on the provider.
 * Read without a claim; a writer claims it only for the moment it adds a tree, so several processes that share a
 * backend (each owning its own trees) do not fence each other out. Thread-safe (synchronized).
 */
final class Catalog {

    static final LogId LOG = new LogId("_catalog", 0);

    private final EngineContext ctx;
    private final Map<String, Placement> trees = new TreeMap<>();
    private long readThrough = -1;

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
                    if (m.op() == WalRecord.Mutation.CREATE_TREE) {
                        List<String> keys;
                        try {
                            keys = m.placementOfCreateTree();
                        } catch (RuntimeException bad) {
                            throw new CorruptLogException(LOG, e.offset(), "tree record of '" + m.key()
                                    + "' cannot be decoded: " + bad.getMessage(), bad);
                        }
                        trees.putIfAbsent(m.key(), new Placement(m.key(), 1, keys));
                    } else if (m.op() == WalRecord.Mutation.SET_PLACEMENT) {
                        Placement cur = trees.get(m.key());
                        long version;
                        List<String> keys;
                        try {
                            version = m.placementVersion();
                            keys = m.placementOfCreateTree();
                        } catch (RuntimeException bad) {
                            throw new CorruptLogException(LOG, e.offset(), "placement record of '" + m.key()
                                    + "' cannot be decoded: " + bad.getMessage(), bad);
                        }
                        if (cur != null && version == cur.version() + 1 && keys.size() == cur.keys().size()) {
                            trees.put(m.key(), new Placement(m.key(), version, keys));
                        }
                    }
                }
                readThrough = e.offset();
            }
        }
    }

    /** @return the stored placement of a tree, or null when it does not exist */
    synchronized Placement placement(String tree) {
        return trees.get(tree);
    }

    synchronized Map<String, Placement> all() {
        return new TreeMap<>(trees);
    }

    /**
     * Returns the stored placement, creating the tree with {@code partitions} partitions placed by the configured
     * policy if it does not exist yet.
     *
     * @throws IllegalArgumentException if the policy returns a wrong number of keys or an unregistered key
     */
    synchronized Placement ensure(String tree, int partitions) {
        Placement known = trees.get(tree);
        if (known != null) {
            return known;
        }
        WalStorageProvider p = ctx.provider;
        Fence fence = ctx.bounded(LOG, "claim", () -> p.claim(LOG));
        ctx.bounded(LOG, "reconcile", () -> p.reconcile(LOG, fence));
        refresh();
        known = trees.get(tree);
        if (known != null) {
            return known;
        }
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
        append(fence, WalRecord.Mutation.createTree(tree, placed));
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
        WalStorageProvider p = ctx.provider;
        Fence fence = ctx.bounded(LOG, "claim", () -> p.claim(LOG));
        ctx.bounded(LOG, "reconcile", () -> p.reconcile(LOG, fence));
        refresh();
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
