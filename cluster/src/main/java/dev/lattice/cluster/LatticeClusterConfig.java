package dev.lattice.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.lattice.engine.LatticeConfig;

import java.time.Duration;
import java.util.Objects;

/**
 * How a node of a Lattice cluster starts: the engine's configuration (the provider URI is the same on every node),
 * the Pekko configuration (remoting address, seed nodes, TLS; see {@code docs/cluster.md}), and the cluster's own
 * timeouts. Immutable once built; the builder is not thread-safe.
 */
public final class LatticeClusterConfig {

    private final LatticeConfig.Builder lattice;
    private final Config pekko;
    private final ClusterTls tls;
    private final String systemName;
    private final boolean hosting;
    private final Duration requestTimeout;
    private final Duration operationTimeout;
    private final Duration releaseTimeout;
    private final Duration readLease;
    private final int blockingThreads;
    private final int scanPageEntries;
    private final Duration scanPrepareHold;

    private LatticeClusterConfig(Builder b) {
        this.lattice = Objects.requireNonNull(b.lattice, "lattice configuration (LatticeClusterConfig.Builder.lattice)");
        this.pekko = b.pekko;
        this.tls = b.tls;
        this.systemName = b.systemName;
        this.hosting = b.hosting;
        this.requestTimeout = b.requestTimeout;
        this.operationTimeout = b.operationTimeout;
        this.releaseTimeout = b.releaseTimeout;
        this.readLease = b.readLease;
        this.blockingThreads = b.blockingThreads;
        this.scanPageEntries = b.scanPageEntries;
        this.scanPrepareHold = b.scanPrepareHold;
        if (scanPrepareHold.compareTo(requestTimeout) >= 0) {
            throw new IllegalArgumentException("scanPrepareHold " + scanPrepareHold.toMillis() + " ms must be shorter"
                    + " than requestTimeout " + requestTimeout.toMillis() + " ms (a held prepare must still be"
                    + " answered within one attempt)");
        }
    }

    /**
     * Reads a node's configuration from Typesafe Config: the engine's provider URI from {@code lattice.cluster.provider}
     * (required), optional {@code lattice.cluster.hosting}, {@code read-lease}, {@code request-timeout},
     * {@code operation-timeout}, {@code release-timeout}, {@code scan-prepare-hold}, TLS from {@code lattice.cluster.tls.key-store},
     * {@code trust-store}, {@code password} and optional {@code protocol}, {@code hostname-verification} (see
     * {@link ClusterTls}; TLS is off without {@code tls.key-store}), and everything under {@code pekko} as the Pekko
     * settings. So a node can be configured by an {@code application.conf} or by {@code -D} system properties.
     *
     * @param config the settings (for example {@code ConfigFactory.load()})
     * @return the builder, to adjust further
     * @throws com.typesafe.config.ConfigException.Missing if {@code lattice.cluster.provider} is missing
     * @throws com.typesafe.config.ConfigException.BadValue if a duration is malformed
     * @throws com.typesafe.config.ConfigException.Missing if {@code tls.key-store} is set without
     *     {@code tls.trust-store} or {@code tls.password}
     * @throws IllegalArgumentException if the TLS password is empty or its protocol is not TLSv1.3/TLSv1.2
     */
    public static Builder fromConfig(Config config) {
        Config c = config.getConfig("lattice.cluster");
        Builder b = builder().lattice(LatticeConfig.builder().uri(c.getString("provider")));
        if (c.hasPath("hosting")) {
            b.hosting(c.getBoolean("hosting"));
        }
        if (c.hasPath("read-lease")) {
            b.readLease(c.getDuration("read-lease"));
        }
        if (c.hasPath("request-timeout")) {
            b.requestTimeout(c.getDuration("request-timeout"));
        }
        if (c.hasPath("operation-timeout")) {
            b.operationTimeout(c.getDuration("operation-timeout"));
        }
        if (c.hasPath("release-timeout")) {
            b.releaseTimeout(c.getDuration("release-timeout"));
        }
        if (c.hasPath("scan-prepare-hold")) {
            b.scanPrepareHold(c.getDuration("scan-prepare-hold"));
        }
        if (config.hasPath("pekko")) {
            b.pekko(withoutReferenceDefaults(config.withOnlyPath("pekko")));
        }
        if (c.hasPath("tls.key-store")) {
            Config t = c.getConfig("tls");
            ClusterTls tls = ClusterTls.of(java.nio.file.Paths.get(t.getString("key-store")),
                    java.nio.file.Paths.get(t.getString("trust-store")), t.getString("password"));
            if (t.hasPath("protocol")) {
                tls = tls.protocol(t.getString("protocol"));
            }
            if (t.hasPath("hostname-verification")) {
                tls = tls.hostnameVerification(t.getBoolean("hostname-verification"));
            }
            b.tls(tls);
        }
        return b;
    }

