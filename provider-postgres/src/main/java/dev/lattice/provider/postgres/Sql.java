package dev.lattice.provider.postgres;

import java.util.List;

/**
 * The provider's SQL, with the schema name filled in (it was checked against {@code [a-z_][a-z0-9_]*}, so it needs
 * no escaping; it is quoted anyway). Named parameters use Jdbi's {@code :name} syntax. Immutable and thread-safe.
 *
 * <p>Schema version {@value #SCHEMA_VERSION}: tables {@code schema_version}, {@code log_head}, {@code log_batch},
 * {@code checkpoint}, {@code checkpoint_chunk}, the sequence {@code checkpoint_id_seq} and (new in version 2, added to
 * a version 1 schema by {@link SchemaManager}) the run tables {@code lattice_runs} and {@code lattice_run_chunk};
 * docs/providers/postgres.md describes every column.
 */
final class Sql {

    /** The version of the table layout this code reads and writes. */
    static final int SCHEMA_VERSION = 2;
    /** The previous layout (no run tables), upgraded on open. */
    static final int SCHEMA_VERSION_1 = 1;

    final String schema;
    final String versionTable;
    final List<String> ddl;
    final List<String> runDdl;
    final String upgradeVersion;
    final String readVersion;
    final String insertVersion;
    final String claim;
    final String head;
    final String headForUpdate;
    final String stagedLookup;
    final String commit;
    final String insertBatches;
    final String read;
    final String state;
    final String trimDelete;
    final String trimStraddler;
    final String trimRewrite;
    final String trimHead;
    final String reconcileDelete;
    final String logs;
    final String trees;
    final String checkpointPrecheck;
    final String nextCheckpointId;
    final String insertChunk;
    final String publishHead;
    final String deleteSameThrough;
    final String deleteChunks;
    final String insertCheckpoint;
    final String subtractCheckpointBytes;
    final String latestCheckpoint;
    final String findCheckpoint;
    final String readChunk;
    final String deleteBefore;
    final String headCheckpointForUpdate;
    /** Drop: the statements deleting a log's runs (bind {@code tree}, {@code part}). */
    final List<String> dropRuns;
    /** Drop: the statements deleting a log's other rows, head last (bind {@code logId}). */
    final List<String> dropLog;

