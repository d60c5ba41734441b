package dev.lattice.engine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Random;

import static dev.lattice.engine.AtomicKillTestWriter.KINDS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The process-kill crash test of atomic writes, on the Chronicle provider in a temporary directory: a child JVM
 * ({@link AtomicKillTestWriter}) streams single-log, multi-log and cross-tree atomic writes from several threads and
 * prints the id of every acknowledged write; the test kills it with SIGKILL at a random moment, reopens, and checks:
 * <ul>
 *   <li>replay never fails (the parent's open and the next child's open);</li>
 *   <li>every write whose own keys ({@code w<i>-k<j>}) are present has all of them, with its values and one version;
 *       every acknowledged write is present, with the version its {@code commit()} returned;</li>
 *   <li>each group of 16 shared keys holds exactly one write's keys (its puts present, its deletes absent, one
 *       version), and that version is at least the highest acknowledged version of a write to the group;</li>
 *   <li>an atomic write over all three trees works after the reopen.</li>
 * </ul>
 * Every third round skips the check after the kill and kills the next child shortly after its open, so the child's
 * own open resolves what the previous kill left prepared and can itself be killed while resolving. The rounds and
 * checks are {@link AtomicKillHarness}'s (shared with the CLI module's {@code AtomicCrashTest}); this test adds that
 * every kind of write was acknowledged at least once.
 *
 * <p>Rounds: {@code -Dlattice.killtest.rounds=N} (default 6 for CI; a soak is 100+, 2-4 s per round on a 2-core
 * machine). {@code -Dlattice.killtest.seed=S} repeats the kill delays (default: a new seed, printed); the kill
 * moment also depends on the machine's speed, so a seed does not replay a run exactly.
 * {@code -Dlattice.killtest.maxDelayMs} (default 2500) bounds the random delay between the child's first
 * acknowledgement and the kill. {@code -Dlattice.killtest.dump=true} writes the WAL as the kill left it (every
 * log's entries and checkpoint) to a file before each check; a failure always writes the WAL after the failed check,
 * and copies the child logs, dumps and data to {@code target/atomic-kill-failures/}.
 */
class AtomicProcessKillTest {

    @TempDir
    Path dir;

    @Test
    void acknowledgedAtomicWritesAreWholeAndUnacknowledgedOnesAllOrNothingAfterSigkill() throws Exception {
        int rounds = Integer.getInteger("lattice.killtest.rounds", 6);
        AtomicKillHarness h = new AtomicKillHarness("chronicle:" + dir.resolve("lattice"), Map.of(), dir,
                Long.getLong("lattice.killtest.seed", new Random().nextLong()),
                Long.getLong("lattice.killtest.maxDelayMs", 2500), Boolean.getBoolean("lattice.killtest.dump"));
        h.run(rounds);
        // the mix ran: every kind of write (single-log, multi-log, cross-tree, the three groups) was acknowledged
        assertThat(h.acked().keySet().stream().map(id -> id % KINDS).distinct().count())
                .as("kinds of acknowledged writes over %d rounds", rounds).isEqualTo(KINDS);
        assertThat(h.multiLogWithinTree()).as("acknowledged multi-log writes within one tree").isPositive();
    }
}
