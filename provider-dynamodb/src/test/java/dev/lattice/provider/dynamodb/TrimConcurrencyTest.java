package dev.lattice.provider.dynamodb;

import dev.lattice.conformance.TrimUnderLoadRun;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Trim and commit on one log's head item: a trim within the tail conditions only on the epoch, the watermark and
 * the tail being at or above the new watermark, so commits never refuse it and it never refuses a commit; a trim
 * beyond the tail is serialised with commits (version and tail condition) and keeps the counters exact when one
 * lands in its window. The commit inside a trim's window is made to happen by a second provider instance, run from
 * the client hook just before the trim's head update is sent.
 */
class TrimConcurrencyTest {

    private static final LogId LOG = new LogId("trims", 2);
    private static final long SEED = 14L;

    private final CheckingDynamoDbClient client = new CheckingDynamoDbClient(DynamoTestBackend.rawClient());
    private DynamoTestBackend.Storage storage;
    private DynamoDbWalStorageProvider a;
    private DynamoDbWalStorageProvider b;

    @BeforeEach
    void open() {
        storage = DynamoTestBackend.newStorage("trims");
        a = DynamoDbWalStorageProvider.open(client, storage.settings());
        b = DynamoDbWalStorageProvider.open(DynamoTestBackend.rawClient(), storage.settings());
    }

    @AfterEach
    void close() {
        client.clearFaults();
        a.close();
        b.close();
        storage.drop();
    }

    /** @return whether a request is a trim's head update (the only update that sets the watermark besides claim) */
    private static boolean isTrimUpdate(Object request) {
        return request instanceof UpdateItemRequest u && u.updateExpression().startsWith("SET #w = :w");
    }

    /**
     * The conformance suite's trim-under-load run ({@value TrimUnderLoadRun#TRIMS} trims while one thread appends
     * {@value TrimUnderLoadRun#ENTRIES_PER_BATCH}-entry batches without pause): no conditional write of the provider
     * is refused at all, so no trim and no commit ever retries, and each trim call succeeds at once.
     */
    @Test
    void trimUnderLoadNeverRefusesAConditionalWrite() throws Exception {
        Fence f = a.claim(LOG);
        a.reconcile(LOG, f);
        DynamoDbMetrics.Snapshot before = a.metrics();
        TrimUnderLoadRun.Result r = new TrimUnderLoadRun(a, f, SEED, 300).run();
        DynamoDbMetrics.Snapshot used = a.metrics().minus(before);
        System.out.printf("trim under load on dynamodb (provider level): %s; refused conditions %d, requests %s%n", r,
                used.conditionFailures(), used.requests());
        assertThat(used.conditionFailures()).as("conditional writes refused during the run").isZero();
        assertThat(r.attempts()).isEqualTo(TrimUnderLoadRun.TRIMS);
        List<LogEntry> expected = new ArrayList<>();
        for (LogEntry e : entriesOf(r.retained())) {
            if (e.offset() > r.lastWatermark()) {
                expected.add(e);
            }
        }
        assertSameEntries(readAll(a, LOG), expected);
        LogState s = a.state(LOG);
        assertThat(s.retainedEntries()).isEqualTo(expected.size());
        assertThat(s.retainedPayloadBytes()).isEqualTo(expected.stream().mapToLong(e -> e.payload().length).sum());
    }

    /**
     * A commit lands between a trim's plan and its head update (trim within the tail): the trim's update is not
     * refused (one attempt), and the counters count both.
     */
    @Test
    void aCommitInsideATrimsWindowDoesNotRefuseIt() {
        Fence f = a.claim(LOG);
        a.reconcile(LOG, f);
        EncodedBatch first = batch(SEED, 0, 5, 30);
        a.append(LOG, f, first);                                 // 0..4
        EncodedBatch second = batch(SEED + 1, 5, 5, 40);
        b.stage(LOG, f, second);                                 // 5..9, committed by b inside a's trim
        AtomicInteger hooked = new AtomicInteger();
        client.beforeSending(req -> {
            if (isTrimUpdate(req) && hooked.getAndIncrement() == 0) {
                b.commit(LOG, f, 9);
            }
        });
        DynamoDbMetrics.Snapshot before = a.metrics();
        a.trim(LOG, f, 3);
        client.beforeSending(null);
        assertThat(hooked.get()).as("trim head updates sent").isEqualTo(1);
        assertThat(a.metrics().minus(before).conditionFailures()).as("refused conditions").isZero();
        List<LogEntry> expected = new ArrayList<>(entriesOf(first).subList(4, 5));
        expected.addAll(entriesOf(second));
        assertSameEntries(readAll(a, LOG), expected);
        LogState s = a.state(LOG);
        assertThat(s.committedTail()).isEqualTo(9);
        assertThat(s.trimWatermark()).isEqualTo(3);
        assertThat(s.lowestOffset()).isEqualTo(4);
        assertThat(s.retainedEntries()).isEqualTo(6);
        assertThat(s.retainedPayloadBytes()).isEqualTo(30 + 5 * 40);
        // The writer's next commit still lands on its first attempt (its cached head is current).
        EncodedBatch third = batch(SEED + 2, 10, 2, 50);
        before = a.metrics();
        a.append(LOG, f, third);
        assertThat(a.metrics().minus(before).conditionFailures()).isZero();
        assertThat(a.state(LOG).retainedEntries()).isEqualTo(8);
    }

    /**
     * A commit lands between a trim beyond the tail's plan and its head update: the trim's update is refused (it
     * conditions on the tail it planned from), re-planned and applied; the tail and watermark end at the trim point
     * and the counters hold nothing (without the tail condition, the entries that commit added would stay counted).
     */
    @Test
    void aCommitInsideATrimBeyondTheTailIsSerialisedWithIt() {
        Fence f = a.claim(LOG);
        a.reconcile(LOG, f);
        a.append(LOG, f, batch(SEED, 0, 5, 30));                 // 0..4
        b.stage(LOG, f, batch(SEED + 1, 5, 5, 40));              // 5..9
        AtomicInteger hooked = new AtomicInteger();
        client.beforeSending(req -> {
            if (isTrimUpdate(req) && hooked.getAndIncrement() == 0) {
                b.commit(LOG, f, 9);
            }
        });
        a.trim(LOG, f, 20);
        client.beforeSending(null);
        assertThat(hooked.get()).as("trim head updates sent: the first refused, the second applied").isEqualTo(2);
        LogState s = a.state(LOG);
        assertThat(s.committedTail()).isEqualTo(20);
        assertThat(s.trimWatermark()).isEqualTo(20);
        assertThat(s.lowestOffset()).isEqualTo(21);
        assertThat(s.retainedEntries()).isZero();
        assertThat(s.retainedPayloadBytes()).isZero();
        assertThat(s.physicalBytes()).isZero();
        assertThat(readAll(a, LOG)).isEmpty();
        EncodedBatch next = batch(SEED + 2, 21, 3, 20);
        a.append(LOG, f, next);
        assertSameEntries(readAll(b, LOG), entriesOf(next));
        assertThat(a.state(LOG).retainedEntries()).isEqualTo(3);
    }
}
