package dev.lattice.provider.azure.tables;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableServiceException;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.EntryTooLargeException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.testbackends.AzuriteExtension;
import dev.lattice.testbackends.AzuriteServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The service limits at their exact boundaries, on Azurite, every request checked by
 * {@link ServiceLimitCheckingGateway}: a binary property at 64 KiB - 1 / 64 KiB / 64 KiB + 1, an entity near 1 MiB,
 * batches needing exactly 100 and 101 entities, batches of 4 MiB - 1 KiB and 4 MiB + 1 KiB, and a 101-entity batch
 * that stays all-or-nothing when a fault hits between its two transactions.
 */
@ExtendWith(AzuriteExtension.class)
class ServiceLimitBoundaryTest {
    private static final LogId LOG = new LogId("limits", 0);
    /** One 1 KiB property per row: a 100-row batch is only 100 KiB, so the 100-entity limit binds first. */
    private static final Layout SMALL_ROWS = new Layout(1024, 1);

    private final List<String> tables = new ArrayList<>();
    private final List<AzureTablesWalStorageProvider> providers = new ArrayList<>();
    private final List<ServiceLimitCheckingGateway> checkers = new ArrayList<>();

    private AzuriteTables.Opened open(String table, Layout layout) {
        AzuriteTables.Opened o = AzuriteTables.open(table, layout);
        providers.add(o.provider());
        checkers.add(o.checked());
        return o;
    }

    private AzuriteTables.Opened fresh(Layout layout) {
        String table = AzuriteServer.uniqueTableName("limits");
        tables.add(table);
        return open(table, layout);
    }

    @AfterEach
    void cleanUp() {
        providers.forEach(AzureTablesWalStorageProvider::close);
        for (ServiceLimitCheckingGateway c : checkers) {
            assertThat(c.violations()).as("requests above the service's limits").isEmpty();
        }
        assertThat(AzuriteTables.oversizedRequests()).as("request bodies above 4 MiB").isEmpty();
        tables.forEach(AzuriteTables::drop);
    }

    /** A batch of one entry whose framed stream (varint length + bytes) is exactly {@code streamBytes} long. */
    private static EncodedBatch oneEntryWithStream(long first, int streamBytes, long seed) {
        int n = streamBytes - 1;
        while (n + varintLength(n) > streamBytes) {
            n--;
        }
        assertThat(n + varintLength(n)).isEqualTo(streamBytes);
        return EncodedBatch.of(first, BatchId.random(), List.of(randomBytes(seed, n)));
    }

    private static int varintLength(int v) {
        int len = 1;
        while ((v >>>= 7) != 0) {
            len++;
        }
        return len;
    }

    /** The transactions a stage submitted: every submitted transaction after {@code from} that writes data rows. */
    private static List<List<TableTransactionAction>> dataTransactions(RecordingGateway r, int from) {
        List<List<TableTransactionAction>> out = new ArrayList<>();
        List<List<TableTransactionAction>> all = r.submitted;
        synchronized (all) {
            for (List<TableTransactionAction> t : all.subList(from, all.size())) {
                if (t.get(0).getEntity().getRowKey().startsWith(Keys.DATA)
                        && t.get(0).getActionType() == TableTransactionActionType.CREATE) {
                    out.add(t);
                }
            }
        }
        return out;
    }

    private static List<Integer> propertySizes(TableEntity e) {
        List<Integer> sizes = new ArrayList<>();
        for (String name : Rows.payloadNames()) {
            Object v = e.getProperty(name);
            if (v == null) {
                break;
            }
            sizes.add(((byte[]) v).length);
        }
        return sizes;
    }

    @ParameterizedTest(name = "stream of {0} bytes")
    @ValueSource(ints = {65535, 65536, 65537})
    void binaryPropertyAtSixtyFourKibibytes(int streamBytes) {
        AzuriteTables.Opened o = fresh(Layout.DEFAULT);
        Fence f = o.provider().claim(LOG);
        int before = o.recording().submitted.size();
        EncodedBatch b = oneEntryWithStream(0, streamBytes, streamBytes);
        o.provider().append(LOG, f, b);
        List<List<TableTransactionAction>> txns = dataTransactions(o.recording(), before);
        assertThat(txns).hasSize(1);
        assertThat(txns.get(0)).hasSize(1);
        List<Integer> sizes = propertySizes(txns.get(0).get(0).getEntity());
        if (streamBytes <= 65536) {
            assertThat(sizes).containsExactly(streamBytes);
        } else {
            assertThat(sizes).containsExactly(65536, streamBytes - 65536);
        }
        assertSameEntries(readAll(o.provider(), LOG), entriesOf(b));
    }

