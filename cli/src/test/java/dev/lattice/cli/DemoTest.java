package dev.lattice.cli;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code lattice demo} end to end: runs, reopens, verifies; and its verification does catch lost data. */
class DemoTest {

    @Test
    void demoRunsEndToEndOnMemoryAndVerifies() {
        Cli.Run r = Cli.run("demo", "--provider", Cli.freshMemoryUri(), "--duration", "1s", "--writers", "4",
                "--readers", "2", "--keys", "400", "--counters", "3", "--no-progress");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).as(r.toString())
                .contains("operations").contains("throughput").contains("write latency").contains("p99")
                .contains("WAL calls per entry").contains("replay").contains("verification")
                .contains("atomic transfer").contains("balance audit").contains("16 accounts sum to 16,000")
                .contains("OK: every acknowledged write survived close and replay");
        assertThat(r.err()).contains("demo: reopening (replay)").contains("demo: verifying");
    }

    @Test
    void demoRerunsOnTheSameLocationStartFresh() {
        String uri = Cli.freshMemoryUri();
        for (int i = 0; i < 2; i++) {
            Cli.Run r = Cli.run("demo", "--provider", uri, "--duration", "300ms", "--writers", "2", "--readers",
                    "1", "--keys", "50", "--no-progress");
            assertThat(r.code()).as("run " + i + ": " + r).isZero();
        }
    }

    @Test
    void demoRunsOnChronicleAndKeepsItsDataApartFromTheUsersTrees(@TempDir Path dir) {
        String uri = "chronicle:" + dir.toAbsolutePath();
        Cli.Run r = Cli.run("demo", "--provider", uri, "--duration", "1s", "--writers", "4", "--readers", "1",
                "--keys", "300", "--no-progress");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("OK: every acknowledged write survived close and replay")
                .contains("lattice wal inspect --provider " + uri + "/.demo/run");
        Path run = dir.resolve(".demo").resolve("run");
        assertThat(run).isDirectory();
        assertThat(dir.resolve(".demo").resolve(ScratchLocation.MARKER)).isRegularFile();
        // the user's location holds no demo tree
        Cli.Run inspect = Cli.run("wal", "inspect", "--provider", uri);
        assertThat(inspect.code()).as(inspect.toString()).isZero();
        assertThat(inspect.out()).contains("no trees");
        Cli.Run demoLogs = Cli.run("wal", "inspect", "--provider", uri + "/.demo/run", "demo");
        assertThat(demoLogs.code()).as(demoLogs.toString()).isZero();
        assertThat(demoLogs.out()).contains("demo/0").contains("demo/7").contains("through ");
        // a second run starts from an empty location again
        Cli.Run again = Cli.run("demo", "--provider", uri, "--duration", "300ms", "--writers", "2", "--readers",
                "0", "--keys", "50", "--no-progress");
        assertThat(again.code()).as(again.toString()).isZero();
    }

    @Test
    void verificationFailsWhenTheStorageLosesData() {
        String name = "cli-test-lossy-" + UUID.randomUUID();
        List<String> phases = new ArrayList<>();
        DemoWorkload.Settings s = new DemoWorkload.Settings("memory:" + name, "demo", 2, 2, 1, 100, 2, 40,
                Duration.ofMillis(300), 7);
        DemoWorkload.Result r = DemoWorkload.run(s, new DemoWorkload.Listener() {
            @Override
            public void tick(long elapsedNanos, long durationNanos, long ops) {
            }

            @Override
            public void phase(String phase) {
                phases.add(phase);
                if (phase.startsWith("reopening")) {
                    InMemoryStorage.dropNamed(name); // everything the lattice wrote is gone
                }
            }
        }, b -> { });
        assertThat(phases).anyMatch(p -> p.startsWith("reopening"));
        assertThat(r.errors()).isEmpty();
        assertThat(r.live().ok()).as("before close the data is there").isTrue();
        assertThat(r.reopened().ok()).isFalse();
        assertThat(r.reopened().failures()).isPositive();
        assertThat(r.reopened().examples()).isNotEmpty().allMatch(e -> e.contains("found nothing")
                || e.contains("counter") || e.contains("account") || e.contains("scan returned"));
        assertThat(r.ok()).isFalse();
        assertThat(DemoCommand.summary(r).render()).contains("FAILED");
    }

    @Test
    void scratchAreaWithoutMarkerIsNeverDeleted(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve(".demo").resolve("run"));
        Files.writeString(dir.resolve(".demo").resolve("run").resolve("precious.txt"), "keep me");
        Cli.Run r = Cli.run("demo", "--provider", "chronicle:" + dir, "--duration", "200ms", "--no-progress");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILURE);
        assertThat(r.err()).contains("is not a lattice scratch area");
        assertThat(dir.resolve(".demo").resolve("run").resolve("precious.txt")).hasContent("keep me");
    }
}
