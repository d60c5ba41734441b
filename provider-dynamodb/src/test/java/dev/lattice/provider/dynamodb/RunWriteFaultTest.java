package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.CheckingDynamoDbClient.Timing;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunNotFoundException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.Map;

import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A run write that fails at its k-th request (each {@code BatchWriteItem} of chunks, and the header's
 * {@code PutItem} written last; the request refused before it lands or its response lost after it landed) leaves
 * nothing readable and no item in the run's partition, and a retry then stores the run byte-exact. Throttled chunk
 * batches (unprocessed items) are resubmitted until the run is stored whole.
 */
class RunWriteFaultTest {

    private static final LogId LOG = new LogId("runfaults", 0);
    private static final int CHUNK = DynamoDbSettings.DEFAULT_RUN_CHUNK_BYTES;
    /** Chunks per {@code BatchWriteItem}: 25, or fewer so that a request holds at most 1 MiB of chunk data. */
    private static final int PER_BATCH = Math.min(DynamoDbRunStore.MAX_BATCH_CHUNKS,
            DynamoDbRunStore.MAX_BATCH_BYTES / CHUNK);
    /** Two full batches and one partial chunk: three chunk batches, then the header. */
    private static final int RUN_BYTES = 2 * PER_BATCH * CHUNK + 1000;
    private static final int CHUNKS = 2 * PER_BATCH + 1;
    private static final int BATCHES = 3;
    /** The requests that store the run: its chunk batches and its header. */
    private static final int REQUESTS = BATCHES + 1;
    /** The items of a stored run: its chunks and its header. */
    private static final int ITEMS = CHUNKS + 1;

    private final CheckingDynamoDbClient client = new CheckingDynamoDbClient(DynamoTestBackend.rawClient());
    private DynamoTestBackend.Storage storage;
    private DynamoDbWalStorageProvider provider;

    @BeforeEach
    void open() {
        storage = DynamoTestBackend.newStorage("runfaults");
        provider = DynamoDbWalStorageProvider.open(client, storage.settings());
    }

    @AfterEach
    void close() {
        client.clearFaults();
        provider.close();
        storage.drop();
    }

    private static ProvisionedThroughputExceededException throttled() {
        return (ProvisionedThroughputExceededException) ProvisionedThroughputExceededException.builder()
                .message("injected throttle").statusCode(400).build();
    }

    /** Items of the run's partition, straight from the table (every page: a page closes after 1 MB). */
    private int itemsOf(RunId id) {
        int count = 0;
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            QueryResponse r = DynamoTestBackend.rawClient().query(q -> {
                q.tableName(storage.table).keyConditionExpression("#p = :p").consistentRead(true)
                        .expressionAttributeNames(Map.of("#p", Layout.PK))
                        .expressionAttributeValues(Map.of(":p",
                                AttributeValue.fromS(provider.layout().runKey(LOG, id))));
                if (from != null) {
                    q.exclusiveStartKey(from);
                }
            });
            count += r.count();
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        return count;
    }

    /** Whether a BatchWriteItem puts items into partition {@code pk}. */
    private static boolean putsInto(BatchWriteItemRequest r, String pk) {
        for (List<WriteRequest> ws : r.requestItems().values()) {
            for (WriteRequest w : ws) {
                if (w.putRequest() != null && pk.equals(w.putRequest().item().get(Layout.PK).s())) {
                    return true;
                }
            }
        }
        return false;
    }

    @ParameterizedTest
    @EnumSource(Timing.class)
    void aWriteFailingAtAnyRequestLeavesNothingReadableAndARetrySucceeds(Timing timing) {
        Fence f = provider.claim(LOG);
        for (int k = 0; k < REQUESTS; k++) {
            RunId id = new RunId("run-" + timing + "-" + k);
            byte[] data = randomBytes(1000L + k, RUN_BYTES);
            String rpk = provider.layout().runKey(LOG, id);
            CheckingDynamoDbClient.Rule rule = k < BATCHES
                    ? client.inject(BatchWriteItemRequest.class, r -> putsInto((BatchWriteItemRequest) r, rpk),
                            timing, k, 1, RunWriteFaultTest::throttled)
                    : client.inject(PutItemRequest.class,
                            r -> rpk.equals(((PutItemRequest) r).item().get(Layout.PK).s()), timing, 0, 1,
                            RunWriteFaultTest::throttled);
            assertThatThrownBy(() -> provider.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length))
                    .as("request %d of the run fails (%s)", k, timing)
                    .isInstanceOf(ProviderUnavailableException.class);
            assertThat(rule.fired()).as("the fault at request %d fired", k).isEqualTo(1);
            client.clearFaults();
            assertThatThrownBy(() -> provider.runs().read(LOG, id, 0, new byte[1], 0, 1))
                    .as("nothing of a failed write is readable (item %d, %s)", k, timing)
                    .isInstanceOf(RunNotFoundException.class);
            assertThat(itemsOf(id)).as("no item of the failed write is left (item %d, %s)", k, timing).isZero();
            for (RunInfo r : provider.runs().list(LOG)) {
                if (r.id().equals(id)) {
                    assertThat(r.complete()).as("a failed write is listed only as incomplete").isFalse();
                }
            }
            RunInfo info = provider.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
            assertThat(info.complete()).isTrue();
            assertThat(info.lengthBytes()).isEqualTo(data.length);
            byte[] back = new byte[data.length];
            assertThat(provider.runs().read(LOG, id, 0, back, 0, back.length)).isEqualTo(data.length);
            assertThat(back).as("the retried run reads back byte-exact (item %d, %s)", k, timing).isEqualTo(data);
            assertThat(itemsOf(id)).as("the stored run is its chunks and its header").isEqualTo(ITEMS);
        }
    }

    /** Chunk batches answered with unprocessed items are resubmitted: the run is stored whole, read back exact. */
    @org.junit.jupiter.api.Test
    void throttledChunkBatchesAreResubmittedUntilTheRunIsStored() {
        Fence f = provider.claim(LOG);
        RunId id = new RunId("throttled");
        byte[] data = randomBytes(77L, RUN_BYTES);
        long before = provider.metrics().unprocessedResubmits();
        client.throttleBatchWrites(4, false);
        RunInfo info = provider.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
        client.clearFaults();
        assertThat(provider.metrics().unprocessedResubmits() - before).as("resubmits of unprocessed chunk puts")
                .isGreaterThanOrEqualTo(4);
        assertThat(info.lengthBytes()).isEqualTo(data.length);
        byte[] back = new byte[data.length];
        assertThat(provider.runs().read(LOG, id, 0, back, 0, back.length)).isEqualTo(data.length);
        assertThat(back).as("the run written through throttled batches reads back byte-exact").isEqualTo(data);
        assertThat(itemsOf(id)).as("every chunk and the header are stored").isEqualTo(ITEMS);
    }
}
