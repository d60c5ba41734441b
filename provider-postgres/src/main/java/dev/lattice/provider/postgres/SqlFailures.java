package dev.lattice.provider.postgres;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;

import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

/**
 * Maps driver, pool and Jdbi failures to the SPI's exceptions, by SQLState (PostgreSQL's error codes, appendix A
 * of its manual). Unique violations never get here: each call site handles them where it knows what they mean.
 * Stateless and thread-safe.
 */
final class SqlFailures {

    /** SQLState of a unique-key violation. */
    static final String UNIQUE_VIOLATION = "23505";

    /**
     * Transient states: serialization failure, deadlock, admin/crash shutdown, cannot connect now, lock not
     * available, query cancelled (statement timeout), too many connections, out of memory.
     */
    private static final Set<String> TRANSIENT = Set.of("40001", "40P01", "57P01", "57P02", "57P03", "55P03", "57014",
            "53300", "53200", "53400");

    private SqlFailures() {
    }

    /**
     * The first {@link SQLException} in a cause chain.
     *
     * @param t the failure
     * @return the SQL exception, or null when there is none
     */
    static SQLException sqlCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException) {
                return (SQLException) c;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return null;
    }

    /**
     * The SQLState of the first {@link SQLException} in a cause chain.
     *
     * @param t the failure
     * @return the state, or null
     */
    static String sqlState(Throwable t) {
        SQLException s = sqlCause(t);
        return s == null ? null : s.getSQLState();
    }

    /**
     * Whether a failure is transient: connection lost or refused (class 08), serialization failure or deadlock
     * (40001, 40P01), server shutting down (57P01..03), lock or resource limits, a pool timeout, or an I/O error.
     *
     * @param t the failure
     * @return true when retrying may succeed
     */
    static boolean isTransient(Throwable t) {
        SQLException s = sqlCause(t);
        if (s != null) {
            String state = s.getSQLState();
            if (state != null && (state.startsWith("08") || TRANSIENT.contains(state))) {
                return true;
            }
            if (s instanceof SQLTransientException || s instanceof SQLRecoverableException) {
                return true;
            }
        }
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof IOException) {
                return true;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return false;
    }

    /**
     * Whether a failure means the connection is gone (class 08, or the server terminated the backend: 57P01..03),
     * so the same read on another connection may succeed.
     *
     * @param t the failure
     * @return true for a lost connection
     */
    static boolean isConnectionLoss(Throwable t) {
        String state = sqlState(t);
        return state != null && (state.startsWith("08") || state.startsWith("57P0"));
    }

    /**
     * Wraps a backend failure: {@link ProviderUnavailableException} when transient, else
     * {@link WalStorageException}. The message names the operation and the SQLState; the cause is attached. Messages
     * of PostgreSQL and pgjdbc never carry the password, and the provider never binds it as a statement argument.
     *
     * @param log the log, or null
     * @param operation what was being done, e.g. {@code "commit"}
     * @param t the failure
     * @return the exception to throw
     */
    static WalStorageException wrap(LogId log, String operation, Throwable t) {
        SQLException s = sqlCause(t);
        String detail = s == null ? t.getClass().getSimpleName() + ": " + t.getMessage()
                : "SQLState " + s.getSQLState() + ": " + firstLine(s.getMessage());
        if (isTransient(t)) {
            return new ProviderUnavailableException(log, operation + " failed, outcome unknown (" + detail + ")", t);
        }
        return new WalStorageException(log, operation + " failed (" + detail + ")", t);
    }

    /**
     * The failure of an open's first connection: says that it could not connect, to which server (never the
     * password), how long it tried and within which timeout, and the driver's reason. Transient failures (refused,
     * unreachable, timed out, server starting or shutting down) give {@link ProviderUnavailableException}; others
     * (authentication, a missing database) {@link WalStorageException}.
     *
     * @param s the settings
     * @param elapsedMillis how long the attempt took
     * @param t the failure
     * @return the exception to throw
     */
    static WalStorageException connectFailure(PostgresSettings s, long elapsedMillis, Throwable t) {
        SQLException sql = sqlCause(t);
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String reason = sql != null ? "SQLState " + sql.getSQLState() + ": " + firstLine(sql.getMessage())
                : root.getClass().getSimpleName() + ": " + firstLine(root.getMessage());
        String what = "could not connect to " + s + " (tried for " + elapsedMillis + " ms, connectTimeout "
                + s.connectTimeout.toMillis() + " ms): " + reason;
        if (isTransient(t)) {
            return new ProviderUnavailableException(null, what, t);
        }
        return new WalStorageException(null, what, t);
    }

    private static String firstLine(String m) {
        if (m == null) {
            return "";
        }
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
