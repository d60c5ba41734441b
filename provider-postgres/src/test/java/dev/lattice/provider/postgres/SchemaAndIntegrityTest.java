package dev.lattice.provider.postgres;

import dev.lattice.conformance.WalTestSupport;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Schema creation (idempotent, concurrent first use, version check), integrity checks on stored data (frame CRC,
 * missing rows, checkpoint chunks), the checkpoint size option, and read paging in large pages.
 */
@ExtendWith(PostgresTestServer.class)
class SchemaAndIntegrityTest {

    private String schema;
    private final List<WalStorageProvider> providers = new ArrayList<>();

    @BeforeEach
    void setUp() {
        schema = PostgresTestServer.newSchema();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (WalStorageProvider p : providers) {
            p.close();
        }
        PostgresTestServer.dropSchema(schema);
    }

    private WalStorageProvider open(Map<String, String> extra) {
        PostgresTestServer.Server s = PostgresTestServer.server();
        Map<String, String> o = new HashMap<>(s.options());
        o.putAll(extra);
        WalStorageProvider p = PostgresWalStorageProvider.open(s.providerUri(schema), o);
        synchronized (providers) {
            providers.add(p);
        }
        return p;
    }

    private void sql(String statement) throws SQLException {
        try (Connection c = PostgresTestServer.server().connect(); Statement s = c.createStatement()) {
            s.execute(statement.replace("$S", "\"" + schema + "\""));
        }
    }

    private long queryLong(String query) throws SQLException {
        try (Connection c = PostgresTestServer.server().connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(query.replace("$S", "\"" + schema + "\""))) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }

    /** Six providers opening one fresh schema at the same moment all succeed; one version row is written. */
    @Test
    void concurrentFirstUseCreatesTheSchemaOnce() throws Exception {
        int n = 6;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<WalStorageProvider>> opened = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                opened.add(pool.submit(() -> {
                    go.await();
                    return open(Map.of("poolSize", "1"));
                }));
            }
            go.countDown();
            for (Future<WalStorageProvider> f : opened) {
                assertThat(f.get(120, TimeUnit.SECONDS)).isNotNull();
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(queryLong("SELECT count(*) FROM $S.schema_version")).isEqualTo(1);
        assertThat(queryLong("SELECT version FROM $S.schema_version")).isEqualTo(Sql.SCHEMA_VERSION);
        assertThat(queryLong("SELECT count(*) FROM pg_tables WHERE schemaname = '" + schema + "'")).isEqualTo(7);
        LogId log = new LogId("t", 0);
        Fence f = providers.get(0).claim(log);
        providers.get(0).append(log, f, WalTestSupport.batch(1, 0, 2, 8));
        assertThat(providers.get(n - 1).state(log).committedTail()).isEqualTo(1);
    }

    /** A schema written by a newer layout version is refused with a message naming both versions. */
    @Test
    void otherSchemaVersionIsRefused() throws Exception {
        open(Map.of()).close();
        sql("UPDATE $S.schema_version SET version = 99");
        assertThatThrownBy(() -> open(Map.of())).isInstanceOf(WalStorageException.class)
                .hasMessageContaining("layout version 99").hasMessageContaining("version " + Sql.SCHEMA_VERSION);
    }

