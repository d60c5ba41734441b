package dev.lattice.provider.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.ReplayCostModel;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.SpiChecks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * The PostgreSQL WAL provider: logs, heads, checkpoints and runs in seven tables of one schema, reached through Jdbi 3 over
 * pgjdbc and (when opened from a URI) a HikariCP pool. Layout, protocol (deferred stage, one conditional commit
 * statement, fencing), errors and costs are described in docs/providers/postgres.md. This class is the facade: it
 * validates arguments and hands each call to its part ({@link StageAndCommit}, {@link LogReads},
 * {@link TrimAndReconcile}, {@link PostgresCheckpointStore}) over {@link PostgresCalls}.
 *
 * <p>Thread-safe: calls on any logs may run concurrently ({@link ProviderFeature#CONCURRENT_STAGE}); commits of one
 * log are serialised within the instance. Several instances (processes) may share a schema: fencing keeps the
 * newest claimer the only writer.
 */
public final class PostgresWalStorageProvider implements WalStorageProvider {

    /** The provider's name in {@link ProviderDescriptor#name()}. */
    public static final String NAME = "postgres";
    /** The implementation version in {@link ProviderDescriptor#version()}. */
    public static final String VERSION = "1.0";
    /** Largest entry: 4 MiB. */
    public static final int MAX_ENTRY_BYTES = 4 << 20;
    /** Largest batch payload: 16 MiB (one {@code bytea} frame; PostgreSQL allows 1 GB, memory is the bound). */
    public static final long MAX_BATCH_BYTES = 16L << 20;
    /** Most entries in one batch. */
    public static final int MAX_ENTRIES_PER_BATCH = 100_000;
    /**
     * Replay cost estimate: 0.05 ms per stored batch row and 8 ms per MiB of payload, fitted to the replay figures in
     * docs/providers/postgres.md (embedded server on loopback, 1,000-entry pages). A remote server adds its round-trip
     * time per read page on top.
     */
    public static final ReplayCostModel REPLAY_COST = new ReplayCostModel(0.05, 8.0);

    private static final Logger LOG = LoggerFactory.getLogger(PostgresWalStorageProvider.class);
    private static final AtomicInteger POOL_NUMBER = new AtomicInteger();

    private final PostgresCalls calls;
    private final PostgresSettings settings;
    private final HikariDataSource ownedPool;
    private final ProviderDescriptor descriptor;
    private final ConcurrentMap<LogId, LogSlot> slots = new ConcurrentHashMap<>();
    private final PostgresCheckpointStore checkpoints;
    private final StageAndCommit appends;
    private final LogReads reads;
    private final TrimAndReconcile trims;
    private final PostgresRunStore runs;

    private PostgresWalStorageProvider(DataSource dataSource, HikariDataSource ownedPool, PostgresSettings settings) {
        this.calls = new PostgresCalls(dataSource, settings);
        this.settings = settings;
        this.ownedPool = ownedPool;
        this.checkpoints = new PostgresCheckpointStore(calls);
        this.appends = new StageAndCommit(calls, slots);
        this.reads = new LogReads(calls, slots);
        this.trims = new TrimAndReconcile(calls, slots);
        this.runs = new PostgresRunStore(calls);
        DurabilityLevel durability;
        try {
            SchemaManager.ensure(calls);
            durability = detectDurability();
        } catch (RuntimeException e) {
            if (ownedPool != null) {
                ownedPool.close();
            }
            throw e;
        }
        ProviderLimits limits = new ProviderLimits(MAX_ENTRY_BYTES, MAX_BATCH_BYTES, MAX_ENTRIES_PER_BATCH,
                settings.maxCheckpointBytes);
        this.descriptor = new ProviderDescriptor(NAME, VERSION, limits, durability,
                Set.of(ProviderFeature.DEFERRED_STAGE, ProviderFeature.CONCURRENT_STAGE,
                        ProviderFeature.PHYSICAL_BYTES, ProviderFeature.PERSISTENT,
                        ProviderFeature.RUNS, ProviderFeature.DROP), REPLAY_COST);
    }

    /**
     * Opens a provider on {@code postgres://host[:port]/database?user=...&schema=...}, with its own HikariCP pool,
     * and creates the schema's tables if they are missing (idempotent; concurrent first use by several processes is
     * serialised by a transaction-scoped advisory lock).
     *
     * <p>Options (URI query or {@code options}, the map wins): {@code user}, {@code password} (else
     * {@code PGPASSWORD}), {@code schema} (default {@code lattice}), {@code poolSize} (default 8),
     * {@code connectTimeout} (TCP connect and startup handshake, default 10s), {@code statementTimeout} (server-side
     * {@code statement_timeout}, default 30s), {@code socketTimeout} (client-side socket read timeout, default 45s,
     * above the statement timeout), {@code poolTimeout} (wait for a pooled connection, default 10s),
     * {@code synchronousCommit} ({@code on} default, {@code off}),
     * {@code sslmode}, {@code applicationName}, {@code maxCheckpointBytes} (default and maximum 1 GiB).
     *
     * @param uri the location
     * @param options further options; may hold the password (never logged)
     * @return the open provider; the caller closes it (which closes its pool)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the URI or an option is malformed or unknown
     * @throws dev.lattice.spi.ProviderUnavailableException if the server cannot be reached
     * @throws WalStorageException on any other failure (authentication, missing database, a newer schema version)
     */
    public static PostgresWalStorageProvider open(URI uri, Map<String, String> options) {
        return open(uri, options, System::getenv);
    }

    static PostgresWalStorageProvider open(URI uri, Map<String, String> options, UnaryOperator<String> env) {
        PostgresSettings s = PostgresSettings.fromUri(uri, options, env);
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(s.jdbcUrl());
        c.setUsername(s.user);
        if (s.password != null) {
            c.setPassword(s.password);
        }
        c.setMaximumPoolSize(s.poolSize);
        c.setMinimumIdle(1);
        // Every wait is bounded: the pool wait (poolTimeout), a new connection's TCP connect and startup handshake
        // (connectTimeout, loginTimeout), each statement on the server (statement_timeout: the server cancels it
        // with 57014) and each socket read on the client (socketTimeout: a dead or silent server).
        c.setConnectionTimeout(s.poolTimeout.toMillis());
        c.setValidationTimeout(Math.max(250, Math.min(5_000, s.poolTimeout.toMillis())));
        c.setAutoCommit(true);
        c.setPoolName("lattice-postgres-" + s.schema + "-" + POOL_NUMBER.incrementAndGet());
        c.addDataSourceProperty("options", "-c synchronous_commit="
                + s.synchronousCommit.name().toLowerCase(Locale.ROOT)
                + " -c statement_timeout=" + s.statementTimeout.toMillis());
        c.addDataSourceProperty("ApplicationName", s.applicationName);
        c.addDataSourceProperty("connectTimeout", String.valueOf(s.connectTimeoutSeconds()));
        c.addDataSourceProperty("loginTimeout", String.valueOf(s.connectTimeoutSeconds()));
        c.addDataSourceProperty("socketTimeout", String.valueOf(s.socketTimeoutSeconds()));
        if (s.sslMode != null) {
            c.addDataSourceProperty("sslmode", s.sslMode);
        }
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(c);
        } catch (RuntimeException e) {
            throw SqlFailures.wrap(null, "connecting to " + s, e);
        }
        return new PostgresWalStorageProvider(pool, pool, s);
    }

    /**
     * Opens a provider on a caller's DataSource (e.g. an application's existing pool). The caller keeps owning it:
     * {@link #close()} does not close it. Its connections' {@code synchronous_commit} setting is the caller's; the
     * declared durability reflects what the server reports at open.
     *
     * @param dataSource connections to the database
     * @param options {@code schema} (default {@code lattice}) and {@code maxCheckpointBytes}
     * @return the open provider
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if an option is unknown or malformed
     * @throws dev.lattice.spi.ProviderUnavailableException if the server cannot be reached
     * @throws WalStorageException on any other failure
     */
    public static PostgresWalStorageProvider fromDataSource(DataSource dataSource, Map<String, String> options) {
        Objects.requireNonNull(dataSource, "dataSource");
        return new PostgresWalStorageProvider(dataSource, null, PostgresSettings.forDataSource(options));
    }

    private DurabilityLevel detectDurability() {
        String[] s = calls.call(null, "reading server settings", h -> h.createQuery(
                        "SELECT current_setting('fsync') AS f, current_setting('synchronous_commit') AS c")
                .map((rs, ctx) -> new String[] {rs.getString("f"), rs.getString("c")}).one());
        boolean fsync = "on".equalsIgnoreCase(s[0]);
        boolean sync = !"off".equalsIgnoreCase(s[1]);
        if (fsync && sync) {
            return DurabilityLevel.OS_CRASH;
        }
        LOG.warn("postgres provider on {}: fsync={} synchronous_commit={}; commits are acknowledged before they are "
                + "flushed to disk, declaring durability PROCESS_CRASH", settings, s[0], s[1]);
        return DurabilityLevel.PROCESS_CRASH;
    }

    // ---- WalStorageProvider ------------------------------------------------------------------------------------------

    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    @Override
    public Fence claim(LogId log) {
        Objects.requireNonNull(log, "log");
        calls.checkOpen();
        Head h = calls.call(log, "claim", handle -> handle.createQuery(calls.sql().claim).bind("tree", log.tree())
                .bind("part", log.partition()).map(Head.MAPPER).one());
        LogSlot.of(slots, log).observe(h);
        return new Fence(log, h.epoch());
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        SpiChecks.stage(log, fence, batch, descriptor.limits());
        calls.checkOpen();
        return appends.stage(log, fence, batch);
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        SpiChecks.commit(log, fence, throughOffset);
        calls.checkOpen();
        appends.commit(log, fence, throughOffset);
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        SpiChecks.abort(log, fence, staged);
        calls.checkOpen();
        appends.abort(log, fence, staged);
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        calls.checkOpen();
        return reads.read(log, fromExclusive, maxEntries, maxBytes);
    }

    @Override
    public LogState state(LogId log) {
        Objects.requireNonNull(log, "log");
        calls.checkOpen();
        return reads.state(log);
    }

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        SpiChecks.trim(log, fence, throughInclusive);
        calls.checkOpen();
        trims.trim(log, fence, throughInclusive);
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        calls.checkOpen();
        return trims.reconcile(log, fence);
    }

    /** Deletes the log's rows (runs, batches, checkpoints, then the head) in one transaction. */
    @Override
    public void drop(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        calls.checkOpen();
        trims.drop(log, fence);
    }

    @Override
    public CheckpointStore checkpoints() {
        return checkpoints;
    }

    /**
     * The provider's runs: chunk rows under a header row written in one transaction (docs/providers/postgres.md,
     * "Runs").
     *
     * @return the run store, the same instance on every call
     */
    @Override
    public RunStore runs() {
        return runs;
    }

    /** @return the run store as its class, for tests that inject faults through its seam */
    PostgresRunStore runStore() {
        return runs;
    }

    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        calls.checkOpen();
        return reads.logs(tree);
    }

    @Override
    public List<String> trees() {
        calls.checkOpen();
        return reads.trees();
    }

    @Override
    public void close() {
        if (calls.markClosed()) {
            slots.clear();
            if (ownedPool != null) {
                ownedPool.close();
            }
        }
    }

    @Override
    public String toString() {
        return "PostgresWalStorageProvider[" + settings + "]";
    }
}