    /** The checker refuses a 64 KiB + 1 property before it is sent; Azurite itself agrees at this boundary. */
    @Test
    void checkerAndServiceAgreeOnTheBinaryPropertyLimit() {
        String table = AzuriteServer.uniqueTableName("prop");
        tables.add(table);
        TableClient raw = AzuriteTables.client().createTableIfNotExists(table);
        raw.createEntity(new TableEntity("p", "at").addProperty("P00", new byte[65536]));
        assertThatThrownBy(() -> raw.createEntity(new TableEntity("p", "over").addProperty("P00", new byte[65537])))
                .isInstanceOf(TableServiceException.class).hasMessageContaining("PropertyValueTooLarge");
        ServiceLimitCheckingGateway checker = new ServiceLimitCheckingGateway(new SdkTableGateway(
                AzuriteTables.client(), table));
        assertThatThrownBy(() -> checker.submit(List.of(new TableTransactionAction(TableTransactionActionType.CREATE,
                new TableEntity("p", "over2").addProperty("P00", new byte[65537])))))
                .isInstanceOf(AssertionError.class).hasMessageContaining("65537");
        assertThat(checker.violations()).hasSize(1);
    }

    /** A full row (15 x 64 KiB) is an entity just under 1 MiB; one byte more goes to a second row. */
    @ParameterizedTest(name = "stream of {0} bytes")
    @ValueSource(ints = {15 * 65536, 15 * 65536 + 1})
    void entityNearOneMebibyte(int streamBytes) {
        AzuriteTables.Opened o = fresh(Layout.DEFAULT);
        Fence f = o.provider().claim(LOG);
        int before = o.recording().submitted.size();
        EncodedBatch b = oneEntryWithStream(0, streamBytes, 7);
        o.provider().append(LOG, f, b);
        List<TableTransactionAction> rows = dataTransactions(o.recording(), before).stream().flatMap(List::stream)
                .toList();
        assertThat(rows).hasSize(streamBytes == 15 * 65536 ? 1 : 2);
        TableEntity full = rows.stream().filter(a -> a.getEntity().getRowKey().endsWith(".00000")).findFirst()
                .orElseThrow().getEntity();
        long size = AzureTableLimits.entityBytes(full.getPartitionKey(), full.getRowKey(), full.getProperties());
        assertThat(size).as("the header row's size by the service's formula")
                .isBetween(15L * 65536, (long) AzureTableLimits.MAX_ENTITY_BYTES);
        assertThat(AzureTableLimits.MAX_ENTITY_BYTES - size).as("room left under 1 MiB").isLessThan(70_000);
        assertSameEntries(readAll(o.provider(), LOG), entriesOf(b));
    }

