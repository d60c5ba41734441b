package dev.lattice.provider.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.lattice.provider.postgres.LogSlot.Head;
import dev.lattice.provider.postgres.LogSlot.Staged;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.ReplayCostModel;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.argument.Argument;
import org.jdbi.v3.core.mapper.RowMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * The PostgreSQL WAL provider: logs, heads and checkpoints in five tables of one schema, reached through Jdbi 3 over
 * pgjdbc and (when opened from a URI) a HikariCP pool.
 *
 * <h2>Layout</h2>
 * One {@code log_head} row per log (epoch, committed tail, trim watermark, retained entry and byte counters, latest
 * checkpoint), one {@code log_batch} row per committed batch (every entry of the batch in one {@code bytea} frame
 * with a CRC32C, see {@link BatchFrame}), checkpoints as 1 MiB {@code checkpoint_chunk} rows under a
 * {@code checkpoint} row. The tables are created on first use (see {@link #open(URI, Map)}).
 *
 * <h2>Protocol</h2>
 * {@link ProviderFeature#DEFERRED_STAGE}: {@code stage} validates the batch, checks it against the log's committed
 * offsets and other staged batches, copies it into its frame and keeps it in this instance's memory; {@code commit}
 * writes every batch of the chain and moves the head in <em>one</em> SQL statement (a data-modifying CTE, atomic
 * like a transaction) whose head update is conditional on the fence's epoch and on the tail the chain starts
 * after ({@code UPDATE log_head ... WHERE epoch = ? AND tail = ?}). A stale writer's commit changes nothing and gets
 * {@link FencedException}; a commit whose response was lost is recognised on retry (the head already shows it).
 * Staged batches do not survive {@link #close()} or a crash; {@link #reconcile} drops them.
 *
 * <h2>Errors</h2>
 * Connection loss (SQLState class 08, 57P01..03), serialization failures and deadlocks (40001, 40P01), pool
 * timeouts and I/O errors become {@link dev.lattice.spi.ProviderUnavailableException}; unique violations are
 * resolved where they happen (idempotent success, {@link FencedException} or {@link OffsetConflictException});
 * anything else becomes {@link WalStorageException} with the driver's exception as cause. No password is ever
 * logged or put in a message.
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
    /** At most this many batch rows are fetched by one read. */
    static final int READ_MAX_ROWS = 10_000;
    /** At most this many entries are returned by one read. */
    static final int READ_MAX_ENTRIES = 100_000;
    /** At most this many payload bytes are returned by one read (at least one entry always). */
    static final long READ_MAX_BYTES = 64L << 20;
    /** A commit whose frames exceed this many bytes is written as a transaction of several statements. */
    static final long COMMIT_STATEMENT_BYTES = 32L << 20;
    /** Attempts of a read-only call when the connection turns out to be lost. */
    static final int READ_ATTEMPTS = 3;

    private static final Logger LOG = LoggerFactory.getLogger(PostgresWalStorageProvider.class);
    private static final AtomicInteger POOL_NUMBER = new AtomicInteger();
    private static final RowMapper<Head> HEAD = (rs, ctx) -> new Head(rs.getLong("log_id"), rs.getLong("epoch"),
            rs.getLong("tail"), rs.getLong("watermark"));

    private final Jdbi jdbi;
    private final Sql sql;
    private final PostgresSettings settings;
    private final HikariDataSource ownedPool;
    private final ProviderDescriptor descriptor;
    private final ConcurrentMap<LogId, LogSlot> slots = new ConcurrentHashMap<>();
    private final PostgresCheckpointStore checkpoints;
    private final AtomicBoolean closed = new AtomicBoolean();

    private PostgresWalStorageProvider(DataSource dataSource, HikariDataSource ownedPool, PostgresSettings settings) {
        this.jdbi = Jdbi.create(dataSource);
        this.sql = new Sql(settings.schema);
        this.settings = settings;
        this.ownedPool = ownedPool;
        this.checkpoints = new PostgresCheckpointStore(this);
        DurabilityLevel durability;
        try {
            SchemaManager.ensure(this);
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
                        ProviderFeature.PHYSICAL_BYTES, ProviderFeature.PERSISTENT), REPLAY_COST);
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

    // ---- plumbing shared with the checkpoint store and the schema manager -------------------------------------------

    Sql sql() {
        return sql;
    }

    PostgresSettings settings() {
        return settings;
    }

    void checkOpen() {
        SpiChecks.open(closed.get(), NAME);
    }

    /**
     * Runs a callback on a pooled handle (autocommit), mapping failures to the SPI's exceptions.
     *
     * @param log the log, for messages
     * @param operation what is being done, for messages
     * @param callback the work
     * @param <T> the result type
     * @return the callback's result
     */
    <T> T call(LogId log, String operation, HandleCallback<T, RuntimeException> callback) {
        try {
            return jdbi.withHandle(callback);
        } catch (JdbiException e) {
            throw failure(log, operation, e);
        }
    }

    /**
     * Like {@link #call}, for read-only work: a lost connection (a pooled connection the server dropped, which the
     * pool evicts on failure) is retried on another one, up to {@value #READ_ATTEMPTS} attempts in all.
     *
     * @param log the log, for messages
     * @param operation what is being done, for messages
     * @param callback the read-only work
     * @param <T> the result type
     * @return the callback's result
     */
    <T> T readOnly(LogId log, String operation, HandleCallback<T, RuntimeException> callback) {
        for (int attempt = 1; ; attempt++) {
            try {
                return jdbi.withHandle(callback);
            } catch (JdbiException e) {
                if (attempt >= READ_ATTEMPTS || closed.get() || !SqlFailures.isConnectionLoss(e)) {
                    throw failure(log, operation, e);
                }
            }
        }
    }

    /**
     * Runs a callback in one transaction (READ COMMITTED), mapping failures to the SPI's exceptions. An exception
     * thrown by the callback rolls the transaction back.
     *
     * @param log the log, for messages
     * @param operation what is being done, for messages
     * @param callback the work
     * @param <T> the result type
     * @return the callback's result
     */
    <T> T tx(LogId log, String operation, HandleCallback<T, RuntimeException> callback) {
        try {
            return jdbi.inTransaction(callback);
        } catch (JdbiException e) {
            throw failure(log, operation, e);
        }
    }

    private RuntimeException failure(LogId log, String operation, JdbiException e) {
        if (closed.get()) {
            return new IllegalStateException("provider '" + NAME + "' was closed during " + operation, e);
        }
        return SqlFailures.wrap(log, operation, e);
    }

    /** An argument binding a Java array as a PostgreSQL array of {@code type}. */
    static Argument array(String type, Object[] values) {
        return (position, statement, ctx) -> statement.setArray(position,
                statement.getConnection().createArrayOf(type, values));
    }

    private LogSlot slot(LogId log) {
        return slots.computeIfAbsent(log, k -> new LogSlot());
    }

    private static UUID uuid(dev.lattice.spi.BatchId id) {
        return new UUID(id.high(), id.low());
    }

    private DurabilityLevel detectDurability() {
        String[] s = call(null, "reading server settings", h -> h.createQuery(
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

    /** Reads the head (no lock), records it, and checks the fence against it. */
    private Head readHeadChecked(LogId log, LogSlot slot, Fence fence) {
        Optional<Head> h = readOnly(log, "reading the head", handle -> selectHead(handle, sql.head, log));
        h.ifPresent(slot::observe);
        return checkFence(log, fence, h);
    }

    static Optional<Head> selectHead(Handle handle, String query, LogId log) {
        return handle.createQuery(query).bind("tree", log.tree()).bind("part", log.partition()).map(HEAD).findOne();
    }

    /** Locks the head row for the transaction and checks the fence. */
    Head lockHead(Handle handle, LogId log, Fence fence) {
        return checkFence(log, fence, selectHead(handle, sql.headForUpdate, log));
    }

    static Head checkFence(LogId log, Fence fence, Optional<Head> head) {
        long current = head.map(Head::epoch).orElse(0L);
        if (current > fence.epoch()) {
            throw new FencedException(log, fence.epoch(), current);
        }
        if (current < fence.epoch()) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this storage (the log's "
                    + "epoch is " + current + ")");
        }
        return head.orElseThrow();
    }

    private static void checkKnownEpoch(LogId log, LogSlot slot, Fence fence) {
        long known = slot.epoch();
        if (known > fence.epoch()) {
            throw new FencedException(log, fence.epoch(), known);
        }
        if (!slot.known() || known < fence.epoch()) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this storage (the log's "
                    + "epoch is " + known + ")");
        }
    }

    // ---- WalStorageProvider ------------------------------------------------------------------------------------------

    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    @Override
    public Fence claim(LogId log) {
        Objects.requireNonNull(log, "log");
        checkOpen();
        Head h = call(log, "claim", handle -> handle.createQuery(sql.claim).bind("tree", log.tree())
                .bind("part", log.partition()).map(HEAD).one());
        slot(log).observe(h);
        return new Fence(log, h.epoch());
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        SpiChecks.stage(log, fence, batch, descriptor.limits());
        checkOpen();
        LogSlot slot = slot(log);
        if (!slot.known() || slot.epoch() < fence.epoch()) {
            readOnly(log, "reading the head", h -> selectHead(h, sql.head, log)).ifPresent(slot::observe);
        }
        checkKnownEpoch(log, slot, fence);
        StagedBatch receipt = StagedBatch.of(fence, batch);
        if (batch.firstOffset() <= slot.tail()) {
            return stageOverCommitted(log, slot, fence, batch, receipt);
        }
        byte[] frame = BatchFrame.encode(batch.firstOffset(), batch.entries());
        Staged conflict = slot.put(new Staged(batch.firstOffset(), batch.lastOffset(), fence.epoch(),
                batch.batchId(), frame, batch.size(), batch.payloadBytes()));
        if (conflict != null) {
            throw new OffsetConflictException(log, "batch " + batch.firstOffset() + ".." + batch.lastOffset() + " (id "
                    + batch.batchId() + ") overlaps staged batch " + conflict.first() + ".." + conflict.last()
                    + " (id " + conflict.id() + ")");
        }
        return receipt;
    }

    /** A stage at or below the committed tail: success only when it is that very committed batch. */
    private StagedBatch stageOverCommitted(LogId log, LogSlot slot, Fence fence, EncodedBatch batch,
                                           StagedBatch receipt) {
        record Found(Head head, Long last, UUID id) {
        }
        Found f = readOnly(log, "checking a committed batch", h -> h.createQuery(sql.stagedLookup)
                .bind("tree", log.tree()).bind("part", log.partition()).bind("first", batch.firstOffset())
                .map((rs, ctx) -> new Found(HEAD.map(rs, ctx), (Long) rs.getObject("last_offset"),
                        rs.getObject("batch_id", UUID.class)))
                .one());
        slot.observe(f.head());
        checkFence(log, fence, Optional.of(f.head()));
        if (f.last() != null && f.last() == batch.lastOffset() && uuid(batch.batchId()).equals(f.id())
                && batch.firstOffset() > f.head().watermark()) {
            return receipt;
        }
        throw new OffsetConflictException(log, "batch " + batch.firstOffset() + ".." + batch.lastOffset() + " (id "
                + batch.batchId() + ") overlaps committed or trimmed offsets (committed tail " + f.head().tail()
                + ", trim watermark " + f.head().watermark() + ") and is not that committed batch");
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        SpiChecks.commit(log, fence, throughOffset);
        checkOpen();
        LogSlot slot = slot(log);
        slot.commitLock.lock();
        try {
            for (int attempt = 0; ; attempt++) {
                if (slot.known() && slot.epoch() > fence.epoch()) {
                    throw new FencedException(log, fence.epoch(), slot.epoch());
                }
                long tail = slot.tail();
                if (throughOffset <= tail) {
                    Head h = readHeadChecked(log, slot, fence);
                    slot.dropThrough(h.tail());
                    return;
                }
                List<Staged> chain = slot.chain(tail, throughOffset, fence.epoch());
                if (chain != null && writeChain(log, fence, tail, throughOffset, chain)) {
                    slot.observeTail(throughOffset);
                    slot.dropThrough(throughOffset);
                    return;
                }
                // Either the chain is incomplete or the conditional head update did not apply: ask the head why.
                Head h = readHeadChecked(log, slot, fence);
                if (throughOffset <= h.tail()) {
                    slot.dropThrough(h.tail());
                    return;
                }
                if (h.tail() != tail && attempt < 3) {
                    continue; // the cached tail was behind (e.g. an earlier commit's response was lost)
                }
                if (chain == null) {
                    throw new OffsetConflictException(log, "cannot commit through " + throughOffset
                            + ": an offset after the committed tail " + h.tail() + " is not staged under epoch "
                            + fence.epoch() + " in this provider instance, or " + throughOffset
                            + " falls inside a staged batch");
                }
                throw new WalStorageException(log, "commit through " + throughOffset
                        + " did not apply although fence and tail " + tail + " match");
            }
        } finally {
            slot.commitLock.unlock();
        }
    }

    /**
     * Writes a chain of staged batches and moves the head, atomically.
     *
     * @return true when the head moved; false when its conditions (epoch, expected tail) did not hold
     */
    private boolean writeChain(LogId log, Fence fence, long expectedTail, long through, List<Staged> chain) {
        long entries = 0;
        long bytes = 0;
        long frameBytes = 0;
        List<List<Staged>> parts = new ArrayList<>();
        List<Staged> part = new ArrayList<>();
        long partBytes = 0;
        for (Staged s : chain) {
            entries += s.count();
            bytes += s.payloadBytes();
            frameBytes += s.frame().length;
            if (!part.isEmpty() && partBytes + s.frame().length > COMMIT_STATEMENT_BYTES) {
                parts.add(part);
                part = new ArrayList<>();
                partBytes = 0;
            }
            part.add(s);
            partBytes += s.frame().length;
        }
        parts.add(part);
        long addEntries = entries;
        long addBytes = bytes;
        long addFrameBytes = frameBytes;
        HandleCallback<Boolean, RuntimeException> work = h -> {
            long[] result = bindRows(h.createQuery(sql.commit), parts.get(0))
                    .bind("through", through).bind("addEntries", addEntries).bind("addBytes", addBytes)
                    .bind("addFrameBytes", addFrameBytes).bind("tree", log.tree()).bind("part", log.partition())
                    .bind("epoch", fence.epoch()).bind("expectedTail", expectedTail)
                    .map((rs, ctx) -> new long[] {rs.getLong("updated"), rs.getLong("inserted"), rs.getLong("log_id")})
                    .one();
            if (result[0] == 0) {
                return false;
            }
            for (int i = 1; i < parts.size(); i++) {
                bindRows(h.createUpdate(sql.insertBatches), parts.get(i)).bind("logId", result[2]).execute();
            }
            return true;
        };
        try {
            return parts.size() == 1 ? call(log, "commit", work) : tx(log, "commit", work);
        } catch (WalStorageException e) {
            if (SqlFailures.UNIQUE_VIOLATION.equals(SqlFailures.sqlState(e))) {
                // Rows above the committed tail exist (never written by this protocol): let the caller decide.
                Head h = readHeadChecked(log, slot(log), fence);
                if (through <= h.tail()) {
                    return true;
                }
                throw new OffsetConflictException(log, "commit through " + through + ": batch rows already exist "
                        + "above the committed tail " + h.tail() + "; reconcile removes them", e);
            }
            throw e;
        }
    }

    private static <S extends org.jdbi.v3.core.statement.SqlStatement<S>> S bindRows(S statement, List<Staged> rows) {
        int n = rows.size();
        Long[] firsts = new Long[n];
        Long[] lasts = new Long[n];
        UUID[] ids = new UUID[n];
        Integer[] counts = new Integer[n];
        Long[] bytes = new Long[n];
        byte[][] frames = new byte[n][];
        for (int i = 0; i < n; i++) {
            Staged s = rows.get(i);
            firsts[i] = s.first();
            lasts[i] = s.last();
            ids[i] = uuid(s.id());
            counts[i] = s.count();
            bytes[i] = s.payloadBytes();
            frames[i] = s.frame();
        }
        return statement.bind("firsts", array("bigint", firsts)).bind("lasts", array("bigint", lasts))
                .bind("ids", array("uuid", ids)).bind("counts", array("integer", counts))
                .bind("bytes", array("bigint", bytes)).bind("frames", array("bytea", frames));
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        SpiChecks.abort(log, fence, staged);
        checkOpen();
        LogSlot slot = slots.get(log);
        if (slot == null) {
            return;
        }
        if (slot.epoch() > fence.epoch()) {
            throw new FencedException(log, fence.epoch(), slot.epoch());
        }
        slot.abort(staged.firstOffset(), staged.lastOffset(), staged.epoch(), staged.batchId());
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        checkOpen();
        long byteBudget = Math.min(maxBytes, READ_MAX_BYTES);
        int maxRows = Math.min(maxEntries, READ_MAX_ROWS);
        long entryBudget = Math.min(maxEntries, READ_MAX_ENTRIES);
        record Row(long tail, long watermark, long first, int count, byte[] frame) {
        }
        List<Row> rows = readOnly(log, "read", h -> h.createQuery(sql.read)
                .bind("tree", log.tree()).bind("part", log.partition()).bind("from", fromExclusive)
                .bind("maxRows", maxRows).bind("maxEntries", entryBudget).bind("maxBytes", byteBudget)
                .map((rs, ctx) -> {
                    Object first = rs.getObject("first_offset");
                    return new Row(rs.getLong("tail"), rs.getLong("watermark"),
                            first == null ? -1 : ((Number) first).longValue(), rs.getInt("entry_count"),
                            first == null ? null : rs.getBytes("frame"));
                })
                .list());
        if (rows.isEmpty()) {
            return new ReadPage(List.of(), -1);
        }
        long tail = rows.get(0).tail();
        long bound = Math.max(fromExclusive, rows.get(0).watermark());
        LogSlot slot = slots.get(log);
        if (slot != null) {
            slot.observeTail(tail);
        }
        List<LogEntry> out = new ArrayList<>();
        long bytes = 0;
        long expected = bound + 1;
        outer:
        for (Row r : rows) {
            if (r.frame() == null) {
                continue;
            }
            List<byte[]> payloads = BatchFrame.decode(log, r.first(), r.count(), r.frame());
            long offset = r.first();
            for (byte[] p : payloads) {
                if (offset > bound && offset <= tail) {
                    if (out.size() >= entryBudget || (!out.isEmpty() && bytes + p.length > byteBudget)) {
                        break outer;
                    }
                    if (offset != expected) {
                        throw new CorruptLogException(log, expected, "committed offsets " + expected + ".."
                                + (offset - 1) + " have no batch row");
                    }
                    out.add(new LogEntry(offset, p));
                    bytes += p.length;
                    expected = offset + 1;
                }
                offset++;
            }
        }
        if (out.isEmpty() && bound < tail) {
            throw new CorruptLogException(log, bound + 1, "committed offset " + (bound + 1) + " has no batch row");
        }
        return new ReadPage(out, tail);
    }

    @Override
    public LogState state(LogId log) {
        Objects.requireNonNull(log, "log");
        checkOpen();
        Optional<LogState> s = readOnly(log, "state", h -> h.createQuery(sql.state).bind("tree", log.tree())
                .bind("part", log.partition())
                .map((rs, ctx) -> {
                    long tail = rs.getLong("tail");
                    long watermark = rs.getLong("watermark");
                    long entries = rs.getLong("retained_entries");
                    long lowest = entries > 0 ? watermark + 1 : tail + 1;
                    return new LogState(lowest, tail, watermark, rs.getLong("epoch"), entries,
                            rs.getLong("retained_bytes"), rs.getLong("physical"));
                })
                .findOne());
        s.ifPresent(st -> {
            LogSlot slot = slots.get(log);
            if (slot != null) {
                slot.observeTail(st.committedTail());
            }
        });
        return s.orElse(LogState.EMPTY);
    }

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        SpiChecks.trim(log, fence, throughInclusive);
        checkOpen();
        LogSlot slot = slot(log);
        Head after = tx(log, "trim", h -> {
            Head head = lockHead(h, log, fence);
            if (throughInclusive <= head.watermark()) {
                return head;
            }
            long[] d = h.createQuery(sql.trimDelete).bind("logId", head.logId()).bind("through", throughInclusive)
                    .map((rs, ctx) -> new long[] {rs.getLong("entries"), rs.getLong("bytes"),
                            rs.getLong("frame_bytes")})
                    .one();
            long entries = d[0];
            long bytes = d[1];
            long frameBytes = d[2];
            record Straddler(long first, int count, byte[] frame) {
            }
            Optional<Straddler> st = h.createQuery(sql.trimStraddler).bind("logId", head.logId())
                    .bind("through", throughInclusive)
                    .map((rs, ctx) -> new Straddler(rs.getLong("first_offset"), rs.getInt("entry_count"),
                            rs.getBytes("frame")))
                    .findOne();
            if (st.isPresent()) {
                // Keep the rows above the watermark whole: cut the batch that straddles it.
                Straddler s = st.get();
                List<byte[]> payloads = BatchFrame.decode(log, s.first(), s.count(), s.frame());
                int drop = (int) (throughInclusive - s.first() + 1);
                long dropBytes = 0;
                for (int i = 0; i < drop; i++) {
                    dropBytes += payloads.get(i).length;
                }
                List<byte[]> keep = payloads.subList(drop, payloads.size());
                byte[] frame = BatchFrame.encode(throughInclusive + 1, keep);
                h.createUpdate(sql.trimRewrite).bind("newFirst", throughInclusive + 1).bind("count", keep.size())
                        .bind("bytes", sum(keep)).bind("frame", frame)
                        .bind("logId", head.logId()).bind("oldFirst", s.first()).execute();
                entries += drop;
                bytes += dropBytes;
                frameBytes += s.frame().length - frame.length;
            }
            return h.createQuery(sql.trimHead).bind("through", throughInclusive).bind("entries", entries)
                    .bind("bytes", bytes).bind("frameBytes", frameBytes).bind("logId", head.logId())
                    .bind("epoch", fence.epoch()).map(HEAD).findOne()
                    .orElseThrow(() -> new FencedException(log, fence.epoch(), -1));
        });
        slot.observe(after);
        slot.dropThrough(throughInclusive);
    }

    private static long sum(List<byte[]> payloads) {
        long n = 0;
        for (byte[] p : payloads) {
            n += p.length;
        }
        return n;
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        checkOpen();
        LogSlot slot = slot(log);
        record Result(Head head, int removed) {
        }
        Result r = tx(log, "reconcile", h -> {
            Head head = lockHead(h, log, fence);
            int removed = h.createUpdate(sql.reconcileDelete).bind("logId", head.logId()).bind("tail", head.tail())
                    .bind("watermark", head.watermark()).execute();
            return new Result(head, removed);
        });
        if (r.removed() > 0) {
            LOG.warn("reconcile of {} removed {} batch rows above the tail or at or below the trim watermark", log,
                    r.removed());
        }
        slot.observe(r.head());
        int rolledBack = slot.clearStaged();
        return new ReconcileResult(r.head().tail(), rolledBack, 0, r.removed());
    }

    @Override
    public CheckpointStore checkpoints() {
        return checkpoints;
    }

    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        checkOpen();
        List<Integer> parts = readOnly(null, "listing logs", h -> h.createQuery(sql.logs).bind("tree", tree)
                .mapTo(Integer.class).list());
        List<LogId> out = new ArrayList<>(parts.size());
        for (int p : parts) {
            out.add(new LogId(tree, p));
        }
        return out;
    }

    @Override
    public List<String> trees() {
        checkOpen();
        List<String> out = new ArrayList<>(readOnly(null, "listing trees", h -> h.createQuery(sql.trees)
                .mapTo(String.class).list()));
        out.sort(null);
        return out;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
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

    /** @return a 64-bit advisory-lock key for creating this schema: FNV-1a of a fixed prefix and the name */
    long schemaLockKey() {
        long h = 0xcbf29ce484222325L;
        for (byte b : ("lattice-postgres-schema:" + settings.schema).getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xFF;
            h *= 0x100000001b3L;
        }
        return h;
    }

    Jdbi jdbi() {
        return jdbi;
    }
}
