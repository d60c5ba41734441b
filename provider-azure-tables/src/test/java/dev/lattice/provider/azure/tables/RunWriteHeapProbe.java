package dev.lattice.provider.azure.tables;

import com.azure.data.tables.TableServiceClientBuilder;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageProvider;

import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

/**
 * Child-JVM probe for {@link RunWriteHeapTest} (and by hand): opens the provider through its factory, as the engine
 * does, and writes runs from several threads at once, each run streamed from a generator (the caller never holds a
 * run's bytes), then reads every run back and checks its CRC32C. Run it under a small {@code -Xmx} to see whether the
 * transient heap of concurrent run writes fits.
 *
 * <p>Arguments: connection string, table, threads, runs per thread, run size in KiB. The table is deleted at the end
 * (Azurite keeps tables in memory). Prints one last line:
 * {@code OK <write ms> <MB/s> <allocated bytes per written byte>} or {@code FAILED <what>} ({@code FAILED OOM ...}
 * for an {@link OutOfMemoryError}). Exit code 0 only for OK.
 */
public final class RunWriteHeapProbe {

    private RunWriteHeapProbe() {
    }

    /**
     * Runs the probe.
     *
     * @param args connection string, table, threads, runs per thread, run KiB
     */
    public static void main(String[] args) throws Exception {
        String connectionString = args[0];
        String table = args[1];
        int threads = Integer.parseInt(args[2]);
        int runsPerThread = Integer.parseInt(args[3]);
        long runBytes = Long.parseLong(args[4]) * 1024;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong workerAllocated = new AtomicLong();
        long written;
        long allocated;
        long nanos;
        try (WalStorageProvider wal = new AzureTablesProviderFactory().open(URI.create("azure-tables:" + table),
                Map.of("connectionString", connectionString))) {
            RunStore runs = wal.runs();
            List<Thread> workers = new ArrayList<>();
            List<Fence> fences = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                fences.add(wal.claim(new LogId("heap", t)));
            }
            long allocBefore = allocatedByAllThreads();
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                Thread w = new Thread(() -> {
                    try {
                        long own = threadAllocated();
                        for (int r = 0; r < runsPerThread; r++) {
                            LogId log = new LogId("heap", thread);
                            RunInfo info = runs.write(log, fences.get(thread), new RunId("run-" + r),
                                    new Generated(seed(thread, r), runBytes), runBytes);
                            if (info.lengthBytes() != runBytes) {
                                throw new IllegalStateException("wrote " + info);
                            }
                        }
                        workerAllocated.addAndGet(threadAllocated() - own);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "run-writer-" + t);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join();
            }
            nanos = System.nanoTime() - start;
            allocated = allocatedByAllThreads() - allocBefore + workerAllocated.get();
            written = threads * runsPerThread * runBytes;
            if (failure.get() == null) {
                verify(runs, threads, runsPerThread, runBytes);
            }
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
            written = 0;
            allocated = 0;
            nanos = 1;
        }
        try {
            new TableServiceClientBuilder().connectionString(connectionString).buildClient().deleteTable(table);
        } catch (RuntimeException | OutOfMemoryError e) {
            // the emulator keeps tables in memory: best effort
        }
        Throwable f = failure.get();
        if (f != null) {
            System.out.println("FAILED " + (oom(f) ? "OOM " : "") + f);
            System.exit(1);
        }
        double ms = nanos / 1e6;
        System.out.printf("OK %.0f %.1f %.2f%n", ms, written / 1e6 / (ms / 1000), (double) allocated / written);
        System.exit(0);
    }

    private static void verify(RunStore runs, int threads, int runsPerThread, long runBytes) {
        byte[] buf = new byte[runs.limits().preferredReadBytes()]; // one chunk row per read
        for (int t = 0; t < threads; t++) {
            for (int r = 0; r < runsPerThread; r++) {
                LogId log = new LogId("heap", t);
                RunId id = new RunId("run-" + r);
                CRC32C crc = new CRC32C();
                long pos = 0;
                while (pos < runBytes) {
                    int n = runs.read(log, id, pos, buf, 0, (int) Math.min(buf.length, runBytes - pos));
                    crc.update(buf, 0, n);
                    pos += n;
                }
                CRC32C want = new CRC32C();
                Generated g = new Generated(seed(t, r), runBytes);
                int n;
                while ((n = g.read(buf, 0, buf.length)) > 0) {
                    want.update(buf, 0, n);
                }
                if (crc.getValue() != want.getValue()) {
                    throw new IllegalStateException("run " + id + " of " + log + " reads back other bytes");
                }
            }
        }
    }

    private static long seed(int thread, int run) {
        return thread * 1_000_003L + run;
    }

    private static boolean oom(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof OutOfMemoryError) {
                return true;
            }
        }
        return false;
    }

    private static long allocatedByAllThreads() {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long a : mx.getThreadAllocatedBytes(mx.getAllThreadIds())) {
            sum += Math.max(0, a);
        }
        return sum;
    }

    private static long threadAllocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    /** Deterministic incompressible bytes of a given length, generated as read (nothing held). */
    static final class Generated extends InputStream {
        private final SplittableRandom random;
        private long left;

        Generated(long seed, long length) {
            this.random = new SplittableRandom(seed);
            this.left = length;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left == 0) {
                return -1;
            }
            int n = (int) Math.min(len, left);
            for (int i = 0; i < n; i++) {
                b[off + i] = (byte) random.nextInt(256);
            }
            left -= n;
            return n;
        }
    }
}
