package dev.lattice.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeOptions;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.typed.ShardingEnvelope;
import org.apache.pekko.cluster.sharding.typed.ShardingMessageExtractor;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.cluster.typed.Cluster;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;

/**
 * One node of a Lattice cluster: an Apache Pekko cluster member (role {@value #HOST_ROLE} when it hosts logs, and
 * {@code lattice-protocol-N} advertising its wire protocol level, {@link PeerProtocols}) whose sharding places each log
 * {@code (tree, partition)} on one node, where the log's entity hosts the partition through this node's engine.
 * Pekko decides who should own a log (allocation, rebalancing on join and leave, restarts after a node is downed
 * by the split brain resolver); the provider's fence decides who does: hosting claims the log, which fences any
 * earlier owner, and a node serves reads of a log only within its read lease of a successful fenced call.
 *
 * <p>{@link #tree} returns a {@link Tree} that any node can use for any key (see {@link ClusterTree} for what it
 * serves). {@link #close} leaves the cluster gracefully: the node's logs are handed off (drained, checkpointed,
 * released) before its engine closes. Thread-safe.
 */
public final class LatticeCluster implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LatticeCluster.class);
    /** The module's Pekko defaults (cluster provider, serializer, split brain resolver, sharding settings). */
    static final String DEFAULTS = "lattice-cluster-defaults.conf";
    /** The Pekko role of nodes that host logs. */
    public static final String HOST_ROLE = "lattice-host";
    static final EntityTypeKey<EntityMessage> LOG_ENTITY = EntityTypeKey.create(EntityMessage.class, "lattice-log");

    private final Lattice lattice;
    private final NodeServices services;
    private final ActorSystem<Void> system;
    private final Router router;
    private final ReadBatcher reads;
    private final LatticeClusterConfig config;
    private volatile boolean closed;
    private volatile boolean closing;
    private volatile boolean downed;

    private LatticeCluster(LatticeClusterConfig config) {
        this.config = config;
        Config pekko = config.pekko()
                .withFallback(ConfigFactory.parseResources(LatticeCluster.class.getClassLoader(), DEFAULTS))
                .withFallback(ConfigFactory.load());
        int protocol = PeerProtocols.configured(pekko);
        List<String> roles = new java.util.ArrayList<>(pekko.getStringList("pekko.cluster.roles"));
        if (config.hosting() && !roles.contains(HOST_ROLE)) {
            roles.add(HOST_ROLE);
        }
        PeerProtocols.role(protocol).filter(r -> !roles.contains(r)).ifPresent(roles::add);
        pekko = pekko.withValue("pekko.cluster.roles", ConfigValueFactory.fromIterable(roles));
        checkLease(config, pekko);
        this.lattice = Lattice.open(config.lattice().readLease(config.readLease()).build());
        try {
            this.services = new NodeServices(lattice, config);
            this.system = ActorSystem.create(Behaviors.empty(), config.systemName(), pekko);
        } catch (RuntimeException e) {
            lattice.close();
            throw e;
        }
        ActorRef<ShardingEnvelope<EntityMessage>> region = ClusterSharding.get(system).init(
                Entity.of(LOG_ENTITY, ec -> PartitionEntity.create(ec.getEntityId(), services))
                        .withStopMessage(PartitionEntity.Release.HAND_OFF)
                        .withRole(HOST_ROLE)
                        .withMessageExtractor(new OneShardPerLog()));
        Cluster membership = Cluster.get(system);
        this.router = new Router(region, system.scheduler(), config.requestTimeout(), config.operationTimeout(),
                new PeerProtocols(protocol, () -> membership.state().getMembers()), services.replies());
        services.router(router);
        long frame = system.settings().config().getBytes("pekko.remote.artery.advanced.maximum-frame-size");
        services.messageBudget(Math.max(16 * 1024, frame - 8 * 1024));
        this.reads = new ReadBatcher(router, services.messageBudget());
        system.getWhenTerminated().thenRun(() -> {
            if (!closing) {
                Object reason = org.apache.pekko.actor.CoordinatedShutdown.get(system).getShutdownReason()
                        .orElse(null);
                downed = reason == org.apache.pekko.actor.CoordinatedShutdown.clusterDowningReason();
                LOG.warn("node {} stopped ({}); closing its engine", system.address(), reason);
            }
            closeEngine();
        });
    }

    /**
     * Starts a node: opens its engine (with the cluster's read lease), starts its actor system, joins the seed nodes
     * and starts sharding. Returns at once; {@link #awaitMembers} waits until the cluster has formed.
     *
     * @param config the node's configuration
     * @return the node
     * @throws IllegalArgumentException if the read lease is not shorter than the split brain resolver's
     *     {@code stable-after} (the lease would not bound stale reads) or a setting is invalid
     * @throws dev.lattice.spi.WalStorageException if the engine's provider fails to open
     * @throws com.typesafe.config.ConfigException if the Pekko settings are malformed
     */
    public static LatticeCluster start(LatticeClusterConfig config) {
        return new LatticeCluster(config);
    }

    private static void checkLease(LatticeClusterConfig config, Config pekko) {
        Duration stable = pekko.getDuration("pekko.cluster.split-brain-resolver.stable-after");
        if (config.readLease().compareTo(stable) >= 0) {
            throw new IllegalArgumentException("readLease " + config.readLease().toMillis() + " ms must be shorter"
                    + " than pekko.cluster.split-brain-resolver.stable-after (" + stable.toMillis() + " ms): a node"
                    + " frozen past the lease must stop serving reads before another node can own its logs");
        }
    }

    /** @return this node's batcher of point reads (tests) */
    ReadBatcher reads() {
        return reads;
    }

    /**
     * The tree {@code name} as served by the cluster, created (in the shared catalog) with the engine's default
     * options if it does not exist.
     *
     * @param name the tree name
     * @return the tree
     * @throws IllegalArgumentException if the name breaks the rules
     * @throws dev.lattice.engine.NoSuchTreeException if the tree was dropped
     */
    public Tree tree(String name) {
        return new ClusterTree(services.tree(name), router, reads, services.cutHolds(), config.scanPageEntries(),
                services.messageBudget());
    }

    /**
     * The same, creating a missing tree with {@code options} (an existing tree keeps its partition count and hash).
     *
     * @param name the tree name
     * @param options partition count and hash version for a new tree
     * @return the tree
     */
    public Tree tree(String name, TreeOptions options) {
        return new ClusterTree(services.tree(name, options), router, reads, services.cutHolds(),
                config.scanPageEntries(), services.messageBudget());
    }

    /**
     * An atomic write over trees of this cluster, not bound to one (pass the tree to each call, e.g.
     * {@code cluster.atomic().put(orders, k1, v1).put(stock, k2, v2).commit()}). Trees come from {@link #tree}; the
     * write is coordinated by the entity of the lowest log it touches, wherever that runs. The embedded builder's
     * guarantees hold (all or nothing, one version, no partial visibility to reads), idempotency keys included
     * ({@link dev.lattice.engine.AtomicWrite#idempotencyKey}; recorded in the coordinator log). {@code commit()} waits
     * at most the operation timeout and throws what the embedded builder throws, plus
     * {@link dev.lattice.engine.WriteOutcomeUnknownException} when the coordinator's answer is lost.
     *
     * @return a new builder (not thread-safe; committed once)
     */
    public dev.lattice.engine.AtomicWrite atomic() {
        return new ClusterAtomicWrite(router, null);
    }

    /**
     * The partitions of tree {@code name} this node hosts at this moment (Pekko moves them on joins, leaves and
     * failures, so the answer may be stale as soon as it returns). Does not create or open the tree.
     *
     * @param name the tree name
     * @return a snapshot, empty when this node hosts none of its partitions or has not opened the tree
     */
    public java.util.Set<Integer> hostedPartitions(String name) {
        return services.hostedPartitions(name);
    }

    /**
     * The lowest wire protocol level among this node and the hosting members it sees (members not yet removed):
     * what its scans, counts, idempotency keys and batched point reads may use (docs/cluster.md "Rolling
     * upgrades"). 3 for this release; 2 while a member of the release before hosts logs (point reads then go one per
     * message); 1 while a member of the release before the held scans does (scans and counts are then per partition,
     * not one cut). Cheap (reads Pekko's membership as this node knows it; may lag the cluster by a gossip round).
     *
     * @return 1, 2 or 3
     */
    public int hostProtocolLevel() {
        return services.protocols().hostLevel();
    }

    /** @return the number of members that are up, as this node sees them */
    public int upMembers() {
        return (int) StreamSupport.stream(Cluster.get(system).state().getMembers().spliterator(), false)
                .filter(m -> m.status() == MemberStatus.up()).count();
    }

    /**
     * Waits until this node is up and sees at least {@code members} members up.
     *
     * @param members how many
     * @param timeout how long at most
     * @return true when reached in time
     */
    public boolean awaitMembers(int members, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (Cluster.get(system).selfMember().status() == MemberStatus.up() && upMembers() >= members) {
                return true;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    NodeServices services() {
        return services;
    }

    /** @return this node's engine (for its meters and stats; its partial trees belong to the cluster) */
    public Lattice lattice() {
        return lattice;
    }

    /** @return this node's actor system (for its address and Pekko's own tools) */
    public ActorSystem<Void> system() {
        return system;
    }

    /** @return true when this node stopped because the cluster downed it (rather than by {@link #close}) */
    public boolean wasDowned() {
        return downed;
    }

    /** @return true once the node left the cluster or was downed, and its engine is closed */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Leaves the cluster gracefully (Pekko's coordinated shutdown hands this node's logs off to the others: each is
     * drained, checkpointed and released) and closes the engine. Waits up to a minute. A second call is a no-op.
     */
    @Override
    public void close() {
        closing = true;
        system.terminate();
        try {
            system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warn("the actor system did not terminate within 60 s: {}", e.toString());
        }
        closeEngine();
    }

    private synchronized void closeEngine() {
        if (!closed) {
            closed = true;
            services.close();
            lattice.close();
        }
    }

    /** One shard per log: Pekko then moves logs one by one. */
    private static final class OneShardPerLog
            extends ShardingMessageExtractor<ShardingEnvelope<EntityMessage>, EntityMessage> {
        @Override
        public String entityId(ShardingEnvelope<EntityMessage> envelope) {
            return envelope.entityId();
        }

        @Override
        public String shardId(String entityId) {
            return entityId;
        }

        @Override
        public EntityMessage unwrapMessage(ShardingEnvelope<EntityMessage> envelope) {
            return envelope.message();
        }
    }
}
