package dev.lattice.cluster;

import dev.lattice.engine.Versioned;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** The fault test's checker finds what it must find: it is given histories with each kind of violation. */
class HistoryCheckTest {

    private static Optional<Versioned> v(String value, long version) {
        return Optional.of(new Versioned(value.getBytes(StandardCharsets.UTF_8), version));
    }

    private static HistoryCheck run(Path dir, String history, Map<String, Optional<Versioned>> finals)
            throws Exception {
        Path f = dir.resolve("h");
        Files.writeString(f, history.replace('|', '\t'));
        HistoryCheck c = new HistoryCheck();
        c.load(f);
        c.check(k -> finals.getOrDefault(k, Optional.empty()), List.of("k1"), List.of("g1", "g2", "g3"));
        return c;
    }

    private static final Map<String, Optional<Versioned>> GROUP = Map.of("g1", v("a1", 5), "g2", v("a1", 5),
            "g3", v("a1", 5));

    private static Map<String, Optional<Versioned>> with(String k, Optional<Versioned> v) {
        java.util.HashMap<String, Optional<Versioned>> m = new java.util.HashMap<>(GROUP);
        m.put(k, v);
        return m;
    }

    private static final String ATOMIC = "S|a1|atomic|g1|0|1|a1\nE|a1|OK|2|5\n";

    @Test
    void aCleanHistoryPasses(@TempDir Path dir) throws Exception {
        HistoryCheck c = run(dir, ATOMIC + "S|w1|put|k1|0|10|w1\nE|w1|OK|20|100\nR|k1|0|30|40|100|w1\n",
                with("k1", v("w1", 100)));
        assertThat(c.violations).isEmpty();
    }

    @Test
    void aStaleReadIsFound(@TempDir Path dir) throws Exception {
        HistoryCheck c = run(dir, ATOMIC + "S|w0|put|k1|0|1|w0\nE|w0|OK|2|50\nS|w1|put|k1|0|10|w1\nE|w1|OK|20|100\n"
                + "R|k1|0|30|40|50|w0\n", with("k1", v("w1", 100)));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).startsWith("stale read of k1"));
    }

    @Test
    void aReadOlderThanAnEarlierReadIsFound(@TempDir Path dir) throws Exception {
        HistoryCheck c = run(dir, ATOMIC + "S|w0|put|k1|0|1|w0\nE|w0|UNKNOWN|2|0\nS|w1|put|k1|0|3|w1\n"
                + "E|w1|UNKNOWN|4|0\nR|k1|0|30|40|100|w1\nR|k1|0|50|60|50|w0\n", with("k1", v("w1", 100)));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).contains("after a read that ended earlier"));
    }

    @Test
    void aLostAcknowledgedWriteIsFound(@TempDir Path dir) throws Exception {
        HistoryCheck c = run(dir, ATOMIC + "S|w0|put|k1|0|1|w0\nE|w0|OK|2|50\nS|w1|put|k1|0|10|w1\nE|w1|OK|20|100\n",
                with("k1", v("w0", 50)));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).contains("older than the acknowledged 100"));
    }

    @Test
    void aFailedWriteThatLandedIsFound(@TempDir Path dir) throws Exception {
        HistoryCheck c = run(dir, ATOMIC + "S|w1|put|k1|0|10|w1\nE|w1|FAIL|20|0\nR|k1|0|30|40|7|w1\n",
                with("k1", v("w1", 7)));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).contains("reported FAIL"));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).startsWith("read of k1 returned the write w1"));
    }

    @Test
    void aPartialAtomicGroupIsFound(@TempDir Path dir) throws Exception {
        Map<String, Optional<Versioned>> finals = new java.util.HashMap<>(GROUP);
        finals.put("g3", v("a0", 3));
        finals.put("k1", Optional.empty());
        HistoryCheck c = run(dir, ATOMIC + "G|1|2|a1|a1|a0\n", finals);
        assertThat(c.violations).anySatisfy(s -> assertThat(s).contains("partial at the end"));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).contains("getAll saw the atomic group partial"));
    }

    @Test
    void aValueNobodyWroteIsFound(@TempDir Path dir) throws Exception {
        HistoryCheck c = run(dir, ATOMIC, with("k1", v("invented", 9)));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).contains("never written"));
    }

    @Test
    void aWideWriteSeenPartiallyIsFound(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("h");
        Files.writeString(f, ("S|x1|wide|w-0|0|1|x1\nE|x1|OK|2|9\nS|x0|wide|w-0|0|0|x0\nE|x0|OK|1|5\n"
                + "M|x1|9|x0|5|x1|9\n").replace('|', '\t'));
        HistoryCheck c = new HistoryCheck();
        c.load(f);
        c.checkWide(k -> k.equals("w-2") ? v("x0", 5) : v("x1", 9), List.of("w-0", "w-1", "w-2"));
        assertThat(c.wideAnomalies).anySatisfy(s -> assertThat(s).contains("went back"));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).contains("wide atomic group is partial"));
    }

    @Test
    void aGetAllThatSawAWideWritePartiallyIsFound(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("h");
        Files.writeString(f, ("S|x1|wide|w-0|0|1|x1\nE|x1|OK|2|9\nS|x0|wide|w-0|0|0|x0\nE|x0|OK|1|5\n"
                + "X|3|4|x1|x0|x1\n").replace('|', '\t'));
        HistoryCheck c = new HistoryCheck();
        c.load(f);
        c.checkWide(k -> v("x1", 9), List.of("w-0", "w-1", "w-2"));
        assertThat(c.violations).anySatisfy(s -> assertThat(s).contains("getAll saw the wide group partial"));
    }

    @Test
    void aScanThatSawAWideWritePartiallyIsFound(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("h");
        Files.writeString(f, ("S|x1|wide|w-0|0|1|x1\nE|x1|OK|2|9\nS|x0|wide|w-0|0|0|x0\nE|x0|OK|1|5\n"
                + "Y|3|4|x1|x1|x1\nY|5|6|x1|-|x1\n").replace('|', '\t'));
        HistoryCheck c = new HistoryCheck();
        c.load(f);
        c.checkWide(k -> v("x1", 9), List.of("w-0", "w-1", "w-2"));
        assertThat(c.wideScans).hasSize(2);
        assertThat(c.violations).singleElement().satisfies(s -> assertThat(s).contains("scan saw the wide group partial")
                .contains("x1,-,x1"));
    }
}
