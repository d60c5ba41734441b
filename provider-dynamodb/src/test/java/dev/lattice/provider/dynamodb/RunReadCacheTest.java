package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.DynamoDbMetrics.Operation;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.WalStorageException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * What run reads cost with the run read cache, counted at the SDK client ({@link CheckingDynamoDbClient}) and in the
 * provider's metrics, against dynalite: a run read sequentially in 64 KiB blocks by a fresh instance costs one
 * header {@code GetItem} for the run and fetches each chunk item exactly once, in at most one {@code Query} per chunk
 * (about one per 400 KB with read-ahead); with the cache off every read pays a header read and a {@code Query}.
 * A deleted run is never served from the cache: not after {@code delete} returned, not when a read races the delete
 * (a response that arrived before the delete is not cached after it), not after another instance deleted or
 * rewrote it, not after a drop. Runs written before the chunk size was recorded in the header still read.
 */
class RunReadCacheTest {

    private static final LogId LOG = new LogId("runcache", 0);
    private static final int BLOCK = 64 << 10;
    /** About 3 MiB: 8 chunks of 408,576 bytes, 49 of 64 KiB, 193 of 16 KiB; not a multiple of any. */
    private static final int RUN_BYTES = (3 << 20) + 12_345;

    private final CheckingDynamoDbClient client = new CheckingDynamoDbClient(DynamoTestBackend.rawClient());
    private final List<DynamoDbWalStorageProvider> opened = new ArrayList<>();
    private DynamoTestBackend.Storage storage;

    @BeforeEach
    void newStorage() {
        storage = DynamoTestBackend.newStorage("runcache");
    }

    @AfterEach
    void close() {
        client.clearFaults();
        for (DynamoDbWalStorageProvider p : opened) {
            p.close();
        }
        storage.drop();
    }

    private DynamoDbWalStorageProvider open(Consumer<DynamoDbSettings.Builder> custom) {
        DynamoDbSettings.Builder b = DynamoTestBackend.settings(storage.table).keyPrefix(storage.keyPrefix);
        custom.accept(b);
        DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(client, b.build());
        opened.add(p);
        return p;
    }

    private DynamoDbWalStorageProvider open() {
        return open(b -> { });
    }

    private static RunCache cache(DynamoDbWalStorageProvider p) {
        return ((DynamoDbRunStore) p.runs()).cache();
    }

    private static void write(DynamoDbWalStorageProvider p, Fence f, RunId id, byte[] data) {
        p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
    }

    /** Reads the whole run in {@link #BLOCK}-byte reads; returns the number of read calls. */
    private static int readSequentially(DynamoDbWalStorageProvider p, RunId id, byte[] expected) {
        byte[] back = new byte[expected.length];
        int calls = 0;
        for (int pos = 0; pos < back.length; ) {
            int n = p.runs().read(LOG, id, pos, back, pos, Math.min(BLOCK, back.length - pos));
            assertThat(n).as("read at %d", pos).isPositive();
            pos += n;
            calls++;
        }
        assertThat(back).as("the run read back in %d-byte blocks", BLOCK).isEqualTo(expected);
        return calls;
    }

