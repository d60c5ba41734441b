package dev.lattice.provider.azure.tables;

import com.azure.core.exception.HttpResponseException;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableServiceException;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import com.azure.data.tables.models.TableTransactionFailedException;
import dev.lattice.provider.azure.tables.Records.CommittedBatch;
import dev.lattice.provider.azure.tables.Records.Head;
import dev.lattice.provider.azure.tables.Records.Manifest;
import dev.lattice.provider.azure.tables.Records.StagedHeader;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;

/**
 * Protocol part: the backend calls. Every request to the table goes through here: point reads of the head row, the
 * combined head-and-staged-headers query, paged queries, transactions, single-entity inserts and row deletion, with
 * the mapping of the service's failures to {@link WalStorageException} / {@link ProviderUnavailableException} and
 * the back-off after a lost conditional update. See docs/providers/azure-tables.md.
 *
 * <p>Thread-safe: the only state is a map of the highest tail seen per log (tails never decrease).
 */
final class TablesCalls {

    /** How often a conditional head update is retried after losing a race against the same writer. */
    static final int MAX_HEAD_RACES = 200;
    /** Page size of queries. */
    static final int QUERY_TOP = 1000;
    private static final Set<String> TRANSIENT_CODES = Set.of("ServerBusy", "OperationTimedOut", "InternalError",
            "TableBeingDeleted", "Timeout");
    /** Properties of the head row and of staged batch headers, for the combined query. */
    private static final List<String> HEAD_AND_HEADER_SELECT = List.of("PartitionKey", "RowKey", "V", "E", "T", "W",
            "R", "CG", "CT", "CF", "CS", "CE", "CH", "CN", "F", "L", "X", "N", "B", "H");

    private final TableGateway table;
    /** Highest committed tail this instance has seen per log partition (tails never decrease). */
    private final ConcurrentHashMap<String, Long> tailHints = new ConcurrentHashMap<>();

    TablesCalls(TableGateway table) {
        this.table = Objects.requireNonNull(table, "table");
    }

    /** @return the gateway */
    TableGateway table() {
        return table;
    }

    Head readHead(LogId log) {
        TableEntity e;
        try {
            e = table.get(Keys.logPartition(log), Keys.HEAD);
        } catch (RuntimeException ex) {
            throw failure(log, "reading the head row", ex);
        }
        return e == null ? null : parseHead(log, e);
    }

    Head parseHead(LogId log, TableEntity e) {
        Head head;
        try {
            head = Head.fromEntity(e);
        } catch (IllegalStateException ex) {
            throw new CorruptLogException(log, -1, "head row: " + ex.getMessage(), ex);
        }
        tailHints.merge(Keys.logPartition(log), head.tail(), Math::max);
        return head;
    }

    /**
     * The head and the headers of batches staged (under any epoch) above the tail with first offsets up to
     * {@code through}. When this instance has seen the log's tail before, both come from one query: the head row
     * plus the data-row headers from that earlier tail on (the tail never decreases, so nothing is missed; rows
     * between the earlier and the current tail are dropped here). Otherwise two requests.
     */
    HeadAndStaged readHeadAndStaged(LogId log, long through) {
        String pk = Keys.logPartition(log);
        Long hint = tailHints.get(pk);
        if (hint == null || hint + 1 > through) {
            Head head = readHead(log);
            return new HeadAndStaged(head, head == null || head.tail() >= through ? List.of()
                    : stagedHeaders(log, head.tail() + 1, through));
        }
        // One RowKey range (no 'or' on keys, which the service would run as a partition scan): data rows from
        // the earlier tail up to the head row 'H'; X eq 0 keeps batch headers and the head (which carries X = 0).
        String filter = Keys.rowRange(pk, Keys.dataFrom(hint + 1), Keys.HEAD_END) + " and X eq 0";
        TableEntity[] headRow = {null};
        List<TableEntity> headers = new ArrayList<>();
        queryAll(log, "reading the head and staged batches", filter, HEAD_AND_HEADER_SELECT, QUERY_TOP, e -> {
            if (e.getRowKey().equals(Keys.HEAD)) {
                headRow[0] = e;
            } else {
                headers.add(e);
            }
            return true;
        });
        if (headRow[0] == null) {
            Head head = readHead(log); // a head without X (or none): the two-request way
            return new HeadAndStaged(head, head == null || head.tail() >= through ? List.of()
                    : stagedHeaders(log, head.tail() + 1, through));
        }
        Head head = parseHead(log, headRow[0]);
        List<StagedHeader> staged = new ArrayList<>();
        for (TableEntity e : headers) {
            StagedHeader s = StagedHeader.fromEntity(e);
            if (s.first() > head.tail() && s.first() <= through) {
                staged.add(s);
            }
        }
        return new HeadAndStaged(head, staged);
    }