    /** A flipped bit in a stored frame is reported as CorruptLogException at the batch's first offset. */
    @Test
    void corruptFrameIsReported() throws Exception {
        WalStorageProvider p = open(Map.of());
        LogId log = new LogId("corrupt", 0);
        Fence f = p.claim(log);
        p.append(log, f, WalTestSupport.batch(1, 0, 4, 20));
        p.append(log, f, WalTestSupport.batch(2, 4, 4, 20));
        sql("UPDATE $S.log_batch SET frame = set_byte(frame, 12, get_byte(frame, 12) # 1) WHERE first_offset = 4");
        assertThat(p.read(log, -1, 4, 1 << 20).entries()).hasSize(4);
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> p.read(log, 3, 10, 1 << 20));
        assertThat(t).isInstanceOf(CorruptLogException.class).hasMessageContaining("CRC32C");
        assertThat(((CorruptLogException) t).offset()).isEqualTo(4);
    }

    /** A batch row missing in the middle of the committed range is reported, never skipped. */
    @Test
    void missingBatchRowIsReported() throws Exception {
        WalStorageProvider p = open(Map.of());
        LogId log = new LogId("gap", 0);
        Fence f = p.claim(log);
        for (int i = 0; i < 3; i++) {
            p.append(log, f, WalTestSupport.batch(i, i * 3L, 3, 10));
        }
        sql("DELETE FROM $S.log_batch WHERE first_offset = 3");
        assertThatThrownBy(() -> p.read(log, -1, 100, 1 << 20)).isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("3..5");
        assertThatThrownBy(() -> p.read(log, 2, 100, 1 << 20)).isInstanceOf(CorruptLogException.class);
    }

    /** A checkpoint chunk that fails its CRC32C makes the stream's read throw CorruptLogException. */
    @Test
    void corruptCheckpointChunkIsReported() throws Exception {
        WalStorageProvider p = open(Map.of());
        LogId log = new LogId("ckpt", 0);
        Fence f = p.claim(log);
        p.append(log, f, WalTestSupport.batch(1, 0, 2, 10));
        CheckpointInfo info = p.checkpoints().publish(log, f, 1, 1, WalTestSupport.randomStream(5, 3_000_000));
        assertThat(queryLong("SELECT count(*) FROM $S.checkpoint_chunk")).isEqualTo(3);
        sql("UPDATE $S.checkpoint_chunk SET data = set_byte(data, 7, get_byte(data, 7) # 128) WHERE seq = 1");
        try (InputStream in = p.checkpoints().open(log, info)) {
            byte[] buf = new byte[1 << 20];
            assertThat(in.readNBytes(buf, 0, buf.length)).isEqualTo(buf.length);
            assertThatThrownBy(() -> in.read(buf)).isInstanceOf(CorruptLogException.class)
                    .hasMessageContaining("chunk 1");
        }
    }

    /** The maxCheckpointBytes option is the declared limit: exactly the limit publishes, one byte more is refused. */
    @Test
    void checkpointLimitOptionHolds() throws Exception {
        WalStorageProvider p = open(Map.of("maxCheckpointBytes", "2500000"));
        assertThat(p.describe().limits().maxCheckpointBytes()).isEqualTo(2_500_000);
        LogId log = new LogId("ckpt", 1);
        Fence f = p.claim(log);
        p.append(log, f, WalTestSupport.batch(1, 0, 2, 10));
        CheckpointInfo first = p.checkpoints().publish(log, f, 0, 1, new ByteArrayInputStream(new byte[] {1, 2}));
        assertThatThrownBy(() -> p.checkpoints().publish(log, f, 1, 1, WalTestSupport.randomStream(1, 2_500_001)))
                .isInstanceOf(CheckpointTooLargeException.class).hasMessageContaining("2500000");
        assertThat(p.checkpoints().latest(log)).contains(first);
        assertThat(queryLong("SELECT count(*) FROM $S.checkpoint_chunk")).isEqualTo(1);
        CheckpointInfo atLimit = p.checkpoints().publish(log, f, 1, 1, WalTestSupport.randomStream(2, 2_500_000));
        assertThat(WalTestSupport.readFully(p.checkpoints().open(log, atLimit)))
                .isEqualTo(WalTestSupport.randomBytes(2, 2_500_000));
        assertThat(p.state(log).physicalBytes()).isGreaterThanOrEqualTo(2_500_002);
    }

    /**
     * A commit whose staged frames exceed one statement's share (32 MiB: here three batches of 12 MiB) is written as
     * one transaction of several statements: all three batches land, in order, counted once.
     */
    @Test
    void largeCommitSpansSeveralStatementsAtomically() throws Exception {
        WalStorageProvider p = open(Map.of());
        LogId log = new LogId("large", 0);
        Fence f = p.claim(log);
        List<EncodedBatch> batches = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            EncodedBatch b = WalTestSupport.batch(i, i * 12L, 12, 1 << 20);
            p.stage(log, f, b);
            batches.add(b);
        }
        p.commit(log, f, 35);
        assertThat(queryLong("SELECT count(*) FROM $S.log_batch")).isEqualTo(3);
        assertSameEntries(WalTestSupport.readAll(p, log), entriesOf(batches));
        assertThat(p.state(log).retainedPayloadBytes()).isEqualTo(36L << 20);
        assertThat(p.state(log).committedTail()).isEqualTo(35);
    }

    /**
     * Replay is a few round trips: 100 batches of 100 entries come back in one read of 10,000 entries, and pages that
     * start inside a batch are still full.
     */
    @Test
    void readsReturnLargePages() throws Exception {
        WalStorageProvider p = open(Map.of());
        LogId log = new LogId("pages", 0);
        Fence f = p.claim(log);
        List<EncodedBatch> all = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            EncodedBatch b = WalTestSupport.batch(i, i * 100L, 100, 20);
            p.append(log, f, b);
            all.add(b);
        }
        ReadPage whole = p.read(log, -1, 10_000, 1L << 30);
        assertSameEntries(whole.entries(), entriesOf(all));
        ReadPage mid = p.read(log, 149, 1_000, 1L << 30);
        assertThat(mid.entries()).hasSize(1_000);
        assertThat(mid.entries().get(0).offset()).isEqualTo(150);
        ReadPage bytes = p.read(log, 149, 10_000, 20 * 500);
        assertThat(bytes.entries()).hasSize(500);
        p.trim(log, f, 4_950);
        ReadPage afterTrim = p.read(log, -1, 10_000, 1L << 30);
        assertThat(afterTrim.entries()).hasSize(5_049);
        assertThat(afterTrim.entries().get(0).offset()).isEqualTo(4_951);
        assertThat(queryLong("SELECT min(first_offset) FROM $S.log_batch")).isEqualTo(4_951);
    }
}
