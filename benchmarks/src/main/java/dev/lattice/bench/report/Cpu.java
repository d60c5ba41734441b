package dev.lattice.bench.report;

import java.lang.management.ManagementFactory;

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
     * @param cpuNanos CPU time used over an interval
     * @param wallNanos the interval's wall time
     * @return cores kept busy on average (CPU time / wall time), NaN if unknown
     */
    public static double cores(long cpuNanos, long wallNanos) {
        return cpuNanos < 0 || wallNanos <= 0 ? Double.NaN : (double) cpuNanos / wallNanos;
    }
}