    @ParameterizedTest(name = "chunks of {0} bytes")
    @ValueSource(ints = {DynamoDbRunStore.MAX_CHUNK_BYTES, DynamoDbSettings.DEFAULT_RUN_CHUNK_BYTES, 16 << 10})
    void aSequentialReadFetchesEachChunkOnceWithOneHeaderRead(int chunkBytes) {
        byte[] data = randomBytes(11, RUN_BYTES);
        RunId id = new RunId("sequential");
        DynamoDbWalStorageProvider writer = open(b -> b.runChunkBytes(chunkBytes));
        write(writer, writer.claim(LOG), id, data);
        int chunks = (RUN_BYTES + chunkBytes - 1) / chunkBytes;

        DynamoDbWalStorageProvider reader = open(b -> b.runChunkBytes(chunkBytes));
        client.resetCounts();
        DynamoDbMetrics.Snapshot before = reader.metrics();
        int calls = readSequentially(reader, id, data);
        DynamoDbMetrics.Snapshot d = reader.metrics().minus(before);

        long queries = client.count(QueryRequest.class);
        System.out.printf("[run read cache] chunks of %d bytes: %d reads of %d bytes, %d chunks: %d GetItem, "
                        + "%d Query, %d chunks fetched (%d bytes), %d chunk cache hits%n", chunkBytes, calls, BLOCK,
                chunks, client.count(GetItemRequest.class), queries, d.runChunksFetched(), d.runChunkBytesFetched(),
                d.runChunkCacheHits());
        assertThat(client.count(GetItemRequest.class)).as("header reads for one run").isEqualTo(1);
        assertThat(client.getItemKeys()).singleElement().satisfies(k -> {
            assertThat(k.get(Layout.PK).s()).isEqualTo(reader.layout().runKey(LOG, id));
            assertThat(k.get(Layout.SK).n()).isEqualTo(String.valueOf(DynamoDbRunStore.HEADER_SK));
        });
        assertThat(queries).as("Query calls: at most one per chunk").isLessThanOrEqualTo(chunks);
        assertThat(queries).as("Query calls: about one per %d bytes read (read-ahead)",
                DynamoDbRunStore.READ_AHEAD_BYTES)
                .isLessThanOrEqualTo(2 + (RUN_BYTES + DynamoDbRunStore.READ_AHEAD_BYTES - 1)
                        / DynamoDbRunStore.READ_AHEAD_BYTES);
        assertThat(d.runChunksFetched()).as("chunk items fetched: each chunk exactly once").isEqualTo(chunks);
        assertThat(d.runChunkBytesFetched()).as("chunk bytes fetched").isEqualTo(RUN_BYTES);
        assertThat(d.requests(Operation.QUERY)).as("metrics agree with the client").isEqualTo(queries);
        assertThat(d.totalRequests()).as("no other request").isEqualTo(queries + 1);
        assertThat(d.runHeaderCacheHits()).isEqualTo(calls - 1);

        client.resetCounts();
        readSequentially(reader, id, data);
        if (chunks * (chunkBytes + RunCache.ENTRY_OVERHEAD_BYTES) <= DynamoDbSettings.DEFAULT_RUN_CACHE_BYTES) {
            assertThat(client.count(QueryRequest.class) + client.count(GetItemRequest.class))
                    .as("a run within the cache is read again without a request").isZero();
        }
    }

    @Test
    void withTheCacheOffEveryReadReadsTheHeaderAndQueries() {
        byte[] data = randomBytes(12, RUN_BYTES);
        RunId id = new RunId("uncached");
        DynamoDbWalStorageProvider p = open(b -> b.runCacheBytes(0));
        write(p, p.claim(LOG), id, data);
        client.resetCounts();
        DynamoDbMetrics.Snapshot before = p.metrics();
        int calls = readSequentially(p, id, data);
        DynamoDbMetrics.Snapshot d = p.metrics().minus(before);
        assertThat(client.count(GetItemRequest.class)).as("a header read per read").isEqualTo(calls);
        assertThat(client.count(QueryRequest.class)).as("a Query per read").isEqualTo(calls);
        assertThat(d.runHeaderCacheHits() + d.runChunkCacheHits()).isZero();
        assertThat(cache(p).sizeBytes()).isZero();
    }

