package dev.lattice.bench.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** CPU time of this process, to tell a CPU-bound result from one that waits (on fsync, on a lock). */
public final class Cpu {

    private Cpu() {
    }

    /** @return CPU time used by this process so far (all threads, user + system), nanoseconds; -1 if unknown */
    public static long processNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /**
     * The whole machine's CPU time so far, from Linux's {@code /proc/stat} (all processes, not only this one): on a
     * shared machine this tells "the CPU was full" from "this process waited".
     *
     * @return {busy, total} clock ticks since boot (busy = total minus idle and iowait), or {-1, -1} where unknown
     */
    public static long[] machineTicks() {
        try {
            String first = Files.readAllLines(Path.of("/proc/stat")).get(0);
            String[] f = first.trim().split("\\s+");
            long total = 0;
            // user nice system idle iowait irq softirq steal; guest time is already inside user
            for (int i = 1; i < Math.min(f.length, 9); i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + (f.length > 5 ? Long.parseLong(f[5]) : 0);
            return new long[] {total - idle, total};
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
    }

    /**
     * @param before a {@link #machineTicks()} reading
     * @param after a later one
     * @return the fraction of the machine's CPU time that was busy in between (0..1), NaN if unknown
     */
    public static double machineBusy(long[] before, long[] after) {
        long total = after[1] - before[1];
        return before[0] < 0 || after[0] < 0 || total <= 0 ? Double.NaN : (double) (after[0] - before[0]) / total;
    }

    /**
     * @param cpuNanos CPU time used over an interval
     * @param wallNanos the interval's wall time
     * @return cores kept busy on average (CPU time / wall time), NaN if unknown
     */
    public static double cores(long cpuNanos, long wallNanos) {
        return cpuNanos < 0 || wallNanos <= 0 ? Double.NaN : (double) cpuNanos / wallNanos;
    }
}
