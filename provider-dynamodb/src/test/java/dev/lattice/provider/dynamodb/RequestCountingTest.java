package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.DynamoDbMetrics.Operation;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a replay costs: reading N committed entries back takes at most {@code ceil(N payload bytes / 1 MiB) + 1}
 * {@code Query} calls (DynamoDB pages hold 1 MB) and no per-item read: the only {@code GetItem}s are of the head
 * item, one per {@code read} call. Counted twice: at the SDK client ({@link CheckingDynamoDbClient}) and in the
 * provider's own metrics, which must agree.
 */
class RequestCountingTest {

    private static final LogId LOG = new LogId("replay", 0);
    private static final int BATCHES = 30;
    private static final int ENTRIES = 1000;
    private static final int SIZE = 100;

    private static DynamoTestBackend.Storage storage;
    private static List<EncodedBatch> written;

    /** 30 batches of 1,000 entries of 100 bytes: 30,000 entries, 3,000,000 payload bytes. */
    @BeforeAll
    static void writeLog() {
        storage = DynamoTestBackend.newStorage("replay");
        written = new ArrayList<>();
        try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(DynamoTestBackend.checkingClient(),
                storage.settings())) {
            Fence f = p.claim(LOG);
            p.reconcile(LOG, f);
            for (int i = 0; i < BATCHES; i++) {
                EncodedBatch b = batch(i, (long) i * ENTRIES, ENTRIES, SIZE);
                p.append(LOG, f, b);
                written.add(b);
            }
        }
    }

    @AfterAll
    static void drop() {
        storage.drop();
    }

    /**
     * A fresh instance replays the whole log with the given page limits (the engine's default is 10,000 entries /
     * 8 MiB); the Query count stays within the bound and every GetItem is of the head.
     */
    @ParameterizedTest(name = "pages of {0} entries / {1} bytes")
    @CsvSource({"2147483647, 9223372036854775807", "10000, 8388608", "1000000, 67108864"})
    void replayCostsAtMostOneQueryPerMegabytePlusOne(int pageEntries, long pageBytes) {
        CheckingDynamoDbClient client = new CheckingDynamoDbClient(DynamoTestBackend.rawClient());
        try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(client, storage.settings())) {
            client.resetCounts();
            DynamoDbMetrics.Snapshot before = p.metrics();
            List<LogEntry> read = new ArrayList<>();
            long from = -1;
            int reads = 0;
            while (true) {
                ReadPage page = p.read(LOG, from, pageEntries, pageBytes);
                reads++;
                if (page.isEmpty()) {
                    break;
                }
                read.addAll(page.entries());
                from = page.nextFromExclusive(from);
            }
            DynamoDbMetrics.Snapshot d = p.metrics().minus(before);
            assertSameEntries(read, entriesOf(written));
            long payload = (long) BATCHES * ENTRIES * SIZE;
            long bound = (payload + (1 << 20) - 1) / (1 << 20) + 1;
            assertThat(client.count(QueryRequest.class)).as("Query calls for %d payload bytes", payload)
                    .isLessThanOrEqualTo(bound);
            assertThat(d.requests(Operation.QUERY)).isEqualTo(client.count(QueryRequest.class));
            assertThat(client.count(GetItemRequest.class)).as("GetItem calls: the head, once per read")
                    .isEqualTo(reads);
            for (Map<String, AttributeValue> key : client.getItemKeys()) {
                assertThat(key.get(Layout.SK).n()).as("GetItem only of the head item").isEqualTo("-1");
            }
            assertThat(d.requests(Operation.GET_ITEM)).isEqualTo(reads);
            assertThat(d.totalRequests()).isEqualTo(d.requests(Operation.QUERY) + reads);
        }
    }
}