    /**
     * The settings of {@code pekko} that are not Pekko's own reference defaults (a loaded configuration holds them
     * all; passed on as they are they would override this module's defaults, e.g. the cluster actor provider).
     */
    private static Config withoutReferenceDefaults(Config pekko) {
        Config reference = ConfigFactory.parseResources(LatticeClusterConfig.class.getClassLoader(), "reference.conf")
                .resolve(); // without system properties (defaultReference() has them as overrides)
        Config out = ConfigFactory.empty();
        for (java.util.Map.Entry<String, com.typesafe.config.ConfigValue> e : pekko.entrySet()) {
            String path = e.getKey();
            if (!reference.hasPath(path) || !java.util.Objects.equals(reference.getValue(path).unwrapped(),
                    e.getValue().unwrapped())) {
                out = out.withValue(path, e.getValue());
            }
        }
        return out;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    LatticeConfig.Builder lattice() {
        return lattice;
    }

    /**
     * The node's own Pekko settings: {@link Builder#tls} over {@link Builder#pekko}. Called at start, it checks the
     * key and trust stores of a {@code tls-tcp} transport (see {@link ClusterTls#checkStores}).
     *
     * @throws IllegalArgumentException naming the store's path if a key or trust store is missing or unreadable
     */
    Config pekko() {
        Config own = tls == null ? pekko : tls.pekkoConfig().withFallback(pekko);
        ClusterTls.checkStores(own.withFallback(ConfigFactory.load()));
        return own;
    }

    /** @return the TLS settings given to {@link Builder#tls}, or null */
    ClusterTls tls() {
        return tls;
    }

    String systemName() {
        return systemName;
    }

    boolean hosting() {
        return hosting;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    Duration operationTimeout() {
        return operationTimeout;
    }

    Duration releaseTimeout() {
        return releaseTimeout;
    }

    Duration readLease() {
        return readLease;
    }

    int blockingThreads() {
        return blockingThreads;
    }

    int scanPageEntries() {
        return scanPageEntries;
    }

    Duration scanPrepareHold() {
        return scanPrepareHold;
    }

    /** Builds a {@link LatticeClusterConfig}. Not thread-safe. */
    public static final class Builder {
        private LatticeConfig.Builder lattice;
        private Config pekko = ConfigFactory.empty();
        private ClusterTls tls;
        private String systemName = "lattice";
        private boolean hosting = true;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private Duration operationTimeout = Duration.ofSeconds(30);
        private Duration releaseTimeout = Duration.ofSeconds(10);
        private Duration readLease = Duration.ofSeconds(2);
        private int blockingThreads = 32;
        private int scanPageEntries = 1000;
        private Duration scanPrepareHold = Duration.ofMillis(100);

        private Builder() {
        }

        /**
         * The engine's configuration of this node (its provider URI or instance must reach the same storage on
         * every node). The cluster sets its {@link LatticeConfig.Builder#readLease} to {@link #readLease}.
         *
         * @param lattice the builder, used at {@link LatticeCluster#start}
         * @return this
         */
        public Builder lattice(LatticeConfig.Builder lattice) {
            this.lattice = Objects.requireNonNull(lattice, "lattice");
            return this;
        }

        /**
         * Pekko settings of this node, over this module's defaults ({@code lattice-cluster-defaults.conf}): at least
         * {@code pekko.remote.artery.canonical.hostname/port} and {@code pekko.cluster.seed-nodes}; TLS under
         * {@code pekko.remote.artery.ssl} (see docs/cluster.md).
         *
         * @param pekko the settings
         * @return this
         */
        public Builder pekko(Config pekko) {
            this.pekko = Objects.requireNonNull(pekko, "pekko");
            return this;
        }

        /**
         * Encrypts the cluster's traffic with TLS and requires mutual authentication (see {@link ClusterTls}): only
         * nodes whose certificate this node's trust store trusts can join it or send it requests. These settings go
         * over any given to {@link #pekko}. Off unless called; every node of a cluster needs it. The stores are
         * checked at {@link LatticeCluster#start} (an {@link IllegalArgumentException} names a missing or
         * unreadable store).
         *
         * @param tls the settings, or null for plain TCP
         * @return this
         */
        public Builder tls(ClusterTls tls) {
            this.tls = tls;
            return this;
        }

        /**
         * Shorthand for {@code tls(ClusterTls.of(keyStore, trustStore, password))}: TLSv1.3, mutual authentication,
         * no hostname verification.
         *
         * @param keyStore this node's key store (its key and certificate chain)
         * @param trustStore the certificates it trusts (the cluster's CA)
         * @param password the password of both stores and of the key
         * @return this
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the password is empty
         */
        public Builder tls(java.nio.file.Path keyStore, java.nio.file.Path trustStore, String password) {
            return tls(ClusterTls.of(keyStore, trustStore, password));
        }

        /**
         * @param name the actor system's name, the same on every node (default {@code lattice})
         * @return this
         */
        public Builder systemName(String name) {
            this.systemName = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * @param hosting false for a node that only routes (it hosts no partition; default true)
         * @return this
         */
        public Builder hosting(boolean hosting) {
            this.hosting = hosting;
            return this;
        }

        /**
         * @param timeout how long one attempt waits for the owner's answer (default 5 s); a write whose answer does
         *     not come in time fails with {@link dev.lattice.engine.WriteOutcomeUnknownException}
         * @return this
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive("requestTimeout", timeout);
            return this;
        }

        /**
         * @param timeout how long an operation keeps retrying while its partition has no owner (a hand-off or a
         *     failover; default 30 s)
         * @return this
         */
        public Builder operationTimeout(Duration timeout) {
            this.operationTimeout = positive("operationTimeout", timeout);
            return this;
        }

        /**
         * @param timeout how long a hand-off waits for a partition's writes to drain and its checkpoint (default 10 s)
         * @return this
         */
        public Builder releaseTimeout(Duration timeout) {
            this.releaseTimeout = positive("releaseTimeout", timeout);
            return this;
        }

        /**
         * The bound on stale reads of a node that lost a partition without knowing (see
         * {@link LatticeConfig.Builder#readLease}); must be shorter than the split brain resolver's
         * {@code stable-after} (checked at start). Default 2 s.
         *
         * @param lease at least 10 ms
         * @return this
         */
        public Builder readLease(Duration lease) {
            this.readLease = positive("readLease", lease);
            if (lease.toMillis() < 10) {
                throw new IllegalArgumentException("readLease must be at least 10 ms, got " + lease);
            }
            return this;
        }

        /**
         * @param threads threads of the node's pool for blocking calls (hosting, reads, atomic writes), 1..1024
         *     (default 32)
         * @return this
         */
        public Builder blockingThreads(int threads) {
            if (threads < 1 || threads > 1024) {
                throw new IllegalArgumentException("blockingThreads must be 1..1024, got " + threads);
            }
            this.blockingThreads = threads;
            return this;
        }

        /**
         * @param entries entries per scan page fetched from an owner, 1..100,000 (default 1,000)
         * @return this
         */
        public Builder scanPageEntries(int entries) {
            if (entries < 1 || entries > 100_000) {
                throw new IllegalArgumentException("scanPageEntries must be 1..100000, got " + entries);
            }
            this.scanPageEntries = entries;
            return this;
        }

        /**
         * How long a scan or count across partitions may hold new atomic-write prepares in the partitions it reads,
         * once a validation round failed (see {@code CutHolds} and docs/cluster.md). On the scanning node it is the
         * hold asked for (renewed while the scan goes on); on an owner it caps every hold it grants and is the
         * longest one prepare waits at its partition in total, however many holds follow each other (then the
         * prepare goes on as without holds). So a write waits at most this long per tree it begins in. Zero turns
         * holds off: this node's scans and counts place none, its partitions grant none (scans and counts then
         * retry rounds as before, and can starve beside a writer that never pauses). Default 100 ms; must be
         * shorter than {@link #requestTimeout} (checked by {@link #build}).
         *
         * @param hold 0..5 s
         * @return this
         * @throws IllegalArgumentException if negative or longer than 5 s
         */
        public Builder scanPrepareHold(Duration hold) {
            Objects.requireNonNull(hold, "scanPrepareHold");
            if (hold.isNegative() || hold.compareTo(Duration.ofSeconds(5)) > 0) {
                throw new IllegalArgumentException("scanPrepareHold must be 0..5 s, got " + hold);
            }
            this.scanPrepareHold = hold;
            return this;
        }

        /**
         * @return the configuration
         * @throws NullPointerException if no lattice configuration was given
         * @throws IllegalArgumentException if {@link #scanPrepareHold} is not shorter than {@link #requestTimeout}
         */
        public LatticeClusterConfig build() {
            return new LatticeClusterConfig(this);
        }

        private static Duration positive(String name, Duration d) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, got " + d);
            }
            return d;
        }
    }
}
