package dev.lattice.bench.lsm;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Aggregates the execution samples ({@code jdk.ExecutionSample}) of JFR recordings, e.g. those of
 * {@code LargeTreeHarness --jfr DIR} (not part of the product): prints the share of samples per thread name (digits
 * removed, so a pool's threads add up), the top frames by self samples and the top frames by inclusive samples
 * (a frame counted once per sample however often it recurs in the stack), each as count and percent of all samples.
 *
 * <p>Usage: {@code JfrTop [--top N] [--skip METHOD_SUBSTRING] [--phase NAME=METHOD_SUBSTRING]... FILE.jfr...};
 * {@code --skip} drops samples whose stack holds a frame containing one of its comma-separated strings (default
 * {@code startJfr,threadCpuTicks,processCpuNanos}: the open child's own recording start-up and CPU readings, which
 * fall inside the recording but outside the timed open); each {@code --phase} (in the order given, the first that matches wins)
 * counts the samples whose stack holds a frame containing its string, the rest are {@code other}. Frames are
 * {@code package.Class.method}. Not thread-safe.
 */
public final class JfrTop {

    private JfrTop() {
    }

    /**
     * @param args see the class comment
     * @throws UncheckedIOException if a recording cannot be read
     */
    public static void main(String[] args) {
        int top = 30;
        String skip = "startJfr,threadCpuTicks,processCpuNanos";
        List<Path> files = new ArrayList<>();
        Map<String, String> phases = new java.util.LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--top")) {
                top = Integer.parseInt(args[++i]);
            } else if (args[i].equals("--skip")) {
                skip = args[++i];
            } else if (args[i].equals("--phase")) {
                String[] kv = args[++i].split("=", 2);
                phases.put(kv[0], kv[1]);
            } else {
                files.add(Path.of(args[i]));
            }
        }
        Map<String, Integer> threads = new HashMap<>();
        Map<String, Integer> self = new HashMap<>();
        Map<String, Integer> inclusive = new HashMap<>();
        Map<String, Integer> byPhase = new java.util.LinkedHashMap<>();
        phases.keySet().forEach(k -> byPhase.put(k, 0));
        byPhase.put("other", 0);
        int total = 0;
        for (Path f : files) {
            List<RecordedEvent> events;
            try {
                events = RecordingFile.readAllEvents(f);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + f, e);
            }
            for (RecordedEvent e : events) {
                if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
                    continue;
                }
                RecordedStackTrace st = e.getStackTrace();
                if (st == null || st.getFrames().isEmpty()) {
                    continue;
                }
                List<String> frames = new ArrayList<>();
                boolean skipped = false;
                for (RecordedFrame fr : st.getFrames()) {
                    String name = fr.getMethod().getType().getName() + "." + fr.getMethod().getName();
                    for (String sk : skip.split(",")) {
                        skipped |= name.contains(sk);
                    }
                    frames.add(name);
                }
                if (skipped) {
                    continue;
                }
                total++;
                String thread = e.getThread("sampledThread") == null ? "?"
                        : String.valueOf(e.getThread("sampledThread").getJavaName()).replaceAll("[0-9]+", "N");
                threads.merge(thread, 1, Integer::sum);
                self.merge(frames.get(0), 1, Integer::sum);
                Set<String> seen = new HashSet<>(frames);
                for (String fr : seen) {
                    inclusive.merge(fr, 1, Integer::sum);
                }
                String phase = "other";
                for (Map.Entry<String, String> p : phases.entrySet()) {
                    if (seen.stream().anyMatch(fr -> fr.contains(p.getValue()))) {
                        phase = p.getKey();
                        break;
                    }
                }
                byPhase.merge(phase, 1, Integer::sum);
            }
        }
        System.out.println("samples " + total + " in " + files.size() + " recording(s)");
        if (!phases.isEmpty()) {
            System.out.println("--- phases");
            int all = total;
            byPhase.forEach((k, v) -> System.out.printf(java.util.Locale.ROOT, "%6d %5.1f%% %s%n", v,
                    100.0 * v / Math.max(1, all), k));
        }
        print("threads", threads, top, total);
        print("self", self, top, total);
        print("inclusive", inclusive, top, total);
    }

    private static void print(String title, Map<String, Integer> counts, int top, int total) {
        System.out.println("--- " + title);
        counts.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(top)
                .forEach(e -> System.out.printf(java.util.Locale.ROOT, "%6d %5.1f%% %s%n", e.getValue(),
                        100.0 * e.getValue() / Math.max(1, total), e.getKey()));
    }
}
