package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.CheckingDynamoDbClient.Timing;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReconcileResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Faults between the items of one batch (a batch of three 300 KB entries is three chunk items, three requests):
 * whichever request fails, before or after it landed, the batch is all or nothing once the writer crashes and the
 * next one reconciles; a retry with the same batch completes it exactly once; another batch staged over the failed
 * one's offsets removes its leftovers first; and a commit whose head update fails is all or nothing too.
 */
class FaultBetweenItemsTest {

    private static final LogId LOG = new LogId("faults", 0);

    private final CheckingDynamoDbClient client = new CheckingDynamoDbClient(DynamoTestBackend.rawClient());
    private DynamoTestBackend.Storage storage;
    private DynamoDbWalStorageProvider provider;
    private List<EncodedBatch> base;

    @BeforeEach
    void open() {
        storage = DynamoTestBackend.newStorage("faults");
        provider = DynamoDbWalStorageProvider.open(client, storage.settings());
        Fence f = provider.claim(LOG);
        provider.reconcile(LOG, f);
        base = new ArrayList<>();
        base.add(batch(1, 0, 4, 50));
        base.add(batch(2, 4, 3, 50));
        for (EncodedBatch b : base) {
            provider.append(LOG, f, b);
        }
    }

    @AfterEach
    void close() {
        client.clearFaults();
        provider.close();
        storage.drop();
    }

    private static EncodedBatch threeItemBatch(long first, long seed) {
        return EncodedBatch.of(first, BatchId.random(), List.of(randomBytes(seed, 300_000),
                randomBytes(seed + 1, 300_000), randomBytes(seed + 2, 300_000)));
    }

    private static ProvisionedThroughputExceededException throttled() {
        return (ProvisionedThroughputExceededException) ProvisionedThroughputExceededException.builder()
                .message("injected throttle").statusCode(400).build();
    }

    private void injectOnPut(int skip, Timing timing) {
        client.inject(PutItemRequest.class, r -> true, timing, skip, 1, FaultBetweenItemsTest::throttled);
    }

    /** A new instance over the same table: the crashed writer's successor claims and reconciles. */
    private Fence crashAndRecover() {
        provider.close();
        provider = DynamoDbWalStorageProvider.open(client, storage.settings());
        Fence g = provider.claim(LOG);
        provider.reconcile(LOG, g);
        return g;
    }

    /** Chunk items of the log above a sort key, straight from the table. */
    private int itemsAbove(long sortKey) {
        QueryResponse r = DynamoTestBackend.rawClient().query(q -> q.tableName(storage.table)
                .keyConditionExpression("#p = :p AND #s > :k").consistentRead(true)
                .expressionAttributeNames(Map.of("#p", Layout.PK, "#s", Layout.SK))
                .expressionAttributeValues(Map.of(":p", AttributeValue.fromS(provider.layout().logKey(LOG)),
                        ":k", Layout.n(sortKey))));
        return r.count();
    }

    /**
     * The first, second or third chunk put fails (before or after landing), the writer crashes: after reconcile
     * nothing of the batch is visible, no chunk of it remains, and the next append continues densely.
     */
    @ParameterizedTest
    @EnumSource(Timing.class)
    void faultOnAnyChunkThenCrashIsAllOrNothing(Timing timing) {
        for (int failing = 0; failing < 3; failing++) {
            Fence f = provider.claim(LOG);
            provider.reconcile(LOG, f);
            EncodedBatch b = threeItemBatch(7, 10 * failing);
            injectOnPut(failing, timing);
            assertThatThrownBy(() -> provider.append(LOG, f, b)).isInstanceOf(ProviderUnavailableException.class)
                    .hasCauseInstanceOf(ProvisionedThroughputExceededException.class);
            client.clearFaults();
            int landed = timing == Timing.AFTER ? failing + 1 : failing;
            // The append's abort ran after the failure; crash regardless and check what recovery leaves.
            Fence g = crashAndRecover();
            assertThat(itemsAbove(6)).as("chunks above the tail after reconcile (%d landed)", landed).isZero();
            assertSameEntries(readAll(provider, LOG), entriesOf(base));
            assertThat(provider.state(LOG).committedTail()).isEqualTo(6);
            assertThat(provider.state(LOG).retainedEntries()).isEqualTo(7);
        }
        Fence g = provider.claim(LOG);
        provider.reconcile(LOG, g);
        EncodedBatch next = threeItemBatch(7, 99);
        provider.append(LOG, g, next);
        List<LogEntry> expected = new ArrayList<>(entriesOf(base));
        expected.addAll(entriesOf(next));
        assertSameEntries(readAll(provider, LOG), expected);
    }

