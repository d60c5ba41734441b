package dev.lattice.bench.follower;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeFollower;
import dev.lattice.engine.Tree;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.HdrHistogram.Histogram;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Follower lag: one owner writes keys at a steady rate; a read-only follower on its own provider instance (as a
 * separate process would have) polls for each key; the lag of a key is the time from the owner's put returning to
 * the follower first reading it. Prints p50/p90/p99/max per provider and poll interval.
 *
 * <p>Arguments: {@code --providers chronicle,postgres} {@code --rate 500} (puts/s) {@code --seconds 20}
 * {@code --polls 50,10} (follower poll intervals in ms). Run with {@code benchmarks/follower-lag.sh}.
 */
public final class FollowerLagHarness {

    private FollowerLagHarness() {
    }

    /**
     * Runs the measurement.
     *
     * @param args see the class comment
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        String providers = "chronicle,postgres";
        int rate = 500;
        int seconds = 20;
        String polls = "50,10";
        for (int i = 0; i < args.length - 1; i += 2) {
            switch (args[i]) {
                case "--providers" -> providers = args[i + 1];
                case "--rate" -> rate = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
                case "--polls" -> polls = args[i + 1];
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        System.out.println("| provider | poll interval | puts/s | keys | lag p50 | p90 | p99 | max |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        for (String p : providers.split(",")) {
            for (String poll : polls.split(",")) {
                measure(p.trim(), rate, seconds, Integer.parseInt(poll.trim()));
            }
        }
    }

    private static void measure(String provider, int rate, int seconds, int pollMs) throws Exception {
        EmbeddedPostgres pg = null;
        Path dir = null;
        String uri;
        switch (provider) {
            case "chronicle" -> {
                dir = Files.createTempDirectory("follower-lag");
                uri = "chronicle:" + dir;
            }
            case "postgres" -> {
                pg = EmbeddedPostgres.builder().setServerConfig("fsync", "on")
                        .setServerConfig("synchronous_commit", "on").start();
                uri = "postgres://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres&schema=lag";
            }
            case "memory" -> uri = "memory:follower-lag-" + System.nanoTime();
            default -> throw new IllegalArgumentException("unknown provider " + provider);
        }
        int keys = rate * seconds;
        AtomicLongArray written = new AtomicLongArray(keys);
        Histogram lag = new Histogram(60_000_000_000L, 3);
        try (Lattice owner = Lattice.open(uri)) {
            Tree t = owner.tree("lag");
            t.put("warm-up", new byte[] {1});
            try (LatticeFollower follower = Lattice.openReadOnly(LatticeConfig.builder().uri(uri)
                    .followerPollInterval(Duration.ofMillis(pollMs)).build())) {
                Tree ft = follower.tree("lag");
                Thread checker = new Thread(() -> {
                    for (int i = 0; i < keys; i++) {
                        String k = key(i);
                        while (ft.get(k).isEmpty()) {
                            LockSupport.parkNanos(50_000);
                        }
                        long seen = System.nanoTime();
                        long w;
                        while ((w = written.get(i)) == 0) {
                            Thread.onSpinWait(); // seen before the owner's put returned
                        }
                        lag.recordValue(Math.max(0, seen - w));
                    }
                }, "lag-checker");
                checker.start();
                long periodNanos = 1_000_000_000L / rate;
                long next = System.nanoTime();
                byte[] value = "x".repeat(100).getBytes(StandardCharsets.UTF_8);
                for (int i = 0; i < keys; i++) {
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    t.put(key(i), value);
                    written.set(i, System.nanoTime());
                    next += periodNanos;
                }
                checker.join(120_000);
            }
        } finally {
            if (pg != null) {
                pg.close();
            }
        }
        System.out.printf(Locale.ROOT, "| %s | %d ms | %d | %d | %.1f ms | %.1f ms | %.1f ms | %.1f ms |%n", provider,
                pollMs, rate, lag.getTotalCount(), ms(lag.getValueAtPercentile(50)), ms(lag.getValueAtPercentile(90)),
                ms(lag.getValueAtPercentile(99)), ms(lag.getMaxValue()));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private static String key(int i) {
        return String.format(Locale.ROOT, "k%08d", i);
    }
}