    /**
     * A head row and staged batch headers read together.
     *
     * @param head the head, or null when the log has none
     * @param staged headers of batches staged above the head's tail
     */
    record HeadAndStaged(Head head, List<StagedHeader> staged) {
    }

    static void checkFence(LogId log, Head head, Fence fence) {
        long current = head == null ? 0 : head.epoch();
        if (fence.epoch() > current) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this table (the log's epoch"
                    + " is " + current + ")");
        }
        if (fence.epoch() < current) {
            throw new FencedException(log, fence.epoch(), current);
        }
    }

    /** Headers of batches staged (under any epoch) with first offsets in {@code from..through}. */
    List<StagedHeader> stagedHeaders(LogId log, long from, long through) {
        List<StagedHeader> out = new ArrayList<>();
        queryAll(log, "reading staged batches", Keys.rowRange(Keys.logPartition(log), Keys.dataFrom(from),
                Keys.dataThrough(through)) + " and X eq 0", StagedHeader.SELECT, QUERY_TOP, e -> {
                    out.add(StagedHeader.fromEntity(e));
                    return true;
                });
        return out;
    }

    /** The committed batch holding {@code offset} (above the watermark), from the manifest, or null. */
    CommittedBatch findCommitted(LogId log, long offset) {
        CommittedBatch[] found = {null};
        queryAll(log, "reading the manifest", Keys.rowRange(Keys.logPartition(log), Keys.manifest(offset),
                Keys.MANIFEST_END), null, 1, e -> {
                    for (CommittedBatch b : Manifest.fromEntity(e)) {
                        if (b.first() <= offset && offset <= b.last()) {
                            found[0] = b;
                        }
                    }
                    return false;
                });
        return found[0];
    }

    /**
     * Runs a query to its end, following continuation tokens (also past pages that come back empty with a token).
     *
     * @param visitor called per entity; returns false to stop early
     */
    void queryAll(LogId log, String what, String filter, List<String> select, int top,
                          Predicate<TableEntity> visitor) {
        queryAll(log, what, filter, select, top, top, visitor);
    }

    /**
     * Like {@link #queryAll(LogId, String, String, List, int, Predicate)}, with a page size that starts at
     * {@code firstTop} and grows fourfold per page up to {@code maxTop}: few rows when the caller stops early, few
     * requests when it does not.
     */
    void queryAll(LogId log, String what, String filter, List<String> select, int firstTop, int maxTop,
                          Predicate<TableEntity> visitor) {
        String token = null;
        int top = firstTop;
        do {
            TableGateway.QueryPage page;
            try {
                page = table.query(filter, select, top, token);
            } catch (RuntimeException e) {
                throw failure(log, what, e);
            }
            for (TableEntity e : page.entities()) {
                if (!visitor.test(e)) {
                    return;
                }
            }
            token = page.continuationToken();
            top = (int) Math.min(maxTop, top * 4L);
        } while (token != null);
    }

    /** Deletes rows of one partition, in order, 100 per transaction; rows already gone are skipped. */
    void deleteRows(LogId log, String what, String pk, List<String> rowKeys) {
        for (int from = 0; from < rowKeys.size(); from += AzureTableLimits.MAX_TRANSACTION_ACTIONS) {
            List<TableTransactionAction> actions = new ArrayList<>();
            for (String rk : rowKeys.subList(from, Math.min(rowKeys.size(),
                    from + AzureTableLimits.MAX_TRANSACTION_ACTIONS))) {
                actions.add(new TableTransactionAction(TableTransactionActionType.DELETE, new TableEntity(pk, rk)));
            }
            while (!actions.isEmpty()) {
                TxFailure f = submit(log, what, actions);
                if (f == null) {
                    break;
                }
                if (!(f.is(TableErrorCode.RESOURCE_NOT_FOUND) || f.is(TableErrorCode.ENTITY_NOT_FOUND))
                        || f.index() == null || f.index() < 0 || f.index() >= actions.size()) {
                    throw f.toException(log, what);
                }
                actions.remove((int) f.index()); // deleted meanwhile: drop it and submit the rest again
            }
        }
    }

    /** Deletes every row of a partition; returns how many. */
    long deletePartition(LogId log, String what, String pk) {
        List<String> rks = new ArrayList<>();
        queryAll(log, what, "PartitionKey eq " + Keys.quote(pk), List.of("RowKey"), QUERY_TOP,
                e -> rks.add(e.getRowKey()));
        deleteRows(log, what, pk, rks);
        return rks.size();
    }

    /**
     * Submits a transaction.
     *
     * @return null on success, or the failed action and its error code
     * @throws WalStorageException (or {@link ProviderUnavailableException}) for failures other than a failed action
     */
    TxFailure submit(LogId log, String what, List<TableTransactionAction> actions) {
        try {
            table.submit(actions);
            return null;
        } catch (TableTransactionFailedException e) {
            String code = errorCode(e);
            if (code != null && TRANSIENT_CODES.contains(code)) {
                throw new ProviderUnavailableException(log, what + " failed transiently (" + code + ")", e);
            }
            return new TxFailure(e.getFailedTransactionActionIndex(), code, e);
        } catch (RuntimeException e) {
            throw failure(log, what, e);
        }
    }

    /**
     * Inserts one entity with a single-entity request (no transaction).
     *
     * @return null on success, or the refusal (index 0) with the service's error code, e.g. 409
     *     {@code EntityAlreadyExists} when the row exists
     * @throws WalStorageException (or {@link ProviderUnavailableException}) for throttling, server errors, I/O and any
     *     other refusal than 409 / 412
     */
    TxFailure insert(LogId log, String what, TableEntity entity) {
        try {
            table.insert(entity);
            return null;
        } catch (TableServiceException e) {
            int status = e.getResponse() == null ? -1 : e.getResponse().getStatusCode();
            String code = errorCode(e);
            if (status == 409 || status == 412) {
                return new TxFailure(0, code, e);
            }
            throw failure(log, what, e);
        } catch (RuntimeException e) {
            throw failure(log, what, e);
        }
    }

    void backOff(LogId log, String what, int attempt, TxFailure f) {
        if (attempt >= MAX_HEAD_RACES) {
            throw new ProviderUnavailableException(log, what + " lost " + attempt + " races for the head row",
                    f.cause());
        }
        try {
            Thread.sleep(ThreadLocalRandom.current().nextInt(1 + Math.min(50, 1 << Math.min(attempt, 6))));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ProviderUnavailableException(log, what + " was interrupted", e);
        }
    }

    static String errorCode(HttpResponseException e) {
        if (e instanceof TableServiceException t && t.getValue() != null && t.getValue().getErrorCode() != null) {
            return t.getValue().getErrorCode().toString();
        }
        return null;
    }

    /**
     * Maps a backend failure: timeouts, throttling (408, 429, 5xx, ServerBusy, OperationTimedOut) and I/O errors are
     * {@link ProviderUnavailableException}; other HTTP errors are {@link WalStorageException}. The message names the
     * operation, the status and the service's error code; never a credential.
     */
    static WalStorageException failure(LogId log, String what, RuntimeException e) {
        if (e instanceof WalStorageException w) {
            return w;
        }
        if (e instanceof HttpResponseException h) {
            int status = h.getResponse() == null ? -1 : h.getResponse().getStatusCode();
            String code = errorCode(h);
            String detail = " (HTTP " + (status < 0 ? "?" : status) + (code == null ? "" : ", " + code) + ")";
            if (status == 408 || status == 429 || status >= 500 || (code != null && TRANSIENT_CODES.contains(code))) {
                return new ProviderUnavailableException(log, what + " failed transiently" + detail, e);
            }
            return new WalStorageException(log, what + " failed" + detail, e);
        }
        if (e instanceof IllegalArgumentException || e instanceof IllegalStateException
                || e instanceof NullPointerException || e instanceof UnsupportedOperationException) {
            return new WalStorageException(log, what + " failed: " + e.getClass().getSimpleName(), e);
        }
        return new ProviderUnavailableException(log, what + " failed (no response: "
                + e.getClass().getSimpleName() + "); the outcome is unknown", e);
    }

    /**
     * A failed action of a transaction (nothing of the transaction was applied), or a refused single-entity insert.
     *
     * @param index the failing action's index, or null when unknown
     * @param code the service's error code, or null
     * @param cause the SDK exception
     */
    record TxFailure(Integer index, String code, TableServiceException cause) {
        boolean is(TableErrorCode c) {
            return c.toString().equals(code);
        }

        /** 412 on an If-Match, or 409 on a CREATE: another request changed the row first. */
        boolean isConflict() {
            return is(TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED) || is(TableErrorCode.ENTITY_ALREADY_EXISTS);
        }

        WalStorageException toException(LogId log, String what) {
            return new WalStorageException(log, what + " failed: action " + index + " of the transaction was refused ("
                    + code + ")", cause);
        }
    }
}
