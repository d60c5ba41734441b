package dev.lattice.bench.peer;

import dev.lattice.bench.report.ContextSwitches;
import dev.lattice.bench.report.Cpu;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The direct put/get harness: {@code threads} closed-loop threads call the store's own {@code put} (distinct keys)
 * and then {@code get} (uniformly random keys among those written), no YCSB in between. Latency of every call is
 * recorded in an HdrHistogram (nanoseconds, 3 significant digits); throughput is calls over the phase's wall time.
 * Not thread-safe (one run at a time).
 */
public final class DirectHarness {

    private DirectHarness() {
    }

    /**
     * One phase's figures.
     *
     * @param operation {@code put} or {@code get}
     * @param threads client threads
     * @param operations calls made
     * @param opsPerSecond calls per second of wall time
     * @param p50Us median latency, microseconds
     * @param p99Us 99th percentile latency, microseconds
     * @param cpuCores CPU time of this process over the phase's wall time (2.0 = two cores busy)
     * @param switchesPerOp voluntary context switches of all this process's threads per operation (Linux; NaN
     *     elsewhere)
     */
    public record PhaseResult(String operation, int threads, long operations, double opsPerSecond, double p50Us,
                              double p99Us, double cpuCores, double switchesPerOp) {
    }

    /** A store operation that may throw. */
    @FunctionalInterface
    private interface Op {
        void run(int thread, long i, SplittableRandom random) throws Exception;
    }

    /**
     * The key of the {@code i}-th record, like YCSB's hashed keys (so writes are spread over the key space).
     *
     * @param i the record number
     * @return the key
     */
    public static String key(long i) {
        long h = 0xcbf29ce484222325L;
        for (int b = 0; b < 8; b++) {
            h ^= (i >>> (8 * b)) & 0xff;
            h *= 0x100000001b3L;
        }
        return "user" + Long.toString(h & Long.MAX_VALUE);
    }

    /**
     * Runs the put phase then the get phase on an open store.
     *
     * @param store the store (empty)
     * @param threads client threads, >= 1
     * @param puts total puts (distinct keys 0..puts-1)
     * @param gets total gets
     * @param valueBytes value size
     * @return the put phase and the get phase
     * @throws IllegalStateException if a call failed (first failure as cause) or a get found no value
     */
    public static List<PhaseResult> run(KvStore store, int threads, int puts, int gets, int valueBytes) {
        byte[] value = new byte[valueBytes];
        new SplittableRandom(7).nextBytes(value);
        PhaseResult put = phase("put", threads, puts, (t, i, r) -> store.put(key(i), value));
        PhaseResult get = phase("get", threads, gets, (t, i, r) -> {
            if (store.get(key(r.nextInt(puts))) == null) {
                throw new IllegalStateException("a written key read as absent");
            }
        });
        return List.of(put, get);
    }

    private static PhaseResult phase(String name, int threads, int total, Op op) {
        List<Histogram> histograms = new ArrayList<>();
        java.util.concurrent.atomic.AtomicLong workerSwitches = new java.util.concurrent.atomic.AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Histogram h = new Histogram(3_600_000_000_000L, 3);
            histograms.add(h);
            int thread = t;
            Supplier<Runnable> body = () -> () -> {
                SplittableRandom random = new SplittableRandom(1000 + thread);
                long sw0 = -1;
                try {
                    start.await();
                    sw0 = ContextSwitches.currentThread();
                    for (long i = thread; i < total && failure.get() == null; i += threads) {
                        long t0 = System.nanoTime();
                        op.run(thread, i, random);
                        h.recordValue(System.nanoTime() - t0);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    long sw1 = ContextSwitches.currentThread();
                    if (sw0 >= 0 && sw1 >= 0) {
                        workerSwitches.addAndGet(sw1 - sw0);
                    }
                }
            };
            Thread w = new Thread(body.get(), "direct-" + name + "-" + t);
            workers.add(w);
            w.start();
        }
        java.util.Map<String, Long> others0 = ContextSwitches.perThread();
        long t0 = System.nanoTime();
        long cpu0 = Cpu.processNanos();
        start.countDown();
        for (Thread w : workers) {
            try {
                w.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        long wall = System.nanoTime() - t0;
        double cores = Cpu.cores(Cpu.processNanos() - cpu0, wall);
        java.util.Map<String, Long> others1 = ContextSwitches.perThread();
        // the workers have ended: their own counts came from themselves; the rest from the live threads
        double switches = others0.isEmpty() ? Double.NaN
                : (double) (ContextSwitches.delta(others0, others1) + workerSwitches.get()) / Math.max(1, total);
        if (failure.get() != null) {
            throw new IllegalStateException(name + " failed: " + failure.get(), failure.get());
        }
        Histogram all = new Histogram(3_600_000_000_000L, 3);
        histograms.forEach(all::add);
        return new PhaseResult(name, threads, all.getTotalCount(), all.getTotalCount() * 1e9 / wall,
                all.getValueAtPercentile(50) / 1e3, all.getValueAtPercentile(99) / 1e3, cores, switches);
    }
}
