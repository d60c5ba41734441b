package dev.lattice.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Voluntary context switches (a thread blocked: park, wait, I/O) of this process's threads, from Linux's
 * {@code /proc/self/task/<tid>/status}. A put path that hands each write from thread to thread shows several per
 * operation; one that runs in the caller shows close to none. Linux only; elsewhere every count is -1. Thread-safe.
 */
public final class ContextSwitches {

    private static final Path TASKS = Path.of("/proc/self/task");

    private ContextSwitches() {
    }

    /** @return voluntary context switches of the calling thread so far, or -1 where unknown */
    public static long currentThread() {
        return read(Path.of("/proc/thread-self/status"));
    }

    /** @return voluntary context switches so far per live thread id of this process (empty where unknown) */
    public static Map<String, Long> perThread() {
        Map<String, Long> out = new HashMap<>();
        if (!Files.isDirectory(TASKS)) {
            return out;
        }
        try (Stream<Path> s = Files.list(TASKS)) {
            s.forEach(t -> {
                long v = read(t.resolve("status"));
                if (v >= 0) {
                    out.put(t.getFileName().toString(), v);
                }
            });
        } catch (IOException e) {
            return out;
        }
        return out;
    }

    /**
     * @param before a {@link #perThread()} snapshot
     * @param after a later one
     * @return the switches between the two of the threads alive at {@code after} (a thread born in between counts
     *     from 0; threads that ended in between are not counted: callers add those themselves)
     */
    public static long delta(Map<String, Long> before, Map<String, Long> after) {
        long sum = 0;
        for (Map.Entry<String, Long> e : after.entrySet()) {
            sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        return sum;
    }

    private static long read(Path status) {
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
