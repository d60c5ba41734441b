package dev.lattice.provider.postgres;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testbackends.StallingTcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Every wait of the provider is bounded: a statement blocked by a lock (server-side {@code statementTimeout}), a
 * server that stops answering on an open connection (client-side {@code socketTimeout}) and a server that never
 * answers the startup handshake ({@code connectTimeout}) each fail the call with {@link ProviderUnavailableException}
 * within the option plus slack, and the provider works again once the cause is gone.
 */
@ExtendWith(PostgresTestServer.class)
class DeadlineTest {

    private static final LogId LOG = new LogId("deadline", 0);

    private String schema;
    private final List<WalStorageProvider> providers = new ArrayList<>();

    @BeforeEach
    void setUp() {
        schema = PostgresTestServer.newSchema();
    }

    @AfterEach
    void tearDown() throws Exception {
        providers.forEach(WalStorageProvider::close);
        PostgresTestServer.dropSchema(schema);
    }

    private WalStorageProvider open(URI uri, Map<String, String> extra) {
        Map<String, String> o = new HashMap<>(PostgresTestServer.server().options());
        o.putAll(extra);
        WalStorageProvider p = PostgresWalStorageProvider.open(uri, o);
        providers.add(p);
        return p;
    }

    /** A failure and how long the call took, in ms. */
    private record Timed(Throwable failure, long millis) {
    }

    private static Timed timed(Runnable call) {
        long t0 = System.nanoTime();
        Throwable t = catchThrowable(call::run);
        return new Timed(t, (System.nanoTime() - t0) / 1_000_000);
    }

    @Test
    void aStatementBlockedByALockFailsWithinTheStatementTimeoutAndTheLogWorksAfterwards() throws Exception {
        WalStorageProvider p = open(PostgresTestServer.server().providerUri(schema),
                Map.of("statementTimeout", "1s"));
        Fence f = p.claim(LOG);
        p.reconcile(LOG, f);
        List<EncodedBatch> acked = new ArrayList<>();
        EncodedBatch b0 = batch(1, 0, 4, 32);
        p.append(LOG, f, b0);
        acked.add(b0);
        EncodedBatch b1 = batch(1, 4, 4, 32);
        try (Connection locker = PostgresTestServer.server().connect()) {
            locker.setAutoCommit(false);
            try (Statement st = locker.createStatement()) {
                st.execute("LOCK TABLE \"" + schema + "\".log_head IN ACCESS EXCLUSIVE MODE");
            }
            Timed append = timed(() -> p.append(LOG, f, b1));
            Timed state = timed(() -> p.state(LOG));
            for (Timed t : List.of(append, state)) {
                assertThat(t.failure()).isInstanceOf(ProviderUnavailableException.class);
                assertThat(SqlFailures.sqlState(t.failure())).isEqualTo("57014");
                assertThat(t.millis()).isBetween(900L, 5_000L);
            }
            System.out.printf("statementTimeout=1s: append failed after %d ms, state after %d ms%n",
                    append.millis(), state.millis());
            locker.rollback();
        }
        // The lock is gone: the retried batch (same id) lands once and the log holds exactly the acknowledged batches.
        p.append(LOG, f, b1);
        acked.add(b1);
        assertThat(p.state(LOG).committedTail()).isEqualTo(7);
        assertSameEntries(readAll(p, LOG), entriesOf(acked));
    }

