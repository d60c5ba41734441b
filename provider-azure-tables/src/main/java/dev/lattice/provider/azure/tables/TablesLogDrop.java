package dev.lattice.provider.azure.tables;

import dev.lattice.provider.azure.tables.Records.Head;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Protocol part: dropping a log (docs/providers/azure-tables.md, "Drop"). Deletes the log's run partitions, its
 * checkpoint partitions, then every row of its log partition but the head, and the head row last: the head is what
 * makes the log exist ({@code logs}, {@code state}, fencing), so a drop cut short at any request leaves a log that is
 * still listed and that the next claim plus drop finishes. Thread-safe (stateless but for the shared calls).
 */
final class TablesLogDrop {

    private final TablesCalls calls;

    /**
     * Creates the drop path.
     *
     * @param calls the backend calls
     */
    TablesLogDrop(TablesCalls calls) {
        this.calls = calls;
    }

    /**
     * Drops a log (arguments validated); see {@link dev.lattice.spi.WalStorageProvider#drop}. Requests: 1 head read,
     * 1 query per key range (runs, checkpoints, log partition) plus 1 delete transaction per 100 rows.
     *
     * @param log the log
     * @param fence the caller's fence
     * @throws dev.lattice.spi.FencedException if the head shows a newer epoch (nothing deleted)
     */
    void drop(LogId log, Fence fence) {
        Head head = calls.readHead(log);
        if (head == null) {
            return;
        }
        TablesCalls.checkFence(log, head, fence);
        String logPk = Keys.logPartition(log);
        deleteRange(log, "dropping the log's runs", "PartitionKey ge " + Keys.quote("R" + logPk.substring(1) + "|")
                + " and PartitionKey lt " + Keys.quote("R" + logPk.substring(1) + "}"));
        deleteRange(log, "dropping the log's checkpoints", "PartitionKey ge "
                + Keys.quote(Keys.checkpointPartitionsLow(log)) + " and PartitionKey lt "
                + Keys.quote(Keys.checkpointPartitionsHigh(log)));
        List<String> rows = new ArrayList<>();
        calls.queryAll(log, "dropping the log's rows", "PartitionKey eq " + Keys.quote(logPk), List.of("RowKey"),
                TablesCalls.QUERY_TOP, e -> {
                    if (!Keys.HEAD.equals(e.getRowKey())) {
                        rows.add(e.getRowKey());
                    }
                    return true;
                });
        calls.deleteRows(log, "dropping the log's rows", logPk, rows);
        calls.deleteRows(log, "dropping the log's head", logPk, List.of(Keys.HEAD));
    }

    /** Deletes every row the filter matches, grouped by partition (a transaction holds one partition's rows). */
    private void deleteRange(LogId log, String what, String filter) {
        Map<String, List<String>> byPartition = new LinkedHashMap<>();
        calls.queryAll(log, what, filter, List.of("PartitionKey", "RowKey"), TablesCalls.QUERY_TOP, e -> {
            byPartition.computeIfAbsent(e.getPartitionKey(), k -> new ArrayList<>()).add(e.getRowKey());
            return true;
        });
        byPartition.forEach((pk, rks) -> calls.deleteRows(log, what, pk, rks));
    }
}
