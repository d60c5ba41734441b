package dev.lattice.provider.azure.tables;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.testbackends.AzuriteExtension;
import dev.lattice.testbackends.AzuriteServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The request cost model the docs state (so that it carries over to the real, per-request-billed service), and
 * corruption detection: a tampered data row is never returned silently.
 */
@ExtendWith(AzuriteExtension.class)
class RequestCostTest {
    private static final LogId LOG = new LogId("cost", 1);
    private String table;
    private AzuriteTables.Opened o;

    @BeforeEach
    void open() {
        table = AzuriteServer.uniqueTableName("cost");
        o = AzuriteTables.open(table, Layout.DEFAULT);
    }

    @AfterEach
    void close() {
        o.provider().close();
        assertThat(o.checked().violations()).isEmpty();
        AzuriteTables.drop(table);
    }

    /** In steady state an append of a batch that fits one transaction costs 4 requests: 2 queries, 2 transactions. */
    @Test
    void steadyStateAppendCostsFourRequests() {
        Fence f = o.provider().claim(LOG);
        o.provider().reconcile(LOG, f);
        o.provider().append(LOG, f, batch(1, 0, 10, 100));
        RecordingGateway r = o.recording();
        long requests = r.requests();
        long transactions = r.transactions.get();
        long gets = r.gets.get();
        for (int i = 0; i < 10; i++) {
            o.provider().append(LOG, f, batch(2 + i, 10 + 10L * i, 10, 100));
        }
        assertThat(r.requests() - requests).as("requests for 10 appends").isEqualTo(40);
        assertThat(r.transactions.get() - transactions).as("transactions for 10 appends").isEqualTo(20);
        assertThat(r.gets.get() - gets).as("point reads").isZero();
    }

    /** Reading 1,000 committed entries of 100 single-entry batches back costs a handful of requests, not 100. */
    @Test
    void replayCostsFewRequests() {
        Fence f = o.provider().claim(LOG);
        for (int i = 0; i < 100; i++) {
            o.provider().append(LOG, f, batch(7, i * 10L, 10, 100));
        }
        AzuriteTables.Opened cold = AzuriteTables.open(table, Layout.DEFAULT);
        try {
            long before = cold.recording().requests();
            assertThat(cold.provider().read(LOG, -1, 10_000, 8L << 20).entries()).hasSize(1000);
            assertThat(cold.recording().requests() - before).as("head + manifest page(s) + data page(s)")
                    .isLessThanOrEqualTo(6);
        } finally {
            cold.provider().close();
        }
    }

    /** A data row whose bytes changed in the table fails the batch's SHA-256 check: CorruptLogException. */
    @Test
    void tamperedDataRowIsReportedNotReturned() {
        Fence f = o.provider().claim(LOG);
        o.provider().append(LOG, f, batch(3, 0, 5, 64));
        TableClient raw = AzuriteTables.client().getTableClient(table);
        TableEntity row = raw.getEntity(Keys.logPartition(LOG), rowKeyOfFirstDataRow());
        byte[] p = ((byte[]) row.getProperty("P00")).clone();
        p[p.length - 1] ^= 0x5A;
        row.addProperty("P00", p);
        raw.updateEntity(row, TableEntityUpdateMode.REPLACE);
        AzuriteTables.Opened cold = AzuriteTables.open(table, Layout.DEFAULT);
        try {
            assertThatThrownBy(() -> readAll(cold.provider(), LOG)).isInstanceOf(CorruptLogException.class)
                    .hasMessageContaining("SHA-256");
        } finally {
            cold.provider().close();
        }
    }

    private String rowKeyOfFirstDataRow() {
        TableGateway.QueryPage p = o.recording().query(Keys.rowRange(Keys.logPartition(LOG), Keys.DATA,
                Keys.DATA_END), java.util.List.of("RowKey"), 1, null);
        return p.entities().get(0).getRowKey();
    }
}