    @Test
    void aServerThatStopsAnsweringFailsCallsWithinTheSocketTimeoutAndTheLogWorksWhenItAnswersAgain() {
        PostgresTestServer.Server s = PostgresTestServer.server();
        try (StallingTcpProxy proxy = StallingTcpProxy.to(s.host(), s.port())) {
            URI uri = URI.create("postgres://127.0.0.1:" + proxy.port() + "/" + s.database() + "?user=" + s.user()
                    + "&schema=" + schema);
            WalStorageProvider p = open(uri, Map.of("statementTimeout", "500ms", "socketTimeout", "1s",
                    "connectTimeout", "1s", "poolTimeout", "1s"));
            Fence f = p.claim(LOG);
            p.reconcile(LOG, f);
            EncodedBatch b0 = batch(2, 0, 3, 16);
            p.append(LOG, f, b0);
            proxy.stall(true);
            Timed append = timed(() -> p.append(LOG, f, batch(2, 3, 3, 16)));
            Timed read = timed(() -> p.read(LOG, -1, 100, 1 << 20));
            for (Timed t : List.of(append, read)) {
                assertThat(t.failure()).isInstanceOf(ProviderUnavailableException.class);
                assertThat(t.millis()).isBetween(900L, 5 * 1_000L);
            }
            System.out.printf("socketTimeout=1s, stalled server: append failed after %d ms, read after %d ms%n",
                    append.millis(), read.millis());
            proxy.stall(false);
            // Outcome of the stalled append is unknown: a retry with the same batch settles it.
            EncodedBatch b1 = batch(2, 3, 3, 16);
            p.append(LOG, f, b1);
            assertSameEntries(readAll(p, LOG), entriesOf(b0, b1));
        }
    }

    @Test
    void aServerThatNeverAnswersTheHandshakeFailsOpenWithinTheConnectTimeout() throws Exception {
        try (StallingTcpProxy silent = StallingTcpProxy.silent()) {
            URI uri = URI.create("postgres://127.0.0.1:" + silent.port() + "/db?user=u&schema=" + schema);
            Timed open = timed(() -> open(uri, Map.of("connectTimeout", "1s", "poolTimeout", "1s",
                    "socketTimeout", "1s", "statementTimeout", "500ms")));
            assertThat(open.failure()).isInstanceOf(ProviderUnavailableException.class);
            assertThat(silent.accepted()).isPositive();
            assertThat(open.millis()).isLessThan(5_000L);
            System.out.printf("connectTimeout=1s, silent server: open failed after %d ms%n", open.millis());
        }
        // No pool or driver thread keeps running for the failed open.
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < deadline && !leftoverThreads().isEmpty()) {
            Thread.sleep(50);
        }
        assertThat(leftoverThreads()).isEmpty();
    }

    private List<String> leftoverThreads() {
        List<String> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (t.isAlive() && (n.contains("lattice-postgres-" + schema) || n.contains("PostgreSQL JDBC"))) {
                out.add(n);
            }
        }
        return out;
    }

    @Test
    void deadlineOptionsHaveDefaultsAndAreChecked() {
        URI uri = URI.create("postgres://127.0.0.1:1/db?user=u");
        PostgresSettings d = PostgresSettings.fromUri(uri, Map.of(), k -> null);
        assertThat(d.statementTimeout).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThat(d.socketTimeout).isEqualTo(java.time.Duration.ofSeconds(45));
        assertThat(d.poolTimeout).isEqualTo(java.time.Duration.ofSeconds(10));
        assertThat(d.connectTimeout).isEqualTo(java.time.Duration.ofSeconds(10));
        PostgresSettings raised = PostgresSettings.fromUri(uri, Map.of("statementTimeout", "2m"), k -> null);
        assertThat(raised.socketTimeout).as("kept above a raised statement timeout")
                .isEqualTo(java.time.Duration.ofSeconds(135));
        assertThat(PostgresSettings.fromUri(uri, Map.of("socketTimeout", "1500ms",
                "statementTimeout", "1s"), k -> null)
                .socketTimeoutSeconds()).isEqualTo(2);
        assertThat(catchThrowable(() -> PostgresSettings.fromUri(uri, Map.of("statementTimeout", "10s",
                "socketTimeout", "10s"), k -> null))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("socketTimeout").hasMessageContaining("statementTimeout");
        assertThat(catchThrowable(() -> PostgresSettings.fromUri(uri, Map.of("poolTimeout", "100ms"), k -> null)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("poolTimeout");
        assertThat(catchThrowable(() -> PostgresSettings.fromUri(uri, Map.of("statementTimeout", "50ms"),
                k -> null))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 100ms");
    }
}
