package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.LongFunction;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Checks shared by the read-only instance tests. */
final class ReadOnlyChecks {

    private ReadOnlyChecks() {
    }

    /**
     * Every file and directory under a root with its size and modification time (nanosecond precision where the
     * file system has it).
     *
     * @param root the directory
     * @return relative path to "d" for a directory, "size@mtime" for a file
     */
    static TreeMap<String, String> snapshot(Path root) {
        TreeMap<String, String> m = new TreeMap<>();
        if (!Files.exists(root)) {
            return m;
        }
        try (Stream<Path> s = Files.walk(root)) {
            s.forEach(p -> {
                try {
                    m.put(root.relativize(p).toString(), Files.isDirectory(p) ? "d"
                            : Files.size(p) + "@" + Files.getLastModifiedTime(p).toInstant());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return m;
    }

    /**
     * Asserts that this JVM holds no writable mapping and no file descriptor opened for writing of a file under
     * {@code root} (Linux {@code /proc/self/maps} and {@code /proc/self/fdinfo}).
     *
     * @param root the directory
     * @return how many read-only mappings and descriptors of files under it were seen (so a caller can check the
     *     probe saw something)
     */
    static int assertNothingOpenForWriting(Path root) throws IOException {
        String prefix = root.toRealPath().toString() + "/";
        int seen = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            int at = line.indexOf(prefix);
            if (at < 0) {
                continue;
            }
            String perms = line.split("\\s+")[1];
            assertThat(perms).as("mapping of %s", line.substring(at)).doesNotContain("w");
            seen++;
        }
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                String target;
                List<String> info;
                try {
                    target = Files.readSymbolicLink(fd).toString();
                    if (!target.startsWith(prefix)) {
                        continue;
                    }
                    info = Files.readAllLines(Path.of("/proc/self/fdinfo").resolve(fd.getFileName()));
                } catch (IOException e) {
                    continue; // closed meanwhile
                }
                for (String l : info) {
                    if (l.startsWith("flags:")) {
                        int flags = Integer.parseInt(l.substring(6).trim(), 8);
                        assertThat(flags & 3).as("access mode of descriptor on %s (0 = read only)", target)
                                .isZero();
                        seen++;
                    }
                }
            }
        }
        return seen;
    }

    /**
     * Reads everything after {@code from} up to the committed tail the reads report, in pages of {@code page}
     * entries, and checks every entry: dense from {@code max(from, trimWatermark) + 1}, payload as derived.
     *
     * @param p the provider
     * @param log the log
     * @param from read after this offset
     * @param watermark the trim watermark seen before, entries at or below it are not expected
     * @param page entries per page
     * @param payload the payload of an offset
     * @param tails receives every committed tail a page reported
     * @return the last offset read, or {@code max(from, watermark)} when nothing was read
     */
    static long readAll(WalStorageProvider p, LogId log, long from, long watermark, int page,
            LongFunction<byte[]> payload, List<Long> tails) {
        long expect = Math.max(from, watermark) + 1;
        long cursor = from;
        for (int guard = 0; guard < 100_000; guard++) {
            ReadPage r = p.read(log, cursor, page, 1 << 20);
            tails.add(r.committedTail());
            if (r.isEmpty()) {
                return expect - 1;
            }
            List<LogEntry> es = r.entries();
            if (es.get(0).offset() != expect) {
                // the writer trimmed since: the page starts above the new watermark, never below
                assertThat(es.get(0).offset()).as("first entry after a trim").isGreaterThan(expect);
                assertThat(p.state(log).trimWatermark()).isGreaterThanOrEqualTo(es.get(0).offset() - 1);
                expect = es.get(0).offset();
            }
            for (LogEntry e : es) {
                assertThat(e.offset()).as("dense").isEqualTo(expect);
                assertThat(e.payload()).as("payload of %s", e.offset()).isEqualTo(payload.apply(e.offset()));
                assertThat(e.offset()).as("at most the page's committed tail").isLessThanOrEqualTo(r.committedTail());
                expect++;
            }
            cursor = expect - 1;
        }
        throw new AssertionError("reader made no end");
    }

    /** @return a new list */
    static List<Long> tails() {
        return new ArrayList<>();
    }
}
