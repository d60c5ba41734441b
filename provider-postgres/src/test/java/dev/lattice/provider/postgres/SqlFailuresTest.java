package dev.lattice.provider.postgres;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import org.jdbi.v3.core.statement.UnableToExecuteStatementException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.EOFException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static org.assertj.core.api.Assertions.assertThat;

/** The SQLState mapping of {@link SqlFailures}, on exceptions shaped like pgjdbc's wrapped by Jdbi. */
class SqlFailuresTest {

    private static final LogId LOG = new LogId("t", 1);

    private static RuntimeException jdbi(SQLException e) {
        return new UnableToExecuteStatementException(e, null);
    }

    /** Serialization failure, deadlock, connection loss, shutdown and resource states are transient. */
    @ParameterizedTest
    @ValueSource(strings = {"40001", "40P01", "08006", "08001", "08003", "57P01", "57P02", "57P03", "55P03", "57014",
        "53300"})
    void transientStatesBecomeProviderUnavailable(String state) {
        WalStorageException e = SqlFailures.wrap(LOG, "commit", jdbi(new SQLException("boom", state)));
        assertThat(e).isInstanceOf(ProviderUnavailableException.class).hasMessageContaining(state)
                .hasMessageContaining("commit");
        assertThat(e.log()).isEqualTo(LOG);
        assertThat(e.getCause()).isInstanceOf(UnableToExecuteStatementException.class);
    }

    /** Other states (unique violation, undefined table, authentication) are permanent WalStorageExceptions. */
    @ParameterizedTest
    @ValueSource(strings = {"23505", "42P01", "28P01", "3D000"})
    void otherStatesArePermanent(String state) {
        WalStorageException e = SqlFailures.wrap(LOG, "trim", jdbi(new SQLException("no", state)));
        assertThat(e).isNotInstanceOf(ProviderUnavailableException.class).hasMessageContaining(state);
    }

    /** A pool timeout and a bare I/O failure are transient; only class 08 and 57P0x count as a lost connection. */
    @Test
    void poolTimeoutsAndIoErrorsAreTransient() {
        assertThat(SqlFailures.wrap(null, "read", jdbi(new SQLTransientConnectionException("pool timeout"))))
                .isInstanceOf(ProviderUnavailableException.class);
        assertThat(SqlFailures.wrap(null, "read", new RuntimeException(new EOFException("socket closed"))))
                .isInstanceOf(ProviderUnavailableException.class);
        assertThat(SqlFailures.isConnectionLoss(jdbi(new SQLException("x", "08006")))).isTrue();
        assertThat(SqlFailures.isConnectionLoss(jdbi(new SQLException("x", "57P01")))).isTrue();
        assertThat(SqlFailures.isConnectionLoss(jdbi(new SQLException("x", "40001")))).isFalse();
        assertThat(SqlFailures.sqlState(new RuntimeException("no sql"))).isNull();
    }
}