    /** Without the append's abort (a crash right after the failed stage): reconcile removes the landed chunks. */
    @Test
    void stageFailingMidwayThenCrashLeavesNothing() {
        Fence f = provider.claim(LOG);
        provider.reconcile(LOG, f);
        EncodedBatch b = threeItemBatch(7, 5);
        injectOnPut(2, Timing.BEFORE);
        assertThatThrownBy(() -> provider.stage(LOG, f, b)).isInstanceOf(ProviderUnavailableException.class);
        client.clearFaults();
        assertThat(itemsAbove(6)).isEqualTo(2);
        provider.close();
        provider = DynamoDbWalStorageProvider.open(client, storage.settings());
        Fence g = provider.claim(LOG);
        ReconcileResult r = provider.reconcile(LOG, g);
        assertThat(r.committedTail()).isEqualTo(6);
        assertThat(r.rolledBackBatches()).isEqualTo(1);
        assertThat(itemsAbove(6)).isZero();
        assertSameEntries(readAll(provider, LOG), entriesOf(base));
    }

    /** The engine's retry of the same batch after a failed chunk completes it, stored once. */
    @Test
    void retryOfTheSameBatchCompletesItOnce() {
        Fence f = provider.claim(LOG);
        provider.reconcile(LOG, f);
        EncodedBatch b = threeItemBatch(7, 5);
        injectOnPut(1, Timing.AFTER);
        assertThatThrownBy(() -> provider.stage(LOG, f, b)).isInstanceOf(ProviderUnavailableException.class);
        client.clearFaults();
        assertThatThrownBy(() -> provider.commit(LOG, f, 9)).as("a half-staged batch is not committable")
                .isInstanceOf(dev.lattice.spi.OffsetConflictException.class);
        provider.stage(LOG, f, b);
        provider.commit(LOG, f, 9);
        assertThat(itemsAbove(6)).isEqualTo(3);
        List<LogEntry> expected = new ArrayList<>(entriesOf(base));
        expected.addAll(entriesOf(b));
        assertSameEntries(readAll(provider, LOG), expected);
        Fence g = crashAndRecover();
        assertSameEntries(readAll(provider, LOG), expected);
        assertThat(provider.state(LOG).retainedEntries()).isEqualTo(10);
        provider.append(LOG, g, batch(7, 10, 2, 10));
    }

    /**
     * Another batch staged over a half-staged one's offsets (same writer, no reconcile) first deletes the
     * leftovers, so a read never mixes the two: the committed log holds exactly the new batch.
     */
    @Test
    void anotherBatchOverAHalfStagedOneReplacesItCleanly() {
        Fence f = provider.claim(LOG);
        provider.reconcile(LOG, f);
        EncodedBatch failed = threeItemBatch(7, 5);
        injectOnPut(2, Timing.BEFORE);
        assertThatThrownBy(() -> provider.stage(LOG, f, failed)).isInstanceOf(ProviderUnavailableException.class);
        client.clearFaults();
        assertThat(itemsAbove(6)).isEqualTo(2);                 // chunks [7] and [8] of the failed batch
        EncodedBatch small = batch(9, 7, 2, 100);               // 7..8: one item at sort key 8
        EncodedBatch after = EncodedBatch.of(9, BatchId.random(), List.of(randomBytes(77, 200_000),
                randomBytes(78, 10)));                          // 9..10
        provider.stage(LOG, f, small);
        provider.stage(LOG, f, after);
        provider.commit(LOG, f, 10);
        List<LogEntry> expected = new ArrayList<>(entriesOf(base));
        expected.addAll(entriesOf(small, after));
        assertSameEntries(readAll(provider, LOG), expected);
        assertSameEntries(readAll(provider, LOG, 6, 1, 1), expected.subList(7, expected.size()));
        crashAndRecover();
        assertSameEntries(readAll(provider, LOG), expected);
    }

    /**
     * The commit's head update fails before it lands (nothing visible after recovery) or after (all visible), for
     * a commit covering two multi-item batches.
     */
    @ParameterizedTest
    @EnumSource(Timing.class)
    void commitOfSeveralMultiItemBatchesIsAllOrNothing(Timing timing) {
        Fence f = provider.claim(LOG);
        provider.reconcile(LOG, f);
        EncodedBatch b1 = threeItemBatch(7, 5);
        EncodedBatch b2 = threeItemBatch(10, 50);
        provider.stage(LOG, f, b2);
        provider.stage(LOG, f, b1);
        client.inject(UpdateItemRequest.class, r -> true, timing, 0, 1, FaultBetweenItemsTest::throttled);
        assertThatThrownBy(() -> provider.commit(LOG, f, 12)).isInstanceOf(ProviderUnavailableException.class);
        client.clearFaults();
        crashAndRecover();
        List<LogEntry> expected = new ArrayList<>(entriesOf(base));
        if (timing == Timing.AFTER) {
            expected.addAll(entriesOf(b1, b2));
        }
        assertSameEntries(readAll(provider, LOG), expected);
        assertThat(provider.state(LOG).committedTail()).isEqualTo(timing == Timing.AFTER ? 12 : 6);
        assertThat(itemsAbove(provider.state(LOG).committedTail())).isZero();
    }
}
