package dev.lattice.bench.lsm;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import dev.lattice.spi.memory.InMemoryStorage;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Put latency while a large memtable is flushed (issue 16: "the longest put during a checkpoint (or flush) of a
 * 200 MB partition at most 10x that run's p99 put without one"). One writer thread puts {@code rounds x mb} MiB of new
 * 1 KiB values into a one-partition tree whose memtable is flushed when it holds {@code mb} MiB (`memtableBytes`; the
 * checkpoint policy's entry and byte triggers are set out of the way), timing every put. A monitor thread polls the
 * {@code lattice.flush.duration} timer every 0.2 ms; each flush's window is [its end minus its duration, its end].
 * Prints, for the puts outside every flush window and for those inside one, the count, p50, p99, p99.9 and max, and
 * the ratio of the longest put inside a window to the p99 outside. Not a unit test: it prints and exits.
 *
 * <p>Run: {@code java -Xmx3g -Xlog:gc:file=/tmp/fs-gc.log -cp CP dev.lattice.bench.lsm.FlushStallProbe memory 200 3}
 * or with {@code chronicle:/some/dir} as the first argument.
 */
public final class FlushStallProbe {

    private FlushStallProbe() {
    }

    /**
     * @param args {@code PROVIDER MB ROUNDS}: {@code memory} or a provider URI; memtable MiB per flush; flushes wanted
     * @throws InterruptedException if interrupted while joining the monitor
     */
    public static void main(String[] args) throws InterruptedException {
        String provider = args[0];
        int mb = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        String uri = provider.equals("memory") ? "memory:flush-stall-" + UUID.randomUUID() : provider;
        int valueBytes = 1024;
        int puts = (int) ((long) rounds * mb * (1 << 20) / valueBytes) + (int) ((long) mb * (1 << 20) / valueBytes / 2);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LatticeConfig config = LatticeConfig.builder().uri(uri).meterRegistry(registry)
                .memtableBytes((long) mb << 20).memoryBudgetBytes(4L * mb << 20)
                .checkpointEveryEntries(Long.MAX_VALUE / 4).checkpointEveryBytes(Long.MAX_VALUE / 4).build();
        long[] startNanos = new long[puts];
        long[] tookNanos = new long[puts];
        List<long[]> windows = new ArrayList<>(); // {start, end} nanos
        try (Lattice lattice = Lattice.open(config)) {
            Tree tree = lattice.tree("flush-stall", 1);
            byte[] value = new byte[valueBytes];
            new SplittableRandom(42).nextBytes(value);
            Monitor monitor = new Monitor(registry, windows);
            monitor.start();
            StallSampler sampler = new StallSampler(Thread.currentThread());
            if (Boolean.getBoolean("lattice.bench.stalls")) {
                sampler.start(); // its stack samples are safepoints of their own: leave it off when timing
            }
            for (int i = 0; i < puts; i++) {
                String key = String.format(Locale.ROOT, "key%010d", i);
                long t0 = System.nanoTime();
                sampler.putStartedNanos = t0;
                tree.put(key, value);
                sampler.putStartedNanos = 0;
                long t1 = System.nanoTime();
                startNanos[i] = t0;
                tookNanos[i] = t1 - t0;
            }
            Thread.sleep(2000); // let a flush started by the last puts finish, so its window is known
            monitor.stop = true;
            monitor.join();
            System.out.printf(Locale.ROOT, "longest wake-up of an idle thread parked 0.2 ms (process hiccups): %.1f ms%n",
                    monitor.longestWakeNanos / 1e6);
            if (sampler.isAlive()) {
                sampler.stop = true;
                sampler.join();
                sampler.print();
            }
            System.out.printf(Locale.ROOT, "%s: %d puts of %d B, memtable flushed at %d MiB, %d flushes seen%n",
                    provider, puts, valueBytes, mb, windows.size());
        } finally {
            if (provider.equals("memory")) {
                InMemoryStorage.dropNamed(uri.substring("memory:".length()));
            }
        }
        long[] in = new long[puts];
        long[] out = new long[puts];
        int nIn = 0;
        int nOut = 0;
        for (int i = 0; i < puts; i++) {
            long s = startNanos[i];
            long e = s + tookNanos[i];
            boolean during = false;
            for (long[] w : windows) {
                if (s < w[1] && e > w[0]) {
                    during = true;
                    break;
                }
            }
            if (during) {
                in[nIn++] = tookNanos[i];
            } else {
                out[nOut++] = tookNanos[i];
            }
        }
        for (long[] w : windows) {
            System.out.printf(Locale.ROOT, "flush window %.1f ms%n", (w[1] - w[0]) / 1e6);
        }
        double p99Out = print("puts outside a flush", out, nOut);
        double maxIn = print("puts during a flush ", in, nIn);
        System.out.printf(Locale.ROOT, "longest put during a flush / p99 put outside: %.1fx%n", maxIn / p99Out);
    }

    /** @return p99 for the "outside" call, max for the "during" one, microseconds */
    private static double print(String what, long[] a, int n) {
        if (n == 0) {
            System.out.println(what + ": none");
            return Double.NaN;
        }
        long[] s = Arrays.copyOf(a, n);
        Arrays.sort(s);
        double p50 = s[(int) (n * 0.50)] / 1e3;
        double p99 = s[Math.min(n - 1, (int) (n * 0.99))] / 1e3;
        double p999 = s[Math.min(n - 1, (int) (n * 0.999))] / 1e3;
        double max = s[n - 1] / 1e3;
        System.out.printf(Locale.ROOT, "%s: %,d puts, p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us%n",
                what, n, p50, p99, p999, max);
        return what.startsWith("puts outside") ? p99 : max;
    }

    /**
     * Samples the writer's stack every 0.5 ms while one put has run longer than {@value #SLOW_PUT_MS} ms, and prints
     * the most frequent top frames of those samples: where the long puts wait.
     */
    private static final class StallSampler extends Thread {
        private static final long SLOW_PUT_MS = 5;
        private final Thread writer;
        private final java.util.Map<String, Integer> stacks = new java.util.HashMap<>();
        private int samples;
        volatile long putStartedNanos;
        volatile boolean stop;

        StallSampler(Thread writer) {
            super("flush-stall-sampler");
            setDaemon(true);
            this.writer = writer;
        }

        @Override
        public void run() {
            while (!stop) {
                long started = putStartedNanos;
                if (started != 0 && System.nanoTime() - started > SLOW_PUT_MS * 1_000_000) {
                    StackTraceElement[] st = writer.getStackTrace();
                    if (putStartedNanos == started) {
                        StringBuilder b = new StringBuilder();
                        for (int i = 0; i < Math.min(8, st.length); i++) {
                            b.append(i == 0 ? "" : " < ").append(st[i].getClassName().replaceAll(".*\\.", ""))
                                    .append('.').append(st[i].getMethodName()).append(':').append(st[i].getLineNumber());
                        }
                        stacks.merge(b.toString(), 1, Integer::sum);
                        samples++;
                    }
                }
                java.util.concurrent.locks.LockSupport.parkNanos(500_000);
            }
        }

        void print() {
            System.out.printf(Locale.ROOT, "writer samples inside puts longer than %d ms: %d%n", SLOW_PUT_MS, samples);
            stacks.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(8)
                    .forEach(e -> System.out.printf(Locale.ROOT, "  %5d %s%n", e.getValue(), e.getKey()));
        }
    }

    /** Polls the flush timer; a change of its count ends a window that began its duration earlier. */
    private static final class Monitor extends Thread {
        private final SimpleMeterRegistry registry;
        private final List<long[]> windows;
        volatile boolean stop;
        /** The longest this thread, which does nothing on the write path, took to wake from a 0.2 ms park. */
        volatile long longestWakeNanos;

        Monitor(SimpleMeterRegistry registry, List<long[]> windows) {
            super("flush-stall-monitor");
            setDaemon(true);
            this.registry = registry;
            this.windows = windows;
        }

        @Override
        public void run() {
            long count = 0;
            double total = 0;
            while (!stop) {
                Timer t = registry.find("lattice.flush.duration").timer();
                if (t != null && t.count() != count) {
                    long now = System.nanoTime();
                    double totalNow = t.totalTime(TimeUnit.NANOSECONDS);
                    long took = (long) ((totalNow - total) / (t.count() - count));
                    // more than one flush between two polls cannot happen with one partition and MB-sized memtables
                    windows.add(new long[] {now - took - 200_000, now});
                    count = t.count();
                    total = totalNow;
                }
                long parked = System.nanoTime();
                java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                longestWakeNanos = Math.max(longestWakeNanos, System.nanoTime() - parked);
            }
        }
    }
}
