package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;

/**
 * The settings of one Lattice plugin (journal, snapshot store or durable state store), read from its plugin block.
 *
 * <p>Immutable and thread-safe.
 *
 * @param connection path of the connection block in the actor system's configuration (see {@link ConnectionSettings})
 * @param tree the Lattice tree the plugin keeps its data in
 * @param partitions partitions of the tree when this plugin creates it; {@code 0} = the connection's default
 * @param replayBatchSize events (or snapshots, or keys) read per bounded batch, 1..100,000
 * @param maxWriteKeys most keys one Lattice atomic write of this plugin holds, 2..4,096
 * @param maxWriteBytes most value bytes one Lattice atomic write of this plugin holds (several Pekko atomic writes are
 *     combined up to this), 1 KiB..64 MiB
 */
public record PluginSettings(String connection, String tree, int partitions, int replayBatchSize, int maxWriteKeys,
                             long maxWriteBytes) {

    /**
     * @param connection connection block path
     * @param tree tree name
     * @param partitions partitions, 0..1024
     * @param replayBatchSize 1..100,000
     * @param maxWriteKeys 2..4,096
     * @param maxWriteBytes 1,024..67,108,864
     * @throws IllegalArgumentException if a value is out of range (message names the setting)
     */
    public PluginSettings {
        if (connection == null || connection.isBlank()) {
            throw new IllegalArgumentException("plugin setting 'connection' must name a connection block path");
        }
        if (tree == null || tree.isBlank()) {
            throw new IllegalArgumentException("plugin setting 'tree' must name a Lattice tree");
        }
        check("partitions", partitions, 0, 1024);
        check("replay-batch-size", replayBatchSize, 1, 100_000);
        check("max-write-keys", maxWriteKeys, 2, 4096);
        check("max-write-bytes", maxWriteBytes, 1024, 64L << 20);
    }

    private static void check(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("plugin setting '" + name + "' must be in " + min + ".." + max
                    + ", got " + v);
        }
    }

    /**
     * Reads a plugin block.
     *
     * @param c the plugin's configuration (what Pekko passes to the plugin's constructor)
     * @return the settings
     * @throws ConfigException if a key is missing or has the wrong type
     * @throws IllegalArgumentException if a value is out of range
     */
    public static PluginSettings fromConfig(Config c) {
        return new PluginSettings(c.getString("connection"), c.getString("tree"), c.getInt("partitions"),
                c.getInt("replay-batch-size"), c.getInt("max-write-keys"), c.getBytes("max-write-bytes"));
    }

    /**
     * Opens (creating if needed) the plugin's tree with its partition count.
     *
     * @param lattice the plugin's Lattice
     * @return the tree
     * @throws RuntimeException as {@link dev.lattice.engine.Lattice#tree(String, int)}
     */
    public dev.lattice.engine.Tree openTree(dev.lattice.engine.Lattice lattice) {
        return partitions > 0 ? lattice.tree(tree, partitions) : lattice.tree(tree);
    }
}
