package dev.lattice.provider.dynamodb;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderLimits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The 400 KB item limit with its attribute overhead: the size rule agrees with the server byte for byte at the
 * boundary, the chunk planner fills items exactly up to the limit and never past it (also for the longest keys and
 * largest numbers), batches spanning several items round-trip and trim through their middle, and a chunk failing
 * its CRC is reported, never returned.
 */
class ItemLimitTest {

    private final CheckingDynamoDbClient client = new CheckingDynamoDbClient(DynamoTestBackend.rawClient());
    private DynamoTestBackend.Storage storage;
    private DynamoDbWalStorageProvider provider;

    @BeforeEach
    void open() {
        storage = DynamoTestBackend.newStorage("items");
        provider = DynamoDbWalStorageProvider.open(client, storage.settings());
    }

    @AfterEach
    void close() {
        provider.close();
        storage.drop();
    }

    private Map<String, AttributeValue> itemOfSize(String pk, long sk, long size) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Layout.PK, AttributeValue.fromS(pk));
        item.put(Layout.SK, Layout.n(sk));
        item.put("d", AttributeValue.fromB(SdkBytes.fromByteArray(new byte[0])));
        long rest = size - DynamoItemSize.of(item);
        item.put("d", AttributeValue.fromB(SdkBytes.fromByteArray(new byte[(int) rest])));
        assertThat(DynamoItemSize.of(item)).isEqualTo(size);
        return item;
    }

    /**
     * An item of exactly 409,600 bytes by the rule is accepted by the server and one of 409,601 is refused, for
     * sort keys whose digit counts and exponents take every branch of the number rule.
     */
    @ParameterizedTest
    @ValueSource(longs = {0, 7, 12, 120, 12_000, 123_456, 1_234_567_890_123L, -42, Long.MAX_VALUE})
    void sizeRuleMatchesTheServerAtTheLimit(long sortKey) {
        DynamoDbClient raw = DynamoTestBackend.rawClient();
        String pk = (storage.keyPrefix.isEmpty() ? "" : storage.keyPrefix + "|") + "size-rule";
        Map<String, AttributeValue> atLimit = itemOfSize(pk, sortKey, DynamoItemSize.MAX_ITEM_BYTES);
        raw.putItem(PutItemRequest.builder().tableName(storage.table).item(atLimit).build());
        Map<String, AttributeValue> over = itemOfSize(pk, sortKey, DynamoItemSize.MAX_ITEM_BYTES + 1);
        assertThatThrownBy(() -> raw.putItem(PutItemRequest.builder().tableName(storage.table).item(over).build()))
                .isInstanceOf(DynamoDbException.class).hasMessageContaining("size");
        assertThatThrownBy(() -> client.putItem(PutItemRequest.builder().tableName(storage.table).item(over).build()))
                .isInstanceOf(CheckingDynamoDbClient.ItemLimitExceededError.class);
    }

    /** The number rule on known values (bytes: 1 + half the significant digits, +1 when digits and exponent are even). */
    @Test
    void numberSizes() {
        assertThat(DynamoItemSize.number("0")).isEqualTo(1);
        assertThat(DynamoItemSize.number("7")).isEqualTo(2);
        assertThat(DynamoItemSize.number("12")).isEqualTo(2);
        assertThat(DynamoItemSize.number("12000")).isEqualTo(3);
        assertThat(DynamoItemSize.number("123")).isEqualTo(3);
        assertThat(DynamoItemSize.number("-5")).isEqualTo(3);
        assertThat(DynamoItemSize.number(Long.MAX_VALUE)).isEqualTo(11);
        assertThat(DynamoItemSize.of(Map.of("ab", AttributeValue.fromS("xyz"), "c",
                AttributeValue.fromB(SdkBytes.fromByteArray(new byte[10]))))).isEqualTo(2 + 3 + 1 + 10);
    }

    /** One entry of the declared maximum fits one item even with the longest names and the largest numbers. */
    @Test
    void largestEntryFitsOneItemWithTheLongestKeys() {
        String tree = "t".repeat(LogId.MAX_TREE_NAME_LENGTH);
        String pk = new Layout("p".repeat(64)).logKey(new LogId(tree, LogId.MAX_PARTITION));
        long first = Long.MAX_VALUE - 100_000;
        long fixed = BatchChunks.fixedOverheadBound(pk, Long.MAX_VALUE, first, Long.MAX_VALUE - 1, 100_000);
        assertThat(fixed + Varint.size(BatchChunks.MAX_ENTRY_BYTES)).isLessThanOrEqualTo(
                BatchChunks.MAX_FIXED_OVERHEAD_BYTES);
        EncodedBatch b = EncodedBatch.of(first, BatchId.random(), List.of(new byte[BatchChunks.MAX_ENTRY_BYTES]));
        List<BatchChunks.Chunk> chunks = BatchChunks.plan(pk, Long.MAX_VALUE, b);
        assertThat(chunks).hasSize(1);
        assertThat(chunks.get(0).itemBytes()).isLessThanOrEqualTo(DynamoItemSize.MAX_ITEM_BYTES)
                .isEqualTo(DynamoItemSize.of(chunks.get(0).item()));
    }

    private static List<byte[]> entriesFilling(long fixed, int count, long target) {
        // count entries whose lengths (varint + payload) add up to exactly target - fixed bytes.
        long left = target - fixed;
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < count - 1; i++) {
            out.add(randomBytes(i, 1000));
            left -= 1000 + Varint.size(1000);
        }
        int last = (int) left - 3;
        assertThat(Varint.size(last)).isEqualTo(3);
        out.add(randomBytes(99, last));
        return out;
    }

    /**
     * A batch whose planned item is exactly 409,600 bytes (by the planner's bound) is one item that the server
     * accepts; one byte more splits it into two items. Both round-trip.
     */
    @Test
    void batchFillingOneItemExactlyIsOneItemAndOneMoreByteIsTwo() {
        LogId log = new LogId("boundary", 0);
        String pk = provider.layout().logKey(log);
        Fence f = provider.claim(log);
        provider.reconcile(log, f);
        long fixed = BatchChunks.fixedOverheadBound(pk, f.epoch(), 0, 9, 10);
        List<byte[]> exact = entriesFilling(fixed, 10, DynamoItemSize.MAX_ITEM_BYTES);
        EncodedBatch one = EncodedBatch.of(0, BatchId.random(), exact);
        List<BatchChunks.Chunk> planned = BatchChunks.plan(pk, f.epoch(), one);
        assertThat(planned).hasSize(1);
        assertThat(planned.get(0).itemBytes()).isLessThanOrEqualTo(DynamoItemSize.MAX_ITEM_BYTES)
                .isGreaterThan(DynamoItemSize.MAX_ITEM_BYTES - 16);

        long putsBefore = client.count(PutItemRequest.class);
        provider.append(log, f, one);
        assertThat(client.count(PutItemRequest.class) - putsBefore).isEqualTo(1);

        long fixed2 = BatchChunks.fixedOverheadBound(pk, f.epoch(), 10, 19, 10);
        List<byte[]> overByOne = entriesFilling(fixed2, 10, DynamoItemSize.MAX_ITEM_BYTES + 1);
        EncodedBatch two = EncodedBatch.of(10, BatchId.random(), overByOne);
        assertThat(BatchChunks.plan(pk, f.epoch(), two)).hasSize(2);
        putsBefore = client.count(PutItemRequest.class);
        provider.append(log, f, two);
        assertThat(client.count(PutItemRequest.class) - putsBefore).isEqualTo(2);

        assertSameEntries(readAll(provider, log), entriesOf(one, two));
        assertThat(client.maxItemBytes()).isGreaterThan(DynamoItemSize.MAX_ITEM_BYTES - 16)
                .isLessThanOrEqualTo(DynamoItemSize.MAX_ITEM_BYTES);
    }

    /**
     * A 4 MiB batch (the declared maximum) of mixed entry sizes spans about eleven items; it reads back from any
     * position, its counters are exact, and a trim through the middle of one of its items keeps the rest.
     */
    @Test
    void batchSpanningSeveralItemsReadsAndTrimsFromAnyPosition() {
        ProviderLimits l = provider.describe().limits();
        LogId log = new LogId("spanning", 3);
        Fence f = provider.claim(log);
        provider.reconcile(log, f);
        List<byte[]> entries = new ArrayList<>();
        long total = 0;
        int i = 0;
        while (true) {
            int size = (i % 7 == 0) ? 150_000 : (i % 3 == 0 ? 0 : 1 + (i * 7919) % 20_000);
            if (total + size > l.maxBatchBytes()) {
                break;
            }
            entries.add(randomBytes(1000 + i, size));
            total += size;
            i++;
        }
        EncodedBatch big = EncodedBatch.of(0, BatchId.random(), entries);
        int items = BatchChunks.plan(provider.layout().logKey(log), f.epoch(), big).size();
        assertThat(items).isGreaterThanOrEqualTo(10);
        long putsBefore = client.count(PutItemRequest.class);
        provider.append(log, f, big);
        assertThat(client.count(PutItemRequest.class) - putsBefore).isEqualTo(items);

        List<LogEntry> all = entriesOf(big);
        assertSameEntries(readAll(provider, log), all);
        for (long from : new long[] {-1, 0, 17, entries.size() / 2, entries.size() - 2}) {
            assertSameEntries(readAll(provider, log, from, 13, 300_000), all.subList((int) from + 1, all.size()));
        }
        LogState s = provider.state(log);
        assertThat(s.retainedEntries()).isEqualTo(entries.size());
        assertThat(s.retainedPayloadBytes()).isEqualTo(total);
        assertThat(s.physicalBytes()).isGreaterThan(total);

        long cut = entries.size() / 2;
        provider.trim(log, f, cut);
        List<LogEntry> rest = all.subList((int) cut + 1, all.size());
        assertSameEntries(readAll(provider, log), rest);
        LogState t = provider.state(log);
        assertThat(t.retainedEntries()).isEqualTo(rest.size());
        assertThat(t.retainedPayloadBytes()).isEqualTo(rest.stream().mapToLong(e -> e.payload().length).sum());
        assertThat(t.physicalBytes()).isLessThan(s.physicalBytes()).isGreaterThan(t.retainedPayloadBytes());
    }

    /** A chunk whose stored bytes changed fails its CRC32C: the read reports the offset instead of returning it. */
    @Test
    void corruptChunkIsReported() {
        LogId log = new LogId("corrupt", 0);
        Fence f = provider.claim(log);
        provider.reconcile(log, f);
        EncodedBatch b = EncodedBatch.of(0, BatchId.random(), List.of(randomBytes(1, 100), randomBytes(2, 100)));
        provider.append(log, f, b);
        String pk = provider.layout().logKey(log);
        QueryResponse r = DynamoTestBackend.rawClient().query(q -> q.tableName(storage.table)
                .keyConditionExpression("#p = :p AND #s >= :z").expressionAttributeNames(Map.of("#p", "p", "#s", "s"))
                .expressionAttributeValues(Map.of(":p", AttributeValue.fromS(pk), ":z", Layout.n(0))));
        Map<String, AttributeValue> item = new HashMap<>(r.items().get(0));
        byte[] data = item.get(Layout.DATA).b().asByteArray();
        data[150] ^= 1;
        item.put(Layout.DATA, AttributeValue.fromB(SdkBytes.fromByteArray(data)));
        DynamoTestBackend.rawClient().putItem(p -> p.tableName(storage.table).item(item));
        assertThatThrownBy(() -> provider.read(log, -1, 10, 10_000)).isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("CRC32C");
    }
}
