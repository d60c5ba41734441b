package dev.lattice.engine.compat;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Writes the fixture that {@code LegacyFormatOpenTest} opens: a Chronicle directory written by the release before
 * runs (checkpoint format 2, whole-partition snapshots), with a log tail after the last checkpoint, then halts
 * without a clean close. Run once by hand with the old code; kept to document how the fixture was made:
 * {@code java -cp ... dev.lattice.engine.compat.LegacyFixtureWriter DIR}. It writes {@code DIR/data} and the
 * expected contents in {@code DIR/expected.tsv} (tree, key, value).
 */
public final class LegacyFixtureWriter {

    private LegacyFixtureWriter() {
    }

    /**
     * Writes the fixture and halts the JVM.
     *
     * @param args the output directory
     * @throws IOException if the expected contents cannot be written
     */
    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[0]);
        Map<String, String> a = new TreeMap<>();
        Map<String, String> b = new TreeMap<>();
        Random r = new Random(2026);
        Lattice l = Lattice.open(LatticeConfig.builder().uri("chronicle:" + out.resolve("data"))
                .partitions(4).checkpointEveryEntries(700).build());
        Tree ta = l.tree("legacy");
        Tree tb = l.tree("other");
        for (int i = 0; i < 5_000; i++) {
            String k = "k" + r.nextInt(1_500);
            if (r.nextInt(10) < 8) {
                String v = "v" + i;
                ta.put(k, v.getBytes(StandardCharsets.UTF_8));
                a.put(k, v);
            } else {
                ta.delete(k);
                a.remove(k);
            }
            if (i % 500 == 0) {
                Map<String, byte[]> batch = new TreeMap<>();
                for (int j = 0; j < 5; j++) {
                    String key = "atomic-" + i + "-" + j;
                    batch.put(key, ("x" + i).getBytes(StandardCharsets.UTF_8));
                    a.put(key, "x" + i);
                }
                ta.putAllAtomic(batch);
                String ok = "cross-" + i;
                l.atomic().put(ta, ok, "c".getBytes(StandardCharsets.UTF_8))
                        .put(tb, ok, "d".getBytes(StandardCharsets.UTF_8)).commit();
                a.put(ok, "c");
                b.put(ok, "d");
            }
        }
        Files.createDirectories(out);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("expected.tsv")))) {
            a.forEach((k, v) -> w.println("legacy\t" + k + "\t" + v));
            b.forEach((k, v) -> w.println("other\t" + k + "\t" + v));
        }
        Runtime.getRuntime().halt(0);
    }
}