    @Test
    void aDeletedRunIsNeverServedFromTheCacheAndItsIdCanBeWrittenAgain() {
        byte[] data = randomBytes(13, RUN_BYTES);
        RunId id = new RunId("doomed");
        DynamoDbWalStorageProvider p = open();
        Fence f = p.claim(LOG);
        write(p, f, id, data);
        readSequentially(p, id, data);
        client.resetCounts();
        readSequentially(p, id, data);
        assertThat(client.count(QueryRequest.class) + client.count(GetItemRequest.class))
                .as("the run is in the cache before the delete").isZero();

        p.runs().delete(LOG, f, id);
        assertThat(cache(p).sizeBytes()).as("cache bytes after the delete").isZero();
        client.resetCounts();
        assertThatThrownBy(() -> p.runs().read(LOG, id, 0, new byte[BLOCK], 0, BLOCK))
                .as("a read after delete").isInstanceOf(RunNotFoundException.class);
        assertThatThrownBy(() -> p.runs().read(LOG, id, 0, new byte[1], 0, 0))
                .as("an empty read after delete").isInstanceOf(RunNotFoundException.class);
        assertThat(client.count(GetItemRequest.class)).as("each read asked the table for the header").isEqualTo(2);

        byte[] other = randomBytes(14, RUN_BYTES - 1000);
        write(p, f, id, other);
        readSequentially(p, id, other);
    }

    /** The header's response arrives, then the run is deleted, then the provider would cache the header. */
    @Test
    void aHeaderReadBeforeARacingDeleteIsNotCachedAfterIt() {
        byte[] data = randomBytes(15, RUN_BYTES);
        RunId id = new RunId("raced-header");
        DynamoDbWalStorageProvider writer = open();
        write(writer, writer.claim(LOG), id, data);
        DynamoDbWalStorageProvider p = open();
        Fence f = p.claim(LOG);
        String rpk = p.layout().runKey(LOG, id);
        AtomicBoolean fired = new AtomicBoolean();
        client.afterReceiving(r -> {
            if (r instanceof GetItemRequest g && rpk.equals(g.key().get(Layout.PK).s()) && fired.compareAndSet(false,
                    true)) {
                p.runs().delete(LOG, f, id);
            }
        });
        Throwable t = catchThrowable(() -> p.runs().read(LOG, id, 0, new byte[BLOCK], 0, BLOCK));
        client.clearFaults();
        assertThat(fired).as("the delete ran between the header's response and its use").isTrue();
        assertThat(t).as("the racing read finds the chunks gone").isInstanceOf(WalStorageException.class)
                .hasMessageContaining("lost chunk");
        assertThat(cache(p).sizeBytes()).as("nothing of the deleted run is cached").isZero();
        client.resetCounts();
        assertThatThrownBy(() -> p.runs().read(LOG, id, 0, new byte[BLOCK], 0, BLOCK))
                .isInstanceOf(RunNotFoundException.class);
        assertThat(client.count(GetItemRequest.class)).as("the next read asked the table").isEqualTo(1);
        assertThat(client.count(QueryRequest.class)).isZero();
    }

    /** The chunks' response arrives, then the run is deleted, then the provider would cache the chunks. */
    @Test
    void chunksFetchedBeforeARacingDeleteAreNotCachedAfterIt() {
        byte[] data = randomBytes(16, RUN_BYTES);
        RunId id = new RunId("raced-chunks");
        DynamoDbWalStorageProvider p = open();
        Fence f = p.claim(LOG);
        write(p, f, id, data);
        AtomicBoolean fired = new AtomicBoolean();
        client.afterReceiving(r -> {
            if (r instanceof QueryRequest && fired.compareAndSet(false, true)) {
                p.runs().delete(LOG, f, id);
            }
        });
        byte[] block = new byte[BLOCK];
        int n = p.runs().read(LOG, id, BLOCK, block, 0, BLOCK);
        client.clearFaults();
        assertThat(fired).isTrue();
        assertThat(n).as("a read concurrent with the delete may still return the bytes it fetched").isEqualTo(BLOCK);
        assertThat(block).isEqualTo(java.util.Arrays.copyOfRange(data, BLOCK, 2 * BLOCK));
        assertThat(cache(p).sizeBytes()).as("nothing of the deleted run is cached").isZero();
        client.resetCounts();
        assertThatThrownBy(() -> p.runs().read(LOG, id, BLOCK, new byte[BLOCK], 0, BLOCK))
                .isInstanceOf(RunNotFoundException.class);
        assertThat(client.count(QueryRequest.class)).isZero();
    }

