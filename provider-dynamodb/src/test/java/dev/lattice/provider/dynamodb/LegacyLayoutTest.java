package dev.lattice.provider.dynamodb;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ReconcileResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static dev.lattice.conformance.WalTestSupport.readFully;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A log written by the provider before trim stopped raising the head's version and counters moved to {@code ADD}
 * ({@link LegacyLogFixture}: items stored at commit 832d22b) opens with this code: same state, entries byte-exact,
 * checkpoint readable; reconcile removes its uncommitted leftover; then trims and appends under a new epoch keep
 * the counters exact (the layout did not change, only the update expressions).
 */
class LegacyLayoutTest {

    private DynamoTestBackend.Storage storage;
    private DynamoDbWalStorageProvider p;

    @BeforeEach
    void load() {
        storage = DynamoTestBackend.newStorage("legacy");
        p = DynamoDbWalStorageProvider.open(DynamoTestBackend.checkingClient(), storage.settings());
        int items = LegacyLogFixture.load(DynamoTestBackend.rawClient(), storage.table, storage.keyPrefix);
        assertThat(items).as("items in the fixture").isEqualTo(18);
    }

    @AfterEach
    void drop() {
        p.close();
        storage.drop();
    }

    private static long payloadBytes(List<LogEntry> entries) {
        return entries.stream().mapToLong(e -> e.payload().length).sum();
    }

    private void assertHolds(List<LogEntry> expected, long tail, long watermark) {
        assertSameEntries(readAll(p, LegacyLogFixture.LOG), expected);
        LogState s = p.state(LegacyLogFixture.LOG);
        assertThat(s.committedTail()).as("committed tail").isEqualTo(tail);
        assertThat(s.trimWatermark()).as("trim watermark").isEqualTo(watermark);
        assertThat(s.lowestOffset()).as("lowest offset").isEqualTo(expected.get(0).offset());
        assertThat(s.retainedEntries()).as("retained entries").isEqualTo(expected.size());
        assertThat(s.retainedPayloadBytes()).as("retained payload bytes").isEqualTo(payloadBytes(expected));
    }

    @Test
    void aLogWrittenByTheOldCodeOpensAndKeepsWorking() throws Exception {
        List<LogEntry> all = entriesOf(LegacyLogFixture.committedBatches());
        List<LogEntry> retained = new ArrayList<>(all.subList((int) LegacyLogFixture.TRIMMED_THROUGH + 1, 150));
        assertHolds(retained, 149, LegacyLogFixture.TRIMMED_THROUGH);
        assertThat(p.state(LegacyLogFixture.LOG).epoch()).isEqualTo(2);
        CheckpointInfo cp = p.checkpoints().latest(LegacyLogFixture.LOG).orElseThrow();
        assertThat(cp.throughOffset()).isEqualTo(LegacyLogFixture.CHECKPOINT_THROUGH);
        assertThat(cp.formatVersion()).isEqualTo(LegacyLogFixture.CHECKPOINT_FORMAT);
        try (InputStream in = p.checkpoints().open(LegacyLogFixture.LOG, cp)) {
            assertThat(readFully(in)).isEqualTo(LegacyLogFixture.checkpointBytes());
        }

        Fence f = p.claim(LegacyLogFixture.LOG);
        assertThat(f.epoch()).isEqualTo(3);
        ReconcileResult r = p.reconcile(LegacyLogFixture.LOG, f);
        assertThat(r.committedTail()).isEqualTo(149);
        assertThat(r.rolledBackBatches()).as("the uncommitted leftover 150..159").isEqualTo(1);
        assertHolds(retained, 149, LegacyLogFixture.TRIMMED_THROUGH);

        p.trim(LegacyLogFixture.LOG, f, 99);                          // drops the first commit segment
        List<LogEntry> expected = new ArrayList<>(all.subList(100, 150));
        assertHolds(expected, 149, 99);
        EncodedBatch next = batch(LegacyLogFixture.SEED + 9, 150, 10, 33);
        p.append(LegacyLogFixture.LOG, f, next);
        expected.addAll(entriesOf(next));
        assertHolds(expected, 159, 99);
        p.trim(LegacyLogFixture.LOG, f, 155);
        assertHolds(new ArrayList<>(expected.subList(56, 60)), 159, 155);
        assertThat(p.checkpoints().latest(LegacyLogFixture.LOG)).contains(cp);
    }
}
