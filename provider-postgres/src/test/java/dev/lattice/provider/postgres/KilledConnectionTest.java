package dev.lattice.provider.postgres;

import dev.lattice.conformance.WalTestSupport;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Connections killed with {@code pg_terminate_backend} at chosen moments. The moment is made deterministic with a
 * lock held by a second connection: the provider's commit statement blocks on it, the test finds the blocked backend
 * through {@code pg_blocking_pids}, terminates it, then releases the lock. Afterwards the batch is wholly absent
 * (and a retry makes it wholly present), and every acknowledged batch is present.
 */
@ExtendWith(PostgresTestServer.class)
class KilledConnectionTest {

    private static final long HANG_GUARD_MILLIS = 60_000;

    private String schema;
    private String appName;
    private final List<WalStorageProvider> providers = new ArrayList<>();
    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @BeforeEach
    void setUp() {
        schema = PostgresTestServer.newSchema();
        appName = "lattice-kill-" + schema;
    }

    @AfterEach
    void tearDown() throws Exception {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        for (WalStorageProvider p : providers) {
            p.close();
        }
        PostgresTestServer.dropSchema(schema);
    }

    private WalStorageProvider open() {
        PostgresTestServer.Server s = PostgresTestServer.server();
        Map<String, String> o = new HashMap<>(s.options());
        o.put("applicationName", appName);
        WalStorageProvider p = PostgresWalStorageProvider.open(s.providerUri(schema), o);
        providers.add(p);
        return p;
    }

    /** The commit blocks on the head row (locked by another transaction) and is killed: nothing of it lands. */
    @Test
    void killedWhileWaitingForTheHeadRow() throws Exception {
        WalStorageProvider p = open();
        LogId log = new LogId("kill", 0);
        Fence f = p.claim(log);
        p.reconcile(log, f);
        List<EncodedBatch> base = appendBase(p, f, log);
        EncodedBatch b = WalTestSupport.batch(7, 15, 8, 64);
        p.stage(log, f, b);
        try (Connection locker = PostgresTestServer.server().connect()) {
            locker.setAutoCommit(false);
            try (PreparedStatement s = locker.prepareStatement("SELECT epoch FROM \"" + schema
                    + "\".log_head WHERE tree = ? AND part = ? FOR UPDATE")) {
                s.setString(1, log.tree());
                s.setInt(2, log.partition());
                s.executeQuery().close();
            }
            Future<Throwable> commit = pool.submit(() -> catchThrowable(() -> p.commit(log, f, b.lastOffset())));
            killBackendBlockedBy(locker);
            Throwable t = commit.get(60, TimeUnit.SECONDS);
            assertThat(t).isInstanceOf(ProviderUnavailableException.class);
            locker.rollback();
        }
        assertAbsentThenRetryMakesItWhole(p, f, log, base, b);
    }

    /**
     * The commit statement has already moved the head (same statement) and blocks inserting the batch rows, because
     * another transaction holds an uncommitted row with the same key; it is killed there. The head move is rolled
     * back with the statement: neither the tail nor any row of the batch is ever visible.
     */
    @Test
    void killedAfterTheHeadUpdateWhileInsertingTheRows() throws Exception {
        WalStorageProvider p = open();
        LogId log = new LogId("kill", 1);
        Fence f = p.claim(log);
        p.reconcile(log, f);
        List<EncodedBatch> base = appendBase(p, f, log);
        EncodedBatch b = WalTestSupport.batch(8, 15, 8, 64);
        p.stage(log, f, b);
        try (Connection blocker = PostgresTestServer.server().connect();
             Connection observer = PostgresTestServer.server().connect()) {
            blocker.setAutoCommit(false);
            try (PreparedStatement s = blocker.prepareStatement("INSERT INTO \"" + schema + "\".log_batch"
                    + " SELECT log_id, ?, ?, ?, 1, 0, '\\x00'::bytea FROM \"" + schema + "\".log_head"
                    + " WHERE tree = ? AND part = ?")) {
                s.setLong(1, b.firstOffset());
                s.setLong(2, b.firstOffset());
                s.setObject(3, UUID.randomUUID());
                s.setString(4, log.tree());
                s.setInt(5, log.partition());
                assertThat(s.executeUpdate()).isEqualTo(1);
            }
            Future<Throwable> commit = pool.submit(() -> catchThrowable(() -> p.commit(log, f, b.lastOffset())));
            int victim = killBackendBlockedBy(blocker);
            // While the victim waited, the head it had updated stayed invisible to everyone else.
            assertThat(tailSeenBy(observer, log)).isEqualTo(14);
            Throwable t = commit.get(60, TimeUnit.SECONDS);
            assertThat(t).as("commit on killed backend %d", victim).isInstanceOf(ProviderUnavailableException.class);
            blocker.rollback();
            assertThat(tailSeenBy(observer, log)).isEqualTo(14);
        }
        assertAbsentThenRetryMakesItWhole(p, f, log, base, b);
    }