    /** Azurite stores an entity above 1 MiB; the checker refuses it: the provider cannot lean on the emulator. */
    @Test
    void azuriteAcceptsAnEntityAboveOneMebibyteButTheCheckerDoesNot() {
        String table = AzuriteServer.uniqueTableName("big");
        tables.add(table);
        TableClient raw = AzuriteTables.client().createTableIfNotExists(table);
        TableEntity tooBig = new TableEntity("p", "big");
        for (int i = 0; i < 16; i++) {
            tooBig.addProperty(String.format("P%02d", i), new byte[65536]);
        }
        assertThat(AzureTableLimits.entityBytes("p", "big", tooBig.getProperties()))
                .isGreaterThan(AzureTableLimits.MAX_ENTITY_BYTES);
        raw.createEntity(tooBig); // the emulator is lenient
        ServiceLimitCheckingGateway checker = new ServiceLimitCheckingGateway(new SdkTableGateway(
                AzuriteTables.client(), table));
        TableEntity again = new TableEntity("p", "big2");
        tooBig.getProperties().forEach((k, v) -> {
            if (k.startsWith("P")) {
                again.addProperty(k, v);
            }
        });
        assertThatThrownBy(() -> checker.submit(List.of(new TableTransactionAction(TableTransactionActionType.CREATE,
                again)))).isInstanceOf(AssertionError.class).hasMessageContaining("the service allows 1048576");
        assertThatThrownBy(() -> Rows.checkEntity(again)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("1048576");
    }

    /** 100 rows fit one transaction; 101 need two (1 + 100, the header's last). Both round-trip byte-exact. */
    @ParameterizedTest(name = "{0} rows")
    @ValueSource(ints = {100, 101})
    void batchNeedingExactly100Or101Entities(int rows) {
        AzuriteTables.Opened o = fresh(SMALL_ROWS);
        Fence f = o.provider().claim(LOG);
        int before = o.recording().submitted.size();
        EncodedBatch b = oneEntryWithStream(0, rows * 1024, rows);
        o.provider().append(LOG, f, b);
        List<List<TableTransactionAction>> txns = dataTransactions(o.recording(), before);
        if (rows == 100) {
            assertThat(txns).extracting(List::size).containsExactly(100);
        } else {
            assertThat(txns).extracting(List::size).containsExactly(1, 100);
            assertThat(txns.get(1).get(0).getEntity().getRowKey()).as("the header transaction goes last")
                    .endsWith(".00000");
        }
        assertSameEntries(readAll(o.provider(), LOG), entriesOf(b));
    }

    /**
     * Batches of 4 MiB - 1 KiB and 4 MiB + 1 KiB are staged in several transactions, each under 4 MiB on the wire,
     * and read back byte-exact; a single entry of 4 MiB + 1 KiB is above the declared entry limit and is refused
     * before any request.
     */
    @Test
    void fourMebibyteBoundaries() {
        AzuriteTables.Opened o = fresh(Layout.DEFAULT);
        Fence f = o.provider().claim(LOG);
        int kib = 1024;
        int mib4 = 4 << 20;
        EncodedBatch under = EncodedBatch.of(0, BatchId.random(), List.of(randomBytes(1, mib4 - kib)));
        EncodedBatch over = EncodedBatch.of(1, BatchId.random(), List.of(randomBytes(2, 2 << 20),
                randomBytes(3, (2 << 20) + kib)));
        int before = o.recording().submitted.size();
        AzuriteTables.resetLargestBody();
        o.provider().append(LOG, f, under);
        o.provider().append(LOG, f, over);
        List<List<TableTransactionAction>> txns = dataTransactions(o.recording(), before);
        assertThat(txns.size()).as("each batch needs two transactions").isEqualTo(4);
        System.out.println("largest request body of the 4 MiB boundary batches: " + AzuriteTables.largestBody()
                + " bytes (limit " + AzuriteTables.MAX_REQUEST_BODY_BYTES + ")");
        assertThat(AzuriteTables.largestBody()).as("transactions use the room under 4 MiB")
                .isGreaterThan(3L << 20).isLessThanOrEqualTo(AzuriteTables.MAX_REQUEST_BODY_BYTES);

        long requests = o.recording().requests();
        EncodedBatch single = EncodedBatch.of(3, BatchId.random(), List.of(new byte[mib4 + kib]));
        assertThatThrownBy(() -> o.provider().append(LOG, f, single)).isInstanceOf(EntryTooLargeException.class)
                .hasMessageContaining(String.valueOf(AzureTablesWalStorageProvider.MAX_ENTRY_BYTES));
        assertThat(o.recording().requests()).as("refused before any request").isEqualTo(requests);

        assertSameEntries(readAll(o.provider(), LOG), entriesOf(under, over));
    }

    /**
     * A 101-entity batch (two transactions) whose second transaction (the header) is lost: nothing of it is
     * visible or committable, a new writer's reconcile removes the first transaction's rows, and the batch can be
     * appended again whole.
     */
    @Test
    void batchOf101EntitiesIsAllOrNothingWhenTheSecondTransactionFails() {
        String table = AzuriteServer.uniqueTableName("fault");
        tables.add(table);
        AzuriteTables.Opened o = open(table, SMALL_ROWS);
        Fence f = o.provider().claim(LOG);
        EncodedBatch base = EncodedBatch.of(0, BatchId.random(), List.of(randomBytes(9, 300)));
        o.provider().append(LOG, f, base);
        EncodedBatch big = oneEntryWithStream(1, 101 * 1024, 101);
        RecordingGateway.Fault fault = o.recording().inject(new RecordingGateway.Fault(
                t -> t.get(0).getEntity().getRowKey().startsWith(Keys.DATA), 1, false));
        assertThatThrownBy(() -> o.provider().stage(LOG, f, big)).isInstanceOf(ProviderUnavailableException.class);
        assertThat(fault.fired().get()).isEqualTo(1);
        o.recording().clearFault();
        assertThat(countDataRows(o.recording(), LOG)).as("the first transaction landed").isEqualTo(1 + 1);
        assertThatThrownBy(() -> o.provider().commit(LOG, f, big.lastOffset()))
                .isInstanceOf(OffsetConflictException.class);
        assertSameEntries(readAll(o.provider(), LOG), entriesOf(base));

        // The writer crashes; the next one recovers.
        AzuriteTables.Opened next = open(table, SMALL_ROWS);
        Fence g = next.provider().claim(LOG);
        ReconcileResult r = next.provider().reconcile(LOG, g);
        assertThat(r.committedTail()).isZero();
        assertThat(r.removedLeftovers()).as("the landed rows of the unfinished stage").isEqualTo(1);
        assertThat(countDataRows(next.recording(), LOG)).as("only the base batch's row is left").isEqualTo(1);
        assertSameEntries(readAll(next.provider(), LOG), entriesOf(base));
        next.provider().append(LOG, g, big);
        assertSameEntries(readAll(next.provider(), LOG), entriesOf(base, big));
    }

    /**
     * The same with the response of the first transaction lost (it landed): the retried stage finds its own rows
     * (409 with the same content hash), writes the rest, and the batch commits whole.
     */
    @Test
    void retriedStageAfterALostResponseCompletesTheBatch() {
        AzuriteTables.Opened o = fresh(SMALL_ROWS);
        Fence f = o.provider().claim(LOG);
        EncodedBatch big = oneEntryWithStream(0, 101 * 1024, 5);
        RecordingGateway.Fault fault = o.recording().inject(new RecordingGateway.Fault(
                t -> t.get(0).getEntity().getRowKey().startsWith(Keys.DATA), 0, true));
        assertThatThrownBy(() -> o.provider().stage(LOG, f, big)).isInstanceOf(ProviderUnavailableException.class);
        assertThat(fault.fired().get()).isEqualTo(1);
        o.recording().clearFault();
        o.provider().stage(LOG, f, big);
        o.provider().commit(LOG, f, big.lastOffset());
        assertSameEntries(readAll(o.provider(), LOG), entriesOf(big));
        assertThat(countDataRows(o.recording(), LOG)).isEqualTo(101);
    }

    /** A stage retried with the same id and offsets but other bytes is a conflict, also when rows are half there. */
    @Test
    void sameIdWithOtherContentConflicts() {
        AzuriteTables.Opened o = fresh(SMALL_ROWS);
        Fence f = o.provider().claim(LOG);
        EncodedBatch big = oneEntryWithStream(0, 101 * 1024, 5);
        o.recording().inject(new RecordingGateway.Fault(
                t -> t.get(0).getEntity().getRowKey().startsWith(Keys.DATA), 1, false));
        assertThatThrownBy(() -> o.provider().stage(LOG, f, big)).isInstanceOf(ProviderUnavailableException.class);
        o.recording().clearFault();
        byte[] other = big.entries().get(0).clone();
        other[other.length - 1] ^= 1;
        EncodedBatch forged = EncodedBatch.of(0, big.batchId(), List.of(other));
        assertThatThrownBy(() -> o.provider().stage(LOG, f, forged)).isInstanceOf(OffsetConflictException.class)
                .hasMessageContaining("other content");
        o.provider().stage(LOG, f, big);
        assertThatThrownBy(() -> o.provider().stage(LOG, f, forged)).isInstanceOf(OffsetConflictException.class)
                .hasMessageContaining("other content");
        o.provider().commit(LOG, f, 0);
        assertSameEntries(readAll(o.provider(), LOG), entriesOf(big));
    }

    /**
     * Three batches of 150 rows each (two transactions apiece) are published by one commit transaction: the head
     * row's conditional UPDATE plus one manifest row.
     */
    @Test
    void oneConditionalTransactionPublishesSeveralMultiTransactionBatches() {
        AzuriteTables.Opened o = fresh(SMALL_ROWS);
        Fence f = o.provider().claim(LOG);
        List<EncodedBatch> batches = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            EncodedBatch b = oneEntryWithStream(i, 150 * 1024, 40 + i);
            o.provider().stage(LOG, f, b);
            batches.add(b);
        }
        int before = o.recording().submitted.size();
        o.provider().commit(LOG, f, 2);
        List<List<TableTransactionAction>> after = o.recording().submitted.subList(before,
                o.recording().submitted.size());
        assertThat(after).hasSize(1);
        List<TableTransactionAction> commit = after.get(0);
        assertThat(commit).hasSize(2);
        assertThat(commit.get(0).getEntity().getRowKey()).isEqualTo(Keys.HEAD);
        assertThat(commit.get(0).getActionType()).isEqualTo(TableTransactionActionType.UPDATE_REPLACE);
        assertThat(commit.get(0).getIfUnchanged()).isTrue();
        assertThat(commit.get(1).getEntity().getRowKey()).isEqualTo(Keys.manifest(2));
        List<LogEntry> expected = entriesOf(batches);
        assertSameEntries(readAll(o.provider(), LOG), expected);
    }

    private static long countDataRows(RecordingGateway gateway, LogId log) {
        long n = 0;
        String token = null;
        do {
            TableGateway.QueryPage p = gateway.query(Keys.rowRange(Keys.logPartition(log), Keys.DATA, Keys.DATA_END),
                    List.of("RowKey"), 1000, token);
            n += p.entities().size();
            token = p.continuationToken();
        } while (token != null);
        return n;
    }
}
