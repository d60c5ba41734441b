package dev.lattice.engine.compat;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Writes the fixtures that {@code OlderRunFormatsOpenTest} opens: a Chronicle directory holding values, tombstones,
 * a range delete and expiring values (a 100-year time-to-live) in several runs of each of 2 partitions, under
 * manifests, closed cleanly. Run once by hand with the code of the release before each run format change; kept to
 * document how the fixtures were made: {@code java -cp ... dev.lattice.engine.compat.RunFormat2FixtureWriter DIR},
 * then {@code cd DIR && zip -r run-format2-chronicle.zip data expected.tsv} (commit 619a775: runs of format 2, the
 * standard Bloom filter), and the same as {@code run-format3-chronicle.zip} (commit 4ab39ca: format 3, full last
 * keys and block positions in the index). It writes {@code DIR/data} and the expected
 * contents in {@code DIR/expected.tsv} (key, value) of the tree {@code runs2}.
 */
public final class RunFormat2FixtureWriter {

    private RunFormat2FixtureWriter() {
    }

    /**
     * Writes the fixture.
     *
     * @param args the output directory
     * @throws IOException if the expected contents cannot be written
     * @throws ReflectiveOperationException if the tree's flush cannot be called
     */
    public static void main(String[] args) throws IOException, ReflectiveOperationException {
        Path out = Path.of(args[0]);
        Map<String, String> model = new TreeMap<>();
        Random r = new Random(2027);
        try (Lattice l = Lattice.open(LatticeConfig.builder().uri("chronicle:" + out.resolve("data"))
                .partitions(2).memtableBytes(64 << 10).targetRunBytes(64 << 10).level0CompactionTrigger(64)
                .build())) {
            Tree t = l.tree("runs2");
            java.lang.reflect.Method flush = t.getClass().getDeclaredMethod("flushNow", long.class);
            flush.setAccessible(true);
            for (int round = 0; round < 6; round++) {
                for (int i = 0; i < 1_000; i++) {
                    String k = String.format("k%05d", r.nextInt(4_000));
                    int what = r.nextInt(20);
                    if (what < 15) {
                        String v = "v" + round + "-" + i + "-" + "x".repeat(r.nextInt(40));
                        t.put(k, v.getBytes(StandardCharsets.UTF_8));
                        model.put(k, v);
                    } else if (what < 17) {
                        String v = "ttl" + round + "-" + i;
                        t.put(k, v.getBytes(StandardCharsets.UTF_8), Duration.ofDays(36_500));
                        model.put(k, v);
                    } else {
                        t.delete(k);
                        model.remove(k);
                    }
                }
                if (round == 3) {
                    t.deleteRange("k01000", "k01100");
                    model.keySet().removeIf(k -> k.compareTo("k01000") >= 0 && k.compareTo("k01100") < 0);
                }
                if (!(Boolean) flush.invoke(t, 60_000L)) {
                    throw new IllegalStateException("flush timed out");
                }
            }
        }
        Files.createDirectories(out);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("expected.tsv")))) {
            model.forEach((k, v) -> w.println(k + "\t" + v));
        }
    }
}