    /** Every backend of the provider's pool is killed after 30 acknowledged appends: all 30 are there. */
    @Test
    void acknowledgedBatchesSurviveKilledConnections() throws Exception {
        WalStorageProvider p = open();
        LogId log = new LogId("kill", 2);
        Fence f = p.claim(log);
        p.reconcile(log, f);
        List<EncodedBatch> acked = new ArrayList<>();
        long next = 0;
        for (int i = 0; i < 30; i++) {
            EncodedBatch b = WalTestSupport.batch(300 + i, next, 1 + i % 4, 50);
            p.append(log, f, b);
            acked.add(b);
            next = b.lastOffset() + 1;
        }
        int killed = killAllBackends();
        assertThat(killed).isPositive();

        WalStorageProvider fresh = open();
        Fence g = fresh.claim(log);
        fresh.reconcile(log, g);
        assertSameEntries(readAll(fresh, log), entriesOf(acked));
        assertThat(fresh.state(log).committedTail()).isEqualTo(next - 1);

        // The old instance's pool recovers: at most one transient failure, then the retry lands once (it is fenced
        // now, so the new writer continues instead).
        EncodedBatch more = WalTestSupport.batch(999, next, 3, 50);
        for (int attempt = 1; ; attempt++) {
            try {
                fresh.append(log, g, more);
                break;
            } catch (ProviderUnavailableException e) {
                assertThat(attempt).isLessThan(3);
            }
        }
        acked.add(more);
        assertSameEntries(readAll(p, log), entriesOf(acked));
    }

    private static List<EncodedBatch> appendBase(WalStorageProvider p, Fence f, LogId log) {
        List<EncodedBatch> base = new ArrayList<>();
        long next = 0;
        for (int i = 0; i < 3; i++) {
            EncodedBatch b = WalTestSupport.batch(i, next, 5, 64);
            p.append(log, f, b);
            base.add(b);
            next = b.lastOffset() + 1;
        }
        return base; // offsets 0..14
    }

    /**
     * After the kill: the batch is absent (read by this instance and by a fresh one), the same instance's retry of the
     * commit lands it whole, and a fresh instance after claim + reconcile sees it exactly once.
     */
    private void assertAbsentThenRetryMakesItWhole(WalStorageProvider p, Fence f, LogId log,
                                                   List<EncodedBatch> base, EncodedBatch b) {
        List<LogEntry> baseEntries = entriesOf(base);
        assertSameEntries(readAll(p, log), baseEntries);
        assertThat(p.state(log).committedTail()).isEqualTo(14);
        assertThat(p.state(log).retainedEntries()).isEqualTo(15);
        for (int attempt = 1; ; attempt++) {
            try {
                p.commit(log, f, b.lastOffset());
                break;
            } catch (ProviderUnavailableException e) {
                assertThat(attempt).as("retries after the kill").isLessThan(3);
            }
        }
        List<EncodedBatch> all = new ArrayList<>(base);
        all.add(b);
        assertSameEntries(readAll(p, log), entriesOf(all));
        WalStorageProvider fresh = open();
        Fence g = fresh.claim(log);
        fresh.reconcile(log, g);
        assertSameEntries(readAll(fresh, log), entriesOf(all));
        assertThat(fresh.state(log).retainedEntries()).isEqualTo(23);
        assertThat(fresh.state(log).retainedPayloadBytes()).isEqualTo(23 * 64);
    }

    /** Waits (bounded) for a backend of the provider blocked by {@code holder}, terminates it, returns its pid. */
    private int killBackendBlockedBy(Connection holder) throws Exception {
        int holderPid;
        try (Statement s = holder.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            holderPid = rs.getInt(1);
        }
        long deadline = System.currentTimeMillis() + HANG_GUARD_MILLIS;
        try (Connection killer = PostgresTestServer.server().connect();
             PreparedStatement find = killer.prepareStatement("SELECT pid FROM pg_stat_activity"
                     + " WHERE application_name = ? AND ? = ANY(pg_blocking_pids(pid))")) {
            find.setString(1, appName);
            find.setInt(2, holderPid);
            while (true) {
                try (ResultSet rs = find.executeQuery()) {
                    if (rs.next()) {
                        int pid = rs.getInt(1);
                        try (PreparedStatement kill = killer.prepareStatement("SELECT pg_terminate_backend(?)")) {
                            kill.setInt(1, pid);
                            try (ResultSet k = kill.executeQuery()) {
                                k.next();
                                assertThat(k.getBoolean(1)).as("terminated backend %d", pid).isTrue();
                            }
                        }
                        return pid;
                    }
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new AssertionError("no backend of the provider got blocked by backend " + holderPid);
                }
                Thread.sleep(20);
            }
        }
    }

    private int killAllBackends() throws SQLException {
        try (Connection killer = PostgresTestServer.server().connect();
             PreparedStatement s = killer.prepareStatement("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))"
                     + " FROM pg_stat_activity WHERE application_name = ?")) {
            s.setString(1, appName);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private long tailSeenBy(Connection c, LogId log) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT tail FROM \"" + schema
                + "\".log_head WHERE tree = ? AND part = ?")) {
            s.setString(1, log.tree());
            s.setInt(2, log.partition());
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
