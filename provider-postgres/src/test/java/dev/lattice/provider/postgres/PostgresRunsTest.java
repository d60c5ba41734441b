package dev.lattice.provider.postgres;

import dev.lattice.conformance.WalTestSupport;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.RunStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The PostgreSQL run store's own guarantees beyond the spec: a write failing at chunk k (a backend fault injected
 * through the store's seam, or the caller's stream failing) leaves no row and a retry succeeds; a ranged read
 * fetches only the chunks it needs; a version 1 schema is upgraded in place with its log data intact.
 */
@ExtendWith(PostgresTestServer.class)
class PostgresRunsTest {

    private static final int C = PostgresRunStore.CHUNK_BYTES;
    private static final LogId LOG = new LogId("runs", 0);

    private String schema;
    private final List<PostgresWalStorageProvider> providers = new ArrayList<>();

    @BeforeEach
    void setUp() {
        schema = PostgresTestServer.newSchema();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (PostgresWalStorageProvider p : providers) {
            p.close();
        }
        PostgresTestServer.dropSchema(schema);
    }

    private PostgresWalStorageProvider open() {
        PostgresTestServer.Server s = PostgresTestServer.server();
        PostgresWalStorageProvider p = PostgresWalStorageProvider.open(s.providerUri(schema), s.options());
        providers.add(p);
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

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] readAll(RunStore runs, RunId id, int length) {
        byte[] out = new byte[length];
        int done = 0;
        while (done < length) {
            int n = runs.read(LOG, id, done, out, done, length - done);
            assertThat(n).isPositive();
            done += n;
        }
        assertThat(runs.read(LOG, id, length, new byte[1], 0, 1)).isEqualTo(-1);
        return out;
    }

    private void assertNothingStored(RunStore runs, RunId id) throws SQLException {
        assertThatThrownBy(() -> runs.read(LOG, id, 0, new byte[1], 0, 1)).isInstanceOf(RunNotFoundException.class);
        assertThat(runs.list(LOG)).isEmpty();
        assertThat(queryLong("SELECT count(*) FROM $S.lattice_run_chunk")).isZero();
        assertThat(queryLong("SELECT count(*) FROM $S.lattice_runs")).isZero();
    }

    /** A backend failure before chunk k's insert rolls the whole write back; the retry stores the run whole. */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 3, 4})
    void backendFaultAtChunkLeavesNothingAndRetrySucceeds(int k) throws Exception {
        PostgresWalStorageProvider p = open();
        Fence f = p.claim(LOG);
        byte[] data = bytes(4 * C + 1234, k);
        RunId id = new RunId("r-" + k);
        p.runStore().beforeChunk = i -> {
            if (i == k) {
                throw new ProviderUnavailableException(LOG, "injected fault before chunk " + i, null);
            }
        };
        assertThatThrownBy(() -> p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length))
                .isInstanceOf(ProviderUnavailableException.class).hasMessageContaining("chunk " + k);
        assertNothingStored(p.runs(), id);
        p.runStore().beforeChunk = i -> { };
        RunInfo info = p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
        assertThat(info.lengthBytes()).isEqualTo(data.length);
        assertThat(info.complete()).isTrue();
        assertThat(readAll(p.runs(), id, data.length)).isEqualTo(data);
        assertThat(queryLong("SELECT count(*) FROM $S.lattice_run_chunk")).isEqualTo(5);
    }

    /** The caller's stream failing at chunk k (or ending early) leaves nothing; the retry succeeds. */
    @ParameterizedTest
    @ValueSource(ints = {0, 2})
    void streamFailureAtChunkLeavesNothingAndRetrySucceeds(int k) throws Exception {
        PostgresWalStorageProvider p = open();
        Fence f = p.claim(LOG);
        byte[] data = bytes(3 * C, 10 + k);
        RunId id = new RunId("s-" + k);
        InputStream failing = new ByteArrayInputStream(data) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                if (pos >= k * C) {
                    throw new RuntimeException(new IOException("stream broke at chunk " + k));
                }
                return super.read(b, off, Math.min(len, k * C - pos));
            }
        };
        assertThatThrownBy(() -> p.runs().write(LOG, f, id, failing, data.length)).isInstanceOf(RuntimeException.class);
        assertNothingStored(p.runs(), id);
        InputStream shortStream = new ByteArrayInputStream(Arrays.copyOf(data, k * C + 7));
        assertThatThrownBy(() -> p.runs().write(LOG, f, id, shortStream, data.length))
                .isInstanceOf(IllegalArgumentException.class);
        assertNothingStored(p.runs(), id);
        p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
        assertThat(readAll(p.runs(), id, data.length)).isEqualTo(data);
    }

    /** A ranged read fetches only the chunks it touches: a damaged chunk 0 fails reads of it, not of chunk 2. */
    @Test
    void rangedReadFetchesOnlyTheChunksNeeded() throws Exception {
        PostgresWalStorageProvider p = open();
        Fence f = p.claim(LOG);
        byte[] data = bytes(3 * C + 100, 7);
        RunId id = new RunId("ranged");
        p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
        sql("UPDATE $S.lattice_run_chunk SET data = set_byte(data, 5, get_byte(data, 5) # 1) WHERE seq = 0");
        byte[] buf = new byte[C + 20];
        assertThat(p.runs().read(LOG, id, 2L * C - 5, buf, 0, buf.length)).isEqualTo(buf.length);
        assertThat(buf).isEqualTo(Arrays.copyOfRange(data, 2 * C - 5, 3 * C + 15));
        assertThatThrownBy(() -> p.runs().read(LOG, id, C - 1, new byte[2], 0, 2))
                .isInstanceOf(CorruptLogException.class).hasMessageContaining("chunk 0");
        sql("DELETE FROM $S.lattice_run_chunk WHERE seq = 2");
        assertThatThrownBy(() -> p.runs().read(LOG, id, 2L * C, new byte[1], 0, 1))
                .isInstanceOf(CorruptLogException.class).hasMessageContaining("chunk 2");
    }

    /** A schema of layout version 1 (no run tables) opens: its log data reads as before and runs work. */
    @Test
    void versionOneSchemaIsUpgradedInPlace() throws Exception {
        PostgresWalStorageProvider first = open();
        Fence f = first.claim(LOG);
        first.append(LOG, f, WalTestSupport.batch(1, 0, 5, 30));
        first.close();
        sql("DROP TABLE $S.lattice_runs, $S.lattice_run_chunk");
        sql("UPDATE $S.schema_version SET version = 1");
        PostgresWalStorageProvider p = open();
        assertThat(queryLong("SELECT version FROM $S.schema_version")).isEqualTo(Sql.SCHEMA_VERSION);
        WalTestSupport.assertSameEntries(p.read(LOG, -1, 100, 1 << 20).entries(),
                WalTestSupport.entriesOf(WalTestSupport.batch(1, 0, 5, 30)));
        Fence g = p.claim(LOG);
        byte[] data = bytes(C + 1, 3);
        p.runs().write(LOG, g, new RunId("after-upgrade"), new ByteArrayInputStream(data), data.length);
        assertThat(readAll(p.runs(), new RunId("after-upgrade"), data.length)).isEqualTo(data);
    }
}
