package dev.lattice.conformance;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.WalStorageProvider;

import java.util.List;
import java.util.Optional;

import static dev.lattice.conformance.WalTestSupport.readAll;

/**
 * What a log looks like from outside: its committed state (without {@code physicalBytes}, which may move for
 * housekeeping), its entries and its latest checkpoint. Immutable.
 *
 * @param lowestOffset {@link LogState#lowestOffset()}
 * @param committedTail {@link LogState#committedTail()}
 * @param trimWatermark {@link LogState#trimWatermark()}
 * @param epoch {@link LogState#epoch()}
 * @param retainedEntries {@link LogState#retainedEntries()}
 * @param retainedPayloadBytes {@link LogState#retainedPayloadBytes()}
 * @param entries every readable entry
 * @param checkpoint the latest checkpoint
 */
public record LogSnapshot(long lowestOffset, long committedTail, long trimWatermark, long epoch,
                          long retainedEntries, long retainedPayloadBytes, List<LogEntry> entries,
                          Optional<CheckpointInfo> checkpoint) {

    /**
     * Takes a snapshot: {@code state}, every entry ({@link WalTestSupport#readAll}) and {@code latest}.
     *
     * @param p the provider
     * @param log the log
     * @return the snapshot
     * @throws AssertionError when the read pages break the read contract
     */
    public static LogSnapshot of(WalStorageProvider p, LogId log) {
        LogState s = p.state(log);
        return new LogSnapshot(s.lowestOffset(), s.committedTail(), s.trimWatermark(), s.epoch(),
                s.retainedEntries(), s.retainedPayloadBytes(), readAll(p, log), p.checkpoints().latest(log));
    }
}
