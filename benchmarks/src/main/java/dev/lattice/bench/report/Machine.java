package dev.lattice.bench.report;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/** One line about the machine a measurement ran on: cores, load average, JVM. */
public final class Machine {

    private Machine() {
    }

    /** @return the 1-minute load average, or NaN where the OS does not report it */
    public static double loadAverage() {
        double l = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return l < 0 ? Double.NaN : l;
    }

    /** @return e.g. {@code 2 cores, load average 3.1, JVM 17.0.15, max heap 6,144 MiB} */
    public static String describe() {
        return String.format(Locale.ROOT, "%d cores, load average %.1f, JVM %s, max heap %,d MiB",
                Runtime.getRuntime().availableProcessors(), loadAverage(), System.getProperty("java.version"),
                Runtime.getRuntime().maxMemory() >> 20);
    }
}
