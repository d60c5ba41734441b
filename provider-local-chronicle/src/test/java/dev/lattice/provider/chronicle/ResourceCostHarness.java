package dev.lattice.provider.chronicle;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageProvider;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Measures what open logs cost (not a test): for several block sizes and 1, 10, 100 (and 300) logs, each claimed
 * and given 5 small appends, it prints the file descriptors ({@code /proc/self/fd}), the mappings and mapped
 * bytes of files under the provider's directory ({@code /proc/self/maps}), the process RSS change, and the disk
 * use ({@code du}) and apparent size of the directory. Linux only. Run it as described in
 * docs/providers/chronicle.md.
 */
public final class ResourceCostHarness {

    private ResourceCostHarness() {
    }

    /**
     * Entry point.
     *
     * @param args optional: block sizes (e.g. {@code 1m 16m 64m}) to measure
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        List<String> blocks = args.length > 0 ? List.of(args) : List.of("1m", "16m", "64m");
        measure("1m", 3, false); // warm-up: class loading and Chronicle's own start-up files are not per-log costs
        System.out.printf("%-6s %5s %9s %9s %12s %10s %10s %12s%n", "block", "logs", "fds", "mappings",
                "mapped MiB", "RSS MiB", "du MiB", "apparent MiB");
        for (String block : blocks) {
            for (int n : new int[]{1, 10, 100, 300}) {
                measure(block, n, true);
            }
        }
    }

    private static void measure(String block, int logs, boolean print) throws Exception {
        Path dir = Files.createTempDirectory("chronicle-cost");
        try {
            System.gc();
            long fd0 = fds();
            long rss0 = rssKb();
            ChronicleConfig config = ChronicleConfig.builder(dir)
                    .blockSize(ChronicleConfig.parseSize("blockSize", block)).build();
            try (WalStorageProvider p = ChronicleWalStorageProvider.open(config)) {
                for (int i = 0; i < logs; i++) {
                    LogId log = new LogId("cost", i);
                    Fence f = p.claim(log);
                    for (int k = 0; k < 5; k++) {
                        p.append(log, f, Payloads.smallBatch(k * 4L, 4));
                    }
                    p.read(log, -1, 100, Long.MAX_VALUE);
                }
                long[] maps = maps(dir.toRealPath().toString());
                if (!print) {
                    return;
                }
                System.out.printf("%-6s %5d %9d %9d %12.1f %10.1f %10.1f %12.1f%n", block, logs, fds() - fd0, maps[0],
                        maps[1] / 1048576.0, (rssKb() - rss0) / 1024.0, du(dir) / 1024.0, apparent(dir) / 1048576.0);
            }
        } finally {
            TestDirs.delete(dir);
        }
    }

    private static long fds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    private static long[] maps(String root) throws IOException {
        long n = 0;
        long bytes = 0;
        for (String l : Files.readAllLines(Path.of("/proc/self/maps"))) {
            if (!l.contains(root)) {
                continue;
            }
            String[] range = l.split("\\s+")[0].split("-");
            bytes += Long.parseUnsignedLong(range[1], 16) - Long.parseUnsignedLong(range[0], 16);
            n++;
        }
        return new long[]{n, bytes};
    }

    private static long rssKb() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("VmRSS:")) {
                return Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    private static long du(Path dir) throws Exception {
        Process p = new ProcessBuilder("du", "-sk", dir.toString()).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        p.waitFor();
        return Long.parseLong(out.split("\\s+")[0]);
    }

    private static long apparent(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        }
    }
}