    /**
     * Another instance deletes the run: the next read that needs a chunk not cached here finds it gone, re-reads the
     * header and reports the run not found; after the id is written again there, reads here return the new bytes.
     */
    @Test
    void aRunDeletedOrRewrittenByAnotherInstanceIsNoticedAtTheNextFetch() {
        byte[] data = randomBytes(17, RUN_BYTES);
        RunId id = new RunId("elsewhere");
        DynamoDbWalStorageProvider other = open();
        Fence f = other.claim(LOG);
        write(other, f, id, data);
        DynamoDbWalStorageProvider p = open();
        byte[] block = new byte[BLOCK];
        assertThat(p.runs().read(LOG, id, 0, block, 0, BLOCK)).isEqualTo(BLOCK);
        other.runs().delete(LOG, f, id);
        assertThatThrownBy(() -> p.runs().read(LOG, id, 2L << 20, block, 0, BLOCK))
                .as("a read of a chunk this instance has not cached").isInstanceOf(RunNotFoundException.class);
        assertThat(cache(p).header(new RunCache.RunKey(LOG, id))).as("the stale header is forgotten")
                .isNull();

        byte[] again = randomBytes(18, RUN_BYTES);
        write(other, f, id, again);
        readSequentially(p, id, again);
    }

    @Test
    void aDroppedLogsRunsAreForgotten() {
        byte[] data = randomBytes(19, 100_000);
        RunId id = new RunId("dropped");
        DynamoDbWalStorageProvider p = open();
        Fence f = p.claim(LOG);
        write(p, f, id, data);
        readSequentially(p, id, data);
        p.drop(LOG, f);
        assertThat(cache(p).sizeBytes()).isZero();
        assertThatThrownBy(() -> p.runs().read(LOG, id, 0, new byte[10], 0, 10))
                .isInstanceOf(RunNotFoundException.class);
        Fence again = p.claim(LOG);
        byte[] other = randomBytes(20, 90_000);
        write(p, again, id, other);
        readSequentially(p, id, other);
    }

    /** A header without {@code rb} (written before it existed) means chunks of 408,576 bytes; a bad one is corrupt. */
    @Test
    void runsWrittenBeforeTheChunkSizeWasRecordedStillRead() {
        byte[] data = randomBytes(21, RUN_BYTES);
        RunId id = new RunId("legacy");
        DynamoDbWalStorageProvider writer = open(b -> b.runChunkBytes(DynamoDbRunStore.MAX_CHUNK_BYTES));
        write(writer, writer.claim(LOG), id, data);
        Map<String, AttributeValue> header = Layout.key(writer.layout().runKey(LOG, id), DynamoDbRunStore.HEADER_SK);
        DynamoTestBackend.rawClient().updateItem(u -> u.tableName(storage.table).key(header)
                .updateExpression("REMOVE rb"));
        assertThat(DynamoTestBackend.rawClient().getItem(g -> g.tableName(storage.table).key(header)
                .consistentRead(true)).item()).doesNotContainKey("rb");

        DynamoDbWalStorageProvider reader = open();
        assertThat(reader.runs().limits().preferredReadBytes()).isEqualTo(DynamoDbSettings.DEFAULT_RUN_CHUNK_BYTES);
        readSequentially(reader, id, data);

        DynamoTestBackend.rawClient().updateItem(u -> u.tableName(storage.table).key(header)
                .updateExpression("SET rb = :b").expressionAttributeValues(Map.of(":b", Layout.n(1000))));
        DynamoDbWalStorageProvider fresh = open();
        assertThatThrownBy(() -> fresh.runs().read(LOG, id, 0, new byte[10], 0, 10))
                .as("a header whose chunk size does not match its chunk count")
                .isInstanceOf(CorruptLogException.class).hasMessageContaining("inconsistent");
    }
}