    Sql(String schemaName) {
        this.schema = schemaName;
        String s = "\"" + schemaName + "\".";
        versionTable = schemaName + ".schema_version";
        runDdl = List.of(
                "CREATE TABLE IF NOT EXISTS " + s + "lattice_runs ("
                        + " tree text COLLATE \"C\" NOT NULL,"
                        + " part integer NOT NULL,"
                        + " run_id text COLLATE \"C\" NOT NULL,"
                        + " length_bytes bigint NOT NULL,"
                        + " crc integer NOT NULL,"
                        + " chunk_count integer NOT NULL,"
                        + " PRIMARY KEY (tree, part, run_id))",
                "CREATE TABLE IF NOT EXISTS " + s + "lattice_run_chunk ("
                        + " tree text COLLATE \"C\" NOT NULL,"
                        + " part integer NOT NULL,"
                        + " run_id text COLLATE \"C\" NOT NULL,"
                        + " seq integer NOT NULL,"
                        + " crc integer NOT NULL,"
                        + " data bytea NOT NULL,"
                        + " PRIMARY KEY (tree, part, run_id, seq))");
        upgradeVersion = "UPDATE " + s + "schema_version SET version = :to WHERE version = :from";
        List<String> all = new java.util.ArrayList<>(List.of(
                "CREATE SCHEMA IF NOT EXISTS \"" + schemaName + "\"",
                "CREATE TABLE IF NOT EXISTS " + s + "schema_version ("
                        + " singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),"
                        + " version integer NOT NULL,"
                        + " created_at timestamptz NOT NULL DEFAULT now())",
                "CREATE TABLE IF NOT EXISTS " + s + "log_head ("
                        + " log_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                        + " tree text COLLATE \"C\" NOT NULL,"
                        + " part integer NOT NULL,"
                        + " epoch bigint NOT NULL,"
                        + " tail bigint NOT NULL DEFAULT -1,"
                        + " watermark bigint NOT NULL DEFAULT -1,"
                        + " retained_entries bigint NOT NULL DEFAULT 0,"
                        + " retained_bytes bigint NOT NULL DEFAULT 0,"
                        + " frame_bytes bigint NOT NULL DEFAULT 0,"
                        + " checkpoint_bytes bigint NOT NULL DEFAULT 0,"
                        + " checkpoint_id bigint,"
                        + " UNIQUE (tree, part))",
                "CREATE TABLE IF NOT EXISTS " + s + "log_batch ("
                        + " log_id bigint NOT NULL,"
                        + " first_offset bigint NOT NULL,"
                        + " last_offset bigint NOT NULL,"
                        + " batch_id uuid NOT NULL,"
                        + " entry_count integer NOT NULL,"
                        + " payload_bytes bigint NOT NULL,"
                        + " frame bytea NOT NULL,"
                        + " PRIMARY KEY (log_id, first_offset))",
                "CREATE SEQUENCE IF NOT EXISTS " + s + "checkpoint_id_seq",
                "CREATE TABLE IF NOT EXISTS " + s + "checkpoint ("
                        + " checkpoint_id bigint PRIMARY KEY,"
                        + " log_id bigint NOT NULL,"
                        + " through_offset bigint NOT NULL,"
                        + " format_version integer NOT NULL,"
                        + " size_bytes bigint NOT NULL,"
                        + " epoch bigint NOT NULL,"
                        + " chunk_count integer NOT NULL,"
                        + " UNIQUE (log_id, through_offset))",
                "CREATE TABLE IF NOT EXISTS " + s + "checkpoint_chunk ("
                        + " checkpoint_id bigint NOT NULL,"
                        + " seq integer NOT NULL,"
                        + " crc integer NOT NULL,"
                        + " data bytea NOT NULL,"
                        + " PRIMARY KEY (checkpoint_id, seq))"));
        all.addAll(runDdl);
        ddl = List.copyOf(all);
        readVersion = "SELECT version FROM " + s + "schema_version";
        insertVersion = "INSERT INTO " + s + "schema_version (version) VALUES (:version) ON CONFLICT DO NOTHING";

        String headCols = "log_id, epoch, tail, watermark";
        claim = "INSERT INTO " + s + "log_head AS h (tree, part, epoch) VALUES (:tree, :part, 1)"
                + " ON CONFLICT (tree, part) DO UPDATE SET epoch = h.epoch + 1"
                + " RETURNING " + headCols;
        head = "SELECT " + headCols + " FROM " + s + "log_head WHERE tree = :tree AND part = :part";
        headForUpdate = head + " FOR UPDATE";
        stagedLookup = "SELECT h.log_id, h.epoch, h.tail, h.watermark, b.last_offset, b.batch_id"
                + " FROM " + s + "log_head h LEFT JOIN " + s + "log_batch b"
                + " ON b.log_id = h.log_id AND b.first_offset = :first"
                + " WHERE h.tree = :tree AND h.part = :part";

        String unnest = "unnest(CAST(:firsts AS bigint[]), CAST(:lasts AS bigint[]), CAST(:ids AS uuid[]),"
                + " CAST(:counts AS integer[]), CAST(:bytes AS bigint[]), CAST(:frames AS bytea[]))"
                + " AS u(f, l, id, c, b, fr)";
        String batchCols = "(log_id, first_offset, last_offset, batch_id, entry_count, payload_bytes, frame)";
        // One statement: the fenced, tail-checked head update and the rows of the batches it publishes.
        commit = "WITH h AS ("
                + " UPDATE " + s + "log_head SET tail = :through,"
                + " retained_entries = retained_entries + :addEntries,"
                + " retained_bytes = retained_bytes + :addBytes,"
                + " frame_bytes = frame_bytes + :addFrameBytes"
                + " WHERE tree = :tree AND part = :part AND epoch = :epoch AND tail = :expectedTail"
                + " RETURNING log_id),"
                + " ins AS (INSERT INTO " + s + "log_batch " + batchCols
                + " SELECT h.log_id, u.f, u.l, u.id, u.c, u.b, u.fr FROM h, " + unnest + " RETURNING 1)"
                + " SELECT (SELECT count(*) FROM h) AS updated, (SELECT count(*) FROM ins) AS inserted,"
                + " (SELECT log_id FROM h) AS log_id";
        insertBatches = "INSERT INTO " + s + "log_batch " + batchCols
                + " SELECT CAST(:logId AS bigint), u.f, u.l, u.id, u.c, u.b, u.fr FROM " + unnest;

        // One statement: the head (tail, watermark) and a bounded range of batch rows after the bound. The first row
        // is found by a backward index probe; every row has at least one entry, so no row starting above
        // bound + maxEntries is needed: the primary-key range scan is bounded on both ends. The window sums let the
        // server send only rows inside the page's entry and byte budget (bytes of a partly read first row are
        // estimated; Java cuts exactly).
        read = "SELECT h.tail, h.watermark, r.first_offset, r.entry_count, r.frame"
                + " FROM " + s + "log_head h"
                + " CROSS JOIN LATERAL (SELECT x.bound, CASE WHEN x.bound > 9223372036854775807 - :maxEntries"
                + "  THEN 9223372036854775807 ELSE x.bound + :maxEntries END AS upper"
                + "  FROM (SELECT greatest(CAST(:from AS bigint), h.watermark) AS bound) x) g"
                + " LEFT JOIN LATERAL ("
                + "  SELECT z.first_offset, z.entry_count, z.frame FROM ("
                + "   SELECT y.first_offset, y.entry_count, y.frame,"
                + "    sum(y.eff) OVER w - y.eff AS entries_before,"
                + "    sum(y.eff_bytes) OVER w - y.eff_bytes AS bytes_before"
                + "   FROM ("
                + "    SELECT b.first_offset, b.entry_count, b.frame,"
                + "     least(b.entry_count, b.last_offset - g.bound) AS eff,"
                + "     b.payload_bytes * least(b.entry_count, b.last_offset - g.bound) / b.entry_count AS eff_bytes"
                + "    FROM " + s + "log_batch b"
                + "    WHERE b.log_id = h.log_id"
                + "     AND b.first_offset >= coalesce((SELECT max(m.first_offset) FROM " + s + "log_batch m"
                + "      WHERE m.log_id = h.log_id AND m.first_offset <= g.bound), -1)"
                + "     AND b.first_offset <= g.upper AND b.last_offset > g.bound"
                + "    ORDER BY b.first_offset LIMIT :maxRows) y"
                + "   WINDOW w AS (ORDER BY y.first_offset ROWS UNBOUNDED PRECEDING)) z"
                + "  WHERE z.entries_before < :maxEntries AND (z.bytes_before < :maxBytes OR z.entries_before = 0)"
                + " ) r ON true"
                + " WHERE h.tree = :tree AND h.part = :part"
                + " ORDER BY r.first_offset";
        state = "SELECT epoch, tail, watermark, retained_entries, retained_bytes, frame_bytes + checkpoint_bytes"
                + " AS physical FROM " + s + "log_head WHERE tree = :tree AND part = :part";

        trimDelete = "WITH d AS (DELETE FROM " + s + "log_batch WHERE log_id = :logId"
                + " AND first_offset <= :through AND last_offset <= :through"
                + " RETURNING entry_count, payload_bytes, octet_length(frame) AS fb)"
                + " SELECT count(*) AS rows, coalesce(sum(entry_count), 0) AS entries,"
                + " coalesce(sum(payload_bytes), 0) AS bytes, coalesce(sum(fb), 0) AS frame_bytes FROM d";
        trimStraddler = "SELECT first_offset, last_offset, entry_count, frame FROM " + s + "log_batch"
                + " WHERE log_id = :logId AND first_offset <= :through AND last_offset > :through";
        trimRewrite = "UPDATE " + s + "log_batch SET first_offset = :newFirst, entry_count = :count,"
                + " payload_bytes = :bytes, frame = :frame WHERE log_id = :logId AND first_offset = :oldFirst";
        trimHead = "UPDATE " + s + "log_head SET watermark = :through, tail = greatest(tail, :through),"
                + " retained_entries = retained_entries - :entries, retained_bytes = retained_bytes - :bytes,"
                + " frame_bytes = frame_bytes - :frameBytes"
                + " WHERE log_id = :logId AND epoch = :epoch RETURNING " + headCols;
        reconcileDelete = "DELETE FROM " + s + "log_batch WHERE log_id = :logId AND (first_offset > :tail"
                + " OR (first_offset <= :watermark AND last_offset <= :watermark))";
        logs = "SELECT part FROM " + s + "log_head WHERE tree = :tree ORDER BY part";
        trees = "SELECT DISTINCT tree FROM " + s + "log_head";

        checkpointPrecheck = "SELECT h.log_id, h.epoch, h.tail, c.through_offset AS latest"
                + " FROM " + s + "log_head h LEFT JOIN " + s + "checkpoint c ON c.checkpoint_id = h.checkpoint_id"
                + " WHERE h.tree = :tree AND h.part = :part";
        nextCheckpointId = "SELECT nextval('" + s + "checkpoint_id_seq')";
        insertChunk = "INSERT INTO " + s + "checkpoint_chunk (checkpoint_id, seq, crc, data)"
                + " VALUES (:id, :seq, :crc, :data)";
        // The publish point: fenced, bounded by the tail and by the latest checkpoint, in the publishing transaction.
        publishHead = "UPDATE " + s + "log_head h SET checkpoint_id = :id, checkpoint_bytes = checkpoint_bytes + :size"
                + " WHERE h.log_id = :logId AND h.epoch = :epoch AND h.tail >= :through"
                + " AND coalesce((SELECT c.through_offset FROM " + s + "checkpoint c"
                + "  WHERE c.checkpoint_id = h.checkpoint_id), -2) <= :through"
                + " RETURNING h.log_id";
        deleteSameThrough = "DELETE FROM " + s + "checkpoint WHERE log_id = :logId AND through_offset = :through"
                + " RETURNING checkpoint_id, size_bytes";
        deleteChunks = "DELETE FROM " + s + "checkpoint_chunk WHERE checkpoint_id = ANY(CAST(:ids AS bigint[]))";
        insertCheckpoint = "INSERT INTO " + s + "checkpoint (checkpoint_id, log_id, through_offset, format_version,"
                + " size_bytes, epoch, chunk_count) VALUES (:id, :logId, :through, :format, :size, :epoch, :chunks)";
        subtractCheckpointBytes = "UPDATE " + s + "log_head SET checkpoint_bytes = checkpoint_bytes - :size"
                + " WHERE log_id = :logId";
        latestCheckpoint = "SELECT c.checkpoint_id, c.through_offset, c.format_version, c.size_bytes, c.epoch,"
                + " c.chunk_count FROM " + s + "log_head h JOIN " + s + "checkpoint c ON c.checkpoint_id = h.checkpoint_id"
                + " WHERE h.tree = :tree AND h.part = :part";
        findCheckpoint = "SELECT c.checkpoint_id, c.through_offset, c.format_version, c.size_bytes, c.epoch,"
                + " c.chunk_count FROM " + s + "log_head h JOIN " + s + "checkpoint c ON c.log_id = h.log_id"
                + " WHERE h.tree = :tree AND h.part = :part AND c.through_offset = :through";
        readChunk = "SELECT crc, data FROM " + s + "checkpoint_chunk WHERE checkpoint_id = :id AND seq = :seq";
        headCheckpointForUpdate = "SELECT log_id, checkpoint_id FROM " + s + "log_head"
                + " WHERE tree = :tree AND part = :part FOR UPDATE";
        dropRuns = List.of(
                "DELETE FROM " + s + "lattice_run_chunk WHERE tree = :tree AND part = :part",
                "DELETE FROM " + s + "lattice_runs WHERE tree = :tree AND part = :part");
        dropLog = List.of(
                "DELETE FROM " + s + "log_batch WHERE log_id = :logId",
                "UPDATE " + s + "log_head SET checkpoint_id = NULL WHERE log_id = :logId",
                "DELETE FROM " + s + "checkpoint_chunk WHERE checkpoint_id IN (SELECT checkpoint_id FROM " + s
                        + "checkpoint WHERE log_id = :logId)",
                "DELETE FROM " + s + "checkpoint WHERE log_id = :logId",
                "DELETE FROM " + s + "log_head WHERE log_id = :logId");
        deleteBefore = "DELETE FROM " + s + "checkpoint WHERE log_id = :logId AND through_offset < :before"
                + " AND checkpoint_id <> coalesce(CAST(:keep AS bigint), -1) RETURNING checkpoint_id, size_bytes";
    }
}
