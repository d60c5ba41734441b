package dev.lattice.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.ShardingEnvelope;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.cluster.typed.Cluster;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * What Pekko alone charges for one request to a sharded entity on another node, with no engine behind it (not a
 * test: run {@link #main} by hand, see docs/cluster.md "Point reads in batches"). Two actor systems in this JVM form a
 * cluster; an echo entity (answers every {@link Request} with an empty {@link Response} on its own thread) lives on
 * node B; closed-loop threads on node A ask it either through A's shard region (what {@link Router} does) or straight
 * at the entity's {@code ActorRef} (what a requester that cached the ref would do). Messages go through
 * {@link LatticeSerializer} as in a real cluster. Per phase it prints requests per second and this process's CPU time
 * per request (both nodes). Not thread-safe.
 */
public final class ShardingHopHarness {

    private static final EntityTypeKey<EntityMessage> ECHO = EntityTypeKey.create(EntityMessage.class, "echo");
    /** The echo entities' refs by entity id, as each starts (both systems live in this JVM). */
    private static final Map<String, ActorRef<EntityMessage>> STARTED = new ConcurrentHashMap<>();

    private ShardingHopHarness() {
    }

    private static Behavior<EntityMessage> echo(String id) {
        return Behaviors.setup(ctx -> {
            STARTED.put(id, ctx.getSelf());
            return Behaviors.receiveMessage(m -> {
                if (m instanceof Request q && q.replyTo() != null) {
                    q.replyTo().tell(Response.ok(0, true));
                }
                return Behaviors.same();
            });
        });
    }

    private static ActorSystem<Void> node(int port, int seed, boolean hostsEcho) {
        Config c = ConfigFactory.parseString("pekko.remote.artery.canonical.port = " + port + "\n"
                        + "pekko.cluster.seed-nodes = [\"pekko://hop@127.0.0.1:" + seed + "\"]\n"
                        + "pekko.cluster.roles = [" + (hostsEcho ? "echo" : "client") + "]\n"
                        + "pekko.loglevel = WARNING\npekko.cluster.jmx.multi-mbeans-in-same-jvm = on\n")
                .withFallback(ConfigFactory.parseResources(ShardingHopHarness.class.getClassLoader(),
                        "lattice-cluster-defaults.conf"))
                .withFallback(ConfigFactory.load());
        ActorSystem<Void> s = ActorSystem.create(Behaviors.empty(), "hop", c);
        ClusterSharding.get(s).init(Entity.of(ECHO, ec -> echo(ec.getEntityId())).withRole("echo"));
        return s;
    }

    /**
     * @param args optional: threads (default 32), seconds per phase (default 10), rounds (default 3)
     * @throws Exception if a node fails
     */
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 32;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        int seed = TestCluster.freePort();
        ActorSystem<Void> b = node(seed, seed, true);
        ActorSystem<Void> a = node(TestCluster.freePort(), seed, false);
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (up(a) < 2) {
                if (System.nanoTime() > until) {
                    throw new IllegalStateException("the two nodes did not form a cluster");
                }
                Thread.sleep(100);
            }
            ActorRef<ShardingEnvelope<EntityMessage>> region = ClusterSharding.get(a).init(
                    Entity.of(ECHO, ec -> echo(ec.getEntityId())).withRole("echo"));
            List<String> ids = List.of("e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7");
            for (String id : ids) { // start every entity through the region
                ask(a, region, null, id);
            }
            ActorRefResolver onA = ActorRefResolver.get(a);
            ActorRefResolver onB = ActorRefResolver.get(b);
            Map<String, ActorRef<EntityMessage>> direct = new ConcurrentHashMap<>();
            for (String id : ids) {
                direct.put(id, onA.resolveActorRef(onB.toSerializationFormat(STARTED.get(id))));
            }
            phase(a, region, null, ids, threads, 10);
            phase(a, null, direct, ids, threads, 10);
            System.out.printf("%n%d threads on node A, %d s per phase, echo entities on node B%n", threads, seconds);
            System.out.println("| round | path | requests/s | CPU per request (both nodes) |");
            System.out.println("|---:|---|---:|---:|");
            for (int r = 1; r <= rounds; r++) {
                for (boolean viaRegion : new boolean[] {true, false}) {
                    long[] res = phase(a, viaRegion ? region : null, viaRegion ? null : direct, ids, threads, seconds);
                    System.out.printf("| %d | %s | %,.0f | %.1f us |%n", r, viaRegion ? "shard region" : "entity ref",
                            res[0] / (double) seconds, res[1] / 1e3 / Math.max(1, res[0]));
                }
            }
        } finally {
            a.terminate();
            b.terminate();
            a.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            b.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static int up(ActorSystem<Void> s) {
        int n = 0;
        for (org.apache.pekko.cluster.Member m : Cluster.get(s).state().getMembers()) {
            if (m.status() == org.apache.pekko.cluster.MemberStatus.up()) {
                n++;
            }
        }
        return n;
    }

    private static void ask(ActorSystem<Void> a, ActorRef<ShardingEnvelope<EntityMessage>> region,
                            Map<String, ActorRef<EntityMessage>> direct, String id) throws Exception {
        Duration timeout = Duration.ofSeconds(10);
        if (region != null) {
            AskPattern.<ShardingEnvelope<EntityMessage>, Response>ask(region,
                    reply -> new ShardingEnvelope<>(id, request(reply)), timeout, a.scheduler())
                    .toCompletableFuture().get(10, TimeUnit.SECONDS);
        } else {
            AskPattern.<EntityMessage, Response>ask(direct.get(id), ShardingHopHarness::request, timeout,
                    a.scheduler()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private static Request request(ActorRef<Response> reply) {
        return new Request(Op.GET, "k", null, null, 0, false, null, null, reply, null, null, null);
    }

    /** @return requests done and CPU nanoseconds of this process over {@code seconds} */
    private static long[] phase(ActorSystem<Void> a, ActorRef<ShardingEnvelope<EntityMessage>> region,
                                Map<String, ActorRef<EntityMessage>> direct, List<String> ids, int threads,
                                int seconds) throws Exception {
        LongAdder done = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int first = t;
            ts[t] = new Thread(() -> {
                int i = first;
                while (!stop.get()) {
                    try {
                        ask(a, region, direct, ids.get(i++ % ids.size()));
                        done.increment();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
        }
        long cpu0 = os.getProcessCpuTime();
        for (Thread t : ts) {
            t.start();
        }
        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
        stop.set(true);
        long n = done.sum();
        long cpu = os.getProcessCpuTime() - cpu0;
        for (Thread t : ts) {
            t.join();
        }
        return new long[] {n, cpu};
    }
}
