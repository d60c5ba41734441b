package dev.lattice.provider.postgres;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.argument.Argument;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Backend-call part of the protocol: every database round trip of the provider goes through here (autocommit call,
 * retried read-only call, transaction), with driver failures mapped to the SPI's exceptions by {@link SqlFailures}
 * (see docs/providers/postgres.md, "Errors"). Also holds the provider's open/closed flag.
 *
 * <p>Thread-safe.
 */
final class PostgresCalls {

    /** Attempts of a read-only call when the connection turns out to be lost. */
    static final int READ_ATTEMPTS = 3;

    private final Jdbi jdbi;
    private final Sql sql;
    private final PostgresSettings settings;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Creates the call layer.
     *
     * @param dataSource connections to the database
     * @param settings the provider's settings (schema, limits)
     */
    PostgresCalls(DataSource dataSource, PostgresSettings settings) {
        this.jdbi = Jdbi.create(dataSource);
        this.sql = new Sql(settings.schema);
        this.settings = settings;
    }

    /** @return the statements of the provider's schema */
    Sql sql() {
        return sql;
    }

    /** @return the provider's settings */
    PostgresSettings settings() {
        return settings;
    }

    /**
     * Throws when the provider is closed.
     *
     * @throws IllegalStateException if {@link #markClosed()} was called
     */
    void checkOpen() {
        SpiChecks.open(closed.get(), PostgresWalStorageProvider.NAME);
    }

    /**
     * Marks the provider closed.
     *
     * @return true on the first call
     */
    boolean markClosed() {
        return closed.compareAndSet(false, true);
    }

    /**
     * Runs a callback on a pooled handle (autocommit), mapping failures to the SPI's exceptions.
     *
     * @param log the log, for messages (may be null)
     * @param operation what is being done, for messages
     * @param callback the work
     * @param <T> the result type
     * @return the callback's result
     * @throws dev.lattice.spi.ProviderUnavailableException on connection loss, timeouts, serialization failures
     * @throws WalStorageException on any other database failure
     * @throws IllegalStateException if the provider was closed meanwhile
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
     * @param log the log, for messages (may be null)
     * @param operation what is being done, for messages
     * @param callback the read-only work
     * @param <T> the result type
     * @return the callback's result
     * @throws dev.lattice.spi.ProviderUnavailableException as {@link #call}, after the last attempt
     * @throws WalStorageException on any other database failure
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
     * @param log the log, for messages (may be null)
     * @param operation what is being done, for messages
     * @param callback the work
     * @param <T> the result type
     * @return the callback's result
     * @throws dev.lattice.spi.ProviderUnavailableException as {@link #call}
     * @throws WalStorageException on any other database failure
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
            return new IllegalStateException("provider '" + PostgresWalStorageProvider.NAME + "' was closed during "
                    + operation, e);
        }
        return SqlFailures.wrap(log, operation, e);
    }

    /**
     * An argument binding a Java array as a PostgreSQL array.
     *
     * @param type the PostgreSQL element type ({@code bigint}, {@code uuid}, ...)
     * @param values the elements
     * @return the argument
     */
    static Argument array(String type, Object[] values) {
        return (position, statement, ctx) -> statement.setArray(position,
                statement.getConnection().createArrayOf(type, values));
    }

    /**
     * A batch id as the {@code uuid} stored in {@code log_batch.batch_id}.
     *
     * @param id the id
     * @return the same 128 bits
     */
    static UUID uuid(BatchId id) {
        return new UUID(id.high(), id.low());
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
}
