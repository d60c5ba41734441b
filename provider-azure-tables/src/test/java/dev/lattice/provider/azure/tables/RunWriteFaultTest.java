package dev.lattice.provider.azure.tables;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.RunStore;
import dev.lattice.testbackends.AzuriteExtension;
import dev.lattice.testbackends.AzuriteServer;
import com.azure.data.tables.models.TableTransactionAction;
import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A run write that fails at its k-th write request (a chunk row's insert, or the commit row's transaction), before
 * the table applied it or after (response lost), against Azurite through {@link RecordingGateway}: a reader sees the
 * run whole or not at all, and a retry of the same write succeeds. A small layout (2,000-byte rows) gives a run of
 * 250 chunk rows, each its own single-entity insert (requests 0 to 249), plus the commit (request 250); the cases
 * fail the first, a middle and the last chunk insert and the commit.
 */
@ExtendWith(AzuriteExtension.class)
class RunWriteFaultTest {

    private static final Layout SMALL = new Layout(1000, 2);
    private static final int RUN_BYTES = 250 * SMALL.rowBytes() - 123;

    private String table;
    private AzuriteTables.Opened opened;

    @BeforeEach
    void open() {
        table = AzuriteServer.uniqueTableName("runfault");
        opened = AzuriteTables.open(table, SMALL);
    }

    @AfterEach
    void drop() {
        opened.provider().close();
        AzuriteTables.drop(table);
    }

    @ParameterizedTest(name = "request {0}, after = {1}")
    @CsvSource({"0,false", "125,false", "249,false", "250,false", "0,true", "125,true", "249,true"})
    void aWriteFailingAtTransactionKLeavesNothingReadableAndARetrySucceeds(int k, boolean after) {
        LogId log = new LogId("runs", 0);
        Fence fence = opened.provider().claim(log);
        RunStore runs = opened.provider().runs();
        byte[] data = new byte[RUN_BYTES];
        new Random(k * 31L + (after ? 1 : 0)).nextBytes(data);
        RunId id = new RunId("run-" + k);
        Predicate<List<TableTransactionAction>> runTxn =
                a -> a.get(0).getEntity().getPartitionKey().startsWith("R|");
        RecordingGateway.Fault fault = opened.recording().inject(new RecordingGateway.Fault(runTxn, k, after));

        assertThat(catchThrowable(() -> runs.write(log, fence, id, new ByteArrayInputStream(data), data.length)))
                .as("the write fails at request %d", k).isNotNull();
        assertThat(fault.fired().get()).as("the fault fired").isEqualTo(1);
        opened.recording().clearFault();
        assertThatThrownBy(() -> runs.read(log, id, 0, new byte[1], 0, 1))
                .as("nothing readable after the failed write").isInstanceOf(RunNotFoundException.class);
        for (RunInfo r : runs.list(log)) {
            assertThat(r.complete()).as("only an incomplete leftover may be listed: %s", r).isFalse();
        }

        RunInfo info = runs.write(log, fence, id, new ByteArrayInputStream(data), data.length);
        assertThat(info.complete()).isTrue();
        assertThat(info.lengthBytes()).isEqualTo(data.length);
        byte[] back = new byte[data.length];
        int n = 0;
        while (n < back.length) {
            int r = runs.read(log, id, n, back, n, Math.min(7_777, back.length - n));
            assertThat(r).as("read at %d", n).isPositive();
            n += r;
        }
        assertThat(back).isEqualTo(data);
        assertThat(runs.list(log)).containsExactly(info);
    }

    @org.junit.jupiter.api.Test
    void aCommitWhoseResponseIsLostLeavesTheRunWholeAndARetryIsIdempotent() {
        LogId log = new LogId("runs", 1);
        Fence fence = opened.provider().claim(log);
        RunStore runs = opened.provider().runs();
        byte[] data = new byte[RUN_BYTES];
        new Random(99).nextBytes(data);
        RunId id = new RunId("lost-commit");
        Predicate<List<TableTransactionAction>> commitTxn =
                a -> a.get(0).getEntity().getRowKey().equals(TablesRunStore.COMMIT_ROW);
        opened.recording().inject(new RecordingGateway.Fault(commitTxn, 0, true));
        assertThat(catchThrowable(() -> runs.write(log, fence, id, new ByteArrayInputStream(data), data.length)))
                .as("the write's outcome is unknown to the caller").isNotNull();
        opened.recording().clearFault();
        byte[] back = new byte[data.length];
        int n = 0;
        while (n < back.length) {
            n += runs.read(log, id, n, back, n, back.length - n);
        }
        assertThat(back).as("the committed run reads whole").isEqualTo(data);
        RunInfo info = runs.write(log, fence, id, new ByteArrayInputStream(data), data.length);
        assertThat(info.complete()).isTrue();
        assertThat(runs.list(log)).containsExactly(info);
    }
}
