package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.RunId;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * drop: a log deleted wholly (entries, staged batches, watermark, checkpoints, runs, epoch record) leaves nothing the
 * provider lists or reads, durably; other logs are untouched; a stale fence deletes nothing; a fence of the dropped
 * log cannot bring it back; a new claim starts a fresh log. Runs only for providers that declare
 * {@link ProviderFeature#DROP} (skipped with that reason otherwise).
 */
public abstract class DropContract extends ConformanceContract {

    private static final String OTHER_TREE = "conformance-other";

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected DropContract(ConformanceFixture fixture) {
        super(fixture);
    }

    @BeforeEach
    void onlyWhenOffered() {
        assumeDeclared(ProviderFeature.DROP, "the provider does not offer drop (ProviderFeature.DROP)");
    }

    /** Fills a log with everything a provider may keep for it: entries, a trim, checkpoints, a staged batch, runs. */
    private Fence fill(LogId log) {
        WalStorageProvider p = provider();
        Fence f = claimAndReconcile(p, log);
        appendBatches(p, f, 3, 4, SMALL);
        p.trim(log, f, 2);
        p.checkpoints().publish(log, f, 5, 1, bytes(randomBytes(SEED, 300)));
        p.checkpoints().publish(log, f, 9, 1, bytes(randomBytes(SEED + 1, 200)));
        p.stage(log, f, batch(SEED, 12, 2, SMALL));
        if (declares(ProviderFeature.RUNS)) {
            byte[] run = randomBytes(SEED + 2, 1000);
            p.runs().write(log, f, new RunId("r-0"), bytes(run), run.length);
            p.runs().write(log, f, new RunId("r-1"), bytes(run), run.length);
        }
        return f;
    }

    private void assertGone(String after, LogId log) {
        WalStorageProvider p = provider();
        assertThat(p.logs(log.tree())).as("logs(%s) %s", log.tree(), after).doesNotContain(log);
        LogState s = p.state(log);
        assertThat(s.committedTail()).as("committed tail of %s %s", log, after).isEqualTo(-1);
        assertThat(s.trimWatermark()).as("trim watermark of %s %s", log, after).isEqualTo(-1);
        assertThat(s.retainedEntries()).as("retained entries of %s %s", log, after).isZero();
        assertThat(p.read(log, -1, 100, 1 << 20).isEmpty()).as("read of %s %s is empty", log, after).isTrue();
        assertThat(p.checkpoints().latest(log)).as("latest checkpoint of %s %s", log, after).isEmpty();
        if (declares(ProviderFeature.RUNS)) {
            assertThat(p.runs().list(log)).as("runs of %s %s", log, after).isEmpty();
        }
    }

    /** After drop the log is gone, durably; the tree's other logs and other trees keep everything. */
    @Test
    void dropDeletesEverythingOfTheLogAndNothingElse() throws Exception {
        LogId dropped = log(0);
        LogId sibling = log(1);
        LogId other = new LogId(OTHER_TREE, 0);
        Fence f = fill(dropped);
        Fence fs = claimAndReconcile(provider(), sibling);
        List<EncodedBatch> sb = appendBatches(provider(), fs, 2, 3, SMALL);
        provider().checkpoints().publish(sibling, fs, 2, 1, bytes(randomBytes(SEED + 3, 100)));
        Fence fo = claimAndReconcile(provider(), other);
        List<EncodedBatch> ob = appendBatches(provider(), fo, 1, 5, SMALL);
        provider().drop(dropped, f);
        assertGone("after drop", dropped);
        assertThat(provider().logs(TREE)).as("logs(%s) after dropping %s", TREE, dropped).containsExactly(sibling);
        assertThat(provider().trees()).as("trees() after dropping one log of %s", TREE)
                .containsExactly(TREE, OTHER_TREE);
        List<LogEntry> siblingEntries = entriesOf(sb);
        List<LogEntry> otherEntries = entriesOf(ob);
        assertLogHolds(provider(), sibling, siblingEntries, 5);
        assertLogHolds(provider(), other, otherEntries, 4);
        assertThat(provider().checkpoints().latest(sibling)).as("checkpoint of %s after dropping %s", sibling,
                dropped).isPresent();
        provider().commit(sibling, fs, 5); // the sibling's fence is still current
        assertDurableAcrossReopen(() -> {
            assertGone("after drop and reopen", dropped);
            assertLogHolds(provider(), sibling, siblingEntries, 5);
            assertLogHolds(provider(), other, otherEntries, 4);
        });
    }

    /** Dropping every log of a tree removes the tree from trees(), durably. */
    @Test
    void droppingEveryLogRemovesTheTree() throws Exception {
        Fence f0 = fill(log(0));
        Fence f1 = fill(log(7));
        Fence fo = claimAndReconcile(provider(), new LogId(OTHER_TREE, 0));
        appendBatches(provider(), fo, 1, 1, SMALL);
        provider().drop(log(0), f0);
        provider().drop(log(7), f1);
        assertThat(provider().logs(TREE)).as("logs(%s) after dropping all its logs", TREE).isEmpty();
        assertThat(provider().trees()).as("trees() after dropping all logs of %s", TREE).containsExactly(OTHER_TREE);
        assertDurableAcrossReopen(() -> {
            assertThat(provider().logs(TREE)).as("logs(%s) after drop and reopen", TREE).isEmpty();
            assertThat(provider().trees()).as("trees() after drop and reopen").containsExactly(OTHER_TREE);
        });
    }

    /** Dropping again, or dropping a log that never existed, does nothing and succeeds. */
    @Test
    void dropIsIdempotent() throws Exception {
        Fence f = fill(log(0));
        provider().drop(log(0), f);
        provider().drop(log(0), f);
        assertGone("after a second drop", log(0));
        provider().drop(log(3), new Fence(log(3), 1));
        assertGone("after dropping a log never written", log(3));
        reopen();
        provider().drop(log(0), f);
        assertGone("after a third drop past a reopen", log(0));
    }

    /** A stale fence drops nothing. */
    @Test
    void staleFenceDropsNothing() {
        LogId log = log(0);
        Fence stale = fill(log);
        Fence current = claimAndReconcile(provider(), log);
        LogSnapshot before = snapshot(provider(), log);
        assertFenced("drop with a stale fence", () -> provider().drop(log, stale));
        assertUnchanged("a refused drop", before, snapshot(provider(), log));
        assertThat(provider().checkpoints().latest(log)).as("checkpoint after a refused drop").isPresent();
        provider().drop(log, current);
        assertGone("after drop with the current fence", log);
    }

    /** A fence of the dropped log cannot write it back: fenced calls are refused and the log stays gone. */
    @Test
    void fenceOfTheDroppedLogCannotBringItBack() {
        LogId log = log(0);
        Fence f = fill(log);
        provider().drop(log, f);
        assertRefused("commit with the dropped log's fence", () -> provider().commit(log, f, 13));
        assertRefused("trim with the dropped log's fence", () -> provider().trim(log, f, 20));
        assertRefused("append with the dropped log's fence", () -> provider().append(log, f, batch(SEED, 0, 1, 5)));
        assertGone("after a stale writer's calls", log);
    }

    /** A claim after drop starts a fresh log from offset 0, with no checkpoint. */
    @Test
    void claimAfterDropStartsAFreshLog() throws Exception {
        LogId log = log(0);
        Fence old = fill(log);
        provider().drop(log, old);
        Fence f = claimAndReconcile(provider(), log);
        EncodedBatch b = batch(SEED + 9, 0, 3, SMALL);
        provider().append(log, f, b);
        assertLogHolds(provider(), log, entriesOf(b), 2);
        assertThat(provider().checkpoints().latest(log)).as("checkpoint of a log re-created after drop").isEmpty();
        assertThat(provider().logs(TREE)).as("logs(%s) after re-creating %s", TREE, log).containsExactly(log);
        if (declares(ProviderFeature.RUNS)) {
            assertThat(provider().runs().list(log)).as("runs of a log re-created after drop").isEmpty();
        }
        assertDurable(log, () -> assertLogHolds(provider(), log, entriesOf(b), 2));
    }

    /** Bad arguments are refused before any I/O; a closed provider refuses drop. */
    @Test
    void argumentsAndClosedState() {
        Fence f = claimAndReconcile(provider(), log(0));
        assertThatThrownBy(() -> provider().drop(null, f)).as("drop(null, fence)")
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> provider().drop(log(0), null)).as("drop(log, null)")
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> provider().drop(log(1), f)).as("drop with a fence of another log")
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(provider().logs(TREE)).as("logs after refused drops").containsExactly(log(0));
        provider().close();
        assertThatThrownBy(() -> provider().drop(log(0), f)).as("drop on a closed provider")
                .isInstanceOf(IllegalStateException.class);
    }

    private static void assertRefused(String what, Runnable call) {
        Throwable t = catchThrowable(call::run);
        assertThat(t).as("%s must be refused (FencedException or IllegalArgumentException)", what)
                .isInstanceOfAny(FencedException.class, IllegalArgumentException.class);
    }
}
