package dev.lattice.engine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kills a writing child JVM with SIGKILL at random moments, then reopens the tree: every acknowledged write must be
 * there (or a later write to the same key that was in flight), replay never fails, and writing continues. Rounds:
 * {@code -Dlattice.killtest.rounds=N} (default 8 for CI; use 100+ for a soak).
 */
class ProcessKillTest {

    @TempDir
    Path dir;

    @Test
    void acknowledgedWritesSurviveSigkill() throws Exception {
        int rounds = Integer.getInteger("lattice.killtest.rounds", 8);
        Random random = new Random(Long.getLong("lattice.killtest.seed", 7L));
        Path data = dir.resolve("lattice");
        // per thread: last acknowledged i per key, and the highest acknowledged i overall
        Map<String, Long> lastAcked = new HashMap<>();
        long[] maxAcked = new long[KillTestWriter.THREADS];
        java.util.Arrays.fill(maxAcked, -1);
        // per thread: the highest write number that may be in the store (acknowledged or in flight at a kill)
        long[] bound = new long[KillTestWriter.THREADS];
        java.util.Arrays.fill(bound, -1);
        int totalAcks = 0;
        for (int round = 0; round < rounds; round++) {
            long[] start = new long[bound.length];
            for (int t = 0; t < start.length; t++) {
                start[t] = bound[t] + 1;
            }
            Process p = startChild(data, start);
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            assertThat(line).as("child started (round %d)", round).isEqualTo("READY");
            int target = 200 + random.nextInt(3_000);
            int acks = 0;
            List<String> lines = new ArrayList<>();
            while (acks < target && (line = out.readLine()) != null) {
                lines.add(line);
                acks++;
            }
            p.toHandle().destroyForcibly(); // SIGKILL on Linux; unlike Process.destroyForcibly it keeps our pipe open
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            while ((line = out.readLine()) != null) { // whatever it printed before dying was acknowledged
                lines.add(line);
            }
            assertThat(lines).as("child wrote before the kill (round %d)", round).isNotEmpty();
            for (String l : lines) {
                if (!l.startsWith("ACK ")) {
                    continue;
                }
                String[] f = l.split(" ");
                int thread = Integer.parseInt(f[1]);
                long i = Long.parseLong(f[2]);
                lastAcked.merge(f[3], i, Math::max);
                maxAcked[thread] = Math.max(maxAcked[thread], i);
                totalAcks++;
            }
            for (int t = 0; t < bound.length; t++) {
                bound[t] = Math.max(bound[t], Math.max(start[t], maxAcked[t] + 1));
            }
            verify(data, lastAcked, bound);
        }
        assertThat(totalAcks).isGreaterThan(rounds * 100);
    }

    private static void verify(Path data, Map<String, Long> lastAcked, long[] bound) {
        try (Lattice l = Lattice.open(LatticeConfig.builder().uri("chronicle:" + data).build())) {
            Tree t = l.tree("kill");
            assertThat(t.partitions()).isEqualTo(4);
            lastAcked.forEach((key, acked) -> {
                String v = t.get(key).map(b -> new String(b, StandardCharsets.UTF_8)).orElse(null);
                assertThat(v).as("acknowledged key %s (last acked write %d) after kill", key, acked).isNotNull();
                String[] f = v.split(":");
                int thread = Integer.parseInt(f[0]);
                long i = Long.parseLong(f[1]);
                assertThat(i).as("key %s holds write %d, acked %d", key, i, acked).isGreaterThanOrEqualTo(acked);
                // anything newer than the last ack can only be the one write the thread had in flight
                assertThat(i).as("key %s holds unacknowledged write %d", key, i)
                        .isLessThanOrEqualTo(bound[thread]);
            });
            t.put("after-kill", new byte[] {1});
            assertThat(t.get("after-kill")).isPresent();
            t.delete("after-kill");
        }
    }

    private static Process startChild(Path data, long[] start) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("--add-opens") || arg.startsWith("--add-exports") || arg.startsWith("-Dchronicle")) {
                cmd.add(arg);
            }
        }
        cmd.add("-Xmx256m");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(KillTestWriter.class.getName());
        cmd.add(data.toString());
        for (long first : start) {
            cmd.add(Long.toString(first));
        }
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }
}
