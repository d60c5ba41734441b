package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.DynamoDbMetrics.Operation;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.DeleteRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.InternalServerErrorException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ThrottlingException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * Every request the provider sends goes through here: it sets the table, consistent reads and consumed-capacity
 * reporting, counts requests, capacity and items in {@link DynamoDbMetrics}, and turns SDK failures into the SPI's
 * exceptions: throttling ({@code ProvisionedThroughputExceededException}, {@code RequestLimitExceeded},
 * {@code ThrottlingException}), 5xx responses, I/O errors and timeouts become {@link ProviderUnavailableException};
 * everything else a {@link WalStorageException}; the SDK exception is always the cause. A refused condition is not
 * an error here: the conditional methods return {@code false} or {@code null}.
 *
 * <p>Thread-safe (the SDK client is).
 */
final class DynamoCalls {

    private static final Set<String> TRANSIENT_CODES = Set.of("ThrottlingException", "Throttling",
            "TooManyRequestsException", "RequestLimitExceeded",
            "ProvisionedThroughputExceededException", "ServiceUnavailable", "InternalFailure",
            "InternalServerError", "TransactionConflictException", "RequestTimeout", "RequestTimeoutException");

    private final DynamoDbClient client;
    private final String table;
    private final DynamoDbMetrics metrics;
    private final Duration batchWriteDeadline;

    /**
     * @param client the SDK client
     * @param table the table name
     * @param metrics where to count
     * @param batchWriteDeadline how long {@link #batchDelete} resubmits unprocessed items before it gives up
     */
    DynamoCalls(DynamoDbClient client, String table, DynamoDbMetrics metrics, Duration batchWriteDeadline) {
        this.client = client;
        this.table = table;
        this.metrics = metrics;
        this.batchWriteDeadline = batchWriteDeadline;
    }

    /** @return the table name */
    String table() {
        return table;
    }

    /** @return the SDK client */
    DynamoDbClient client() {
        return client;
    }

    /**
     * A strongly consistent {@code GetItem}.
     *
     * @param log the log, for errors (null when none)
     * @param key the key
     * @return the item, or null when absent
     */
    Map<String, AttributeValue> get(LogId log, Map<String, AttributeValue> key) {
        GetItemResponse r = call(log, Operation.GET_ITEM, () -> client.getItem(b -> b.tableName(table).key(key)
                .consistentRead(true).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)));
        capacity(Operation.GET_ITEM, r.consumedCapacity());
        if (r.hasItem() && !r.item().isEmpty()) {
            metrics.itemsRead(1);
            return r.item();
        }
        return null;
    }

    /**
     * A {@code PutItem}, conditional when {@code condition} is not null.
     *
     * @return false when the condition was refused (nothing written)
     */
    boolean put(LogId log, Map<String, AttributeValue> item, String condition, Map<String, String> names,
                Map<String, AttributeValue> values) {
        try {
            PutItemResponse r = call(log, Operation.PUT_ITEM, () -> client.putItem(b -> {
                b.tableName(table).item(item).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
                if (condition != null) {
                    b.conditionExpression(condition);
                    if (names != null && !names.isEmpty()) {
                        b.expressionAttributeNames(names);
                    }
                    if (values != null && !values.isEmpty()) {
                        b.expressionAttributeValues(values);
                    }
                }
            }));
            capacity(Operation.PUT_ITEM, r.consumedCapacity());
            metrics.itemsWritten(1);
            return true;
        } catch (ConditionalCheckFailedException e) {
            metrics.conditionFailure();
            return false;
        }
    }

    /**
     * An {@code UpdateItem}.
     *
     * @param returnValues what to return
     * @return the returned attributes (empty map for {@link ReturnValue#NONE}), or null when the condition was
     *     refused (nothing changed)
     */
    Map<String, AttributeValue> update(LogId log, Map<String, AttributeValue> key, String update, String condition,
                                       Map<String, String> names, Map<String, AttributeValue> values,
                                       ReturnValue returnValues) {
        try {
            UpdateItemResponse r = call(log, Operation.UPDATE_ITEM, () -> client.updateItem(b -> {
                b.tableName(table).key(key).updateExpression(update).returnValues(returnValues)
                        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
                if (condition != null) {
                    b.conditionExpression(condition);
                }
                if (names != null && !names.isEmpty()) {
                    b.expressionAttributeNames(names);
                }
                if (values != null && !values.isEmpty()) {
                    b.expressionAttributeValues(values);
                }
            }));
            capacity(Operation.UPDATE_ITEM, r.consumedCapacity());
            return r.hasAttributes() ? r.attributes() : Map.of();
        } catch (ConditionalCheckFailedException e) {
            metrics.conditionFailure();
            return null;
        }
    }

    /**
     * A conditional {@code DeleteItem}.
     *
     * @return false when the condition was refused (nothing deleted)
     */
    boolean delete(LogId log, Map<String, AttributeValue> key, String condition, Map<String, String> names,
                   Map<String, AttributeValue> values) {
        try {
            DeleteItemResponse r = call(log, Operation.DELETE_ITEM, () -> client.deleteItem(b -> {
                b.tableName(table).key(key).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
                if (condition != null) {
                    b.conditionExpression(condition).expressionAttributeNames(names).expressionAttributeValues(values);
                }
            }));
            capacity(Operation.DELETE_ITEM, r.consumedCapacity());
            metrics.itemsDeleted(1);
            return true;
        } catch (ConditionalCheckFailedException e) {
            metrics.conditionFailure();
            return false;
        }
    }

    /**
     * One {@code Query} page, strongly consistent.
     *
     * @param request the request without table, consistency and capacity settings
     * @return the page
     */
    QueryResponse query(LogId log, QueryRequest.Builder request) {
        QueryRequest q = request.tableName(table).consistentRead(true)
                .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
        QueryResponse r = call(log, Operation.QUERY, () -> client.query(q));
        capacity(Operation.QUERY, r.consumedCapacity());
        metrics.itemsRead(r.count() == null ? 0 : r.count());
        return r;
    }

    /**
     * Deletes items unconditionally with {@code BatchWriteItem}, 25 keys per request, resubmitting
     * {@code UnprocessedItems} with exponential backoff and jitter until every key is processed or the deadline
     * passes. Never returns while a key is unprocessed.
     *
     * @param log the log, for errors
     * @param keys the keys to delete
     * @throws ProviderUnavailableException when items are still unprocessed at the deadline, or on a transient
     *     failure (some keys may be deleted)
     */
    void batchDelete(LogId log, List<Map<String, AttributeValue>> keys) {
        List<WriteRequest> all = new ArrayList<>(keys.size());
        for (Map<String, AttributeValue> k : keys) {
            all.add(WriteRequest.builder().deleteRequest(DeleteRequest.builder().key(k).build()).build());
        }
        batchWrite(log, all, "delete(s)", metrics::itemsDeleted);
    }

    /**
     * Puts items unconditionally with {@code BatchWriteItem}, 25 per request, resubmitting {@code UnprocessedItems}
     * as {@link #batchDelete} does. Never returns while an item is unprocessed. The caller keeps each request under
     * DynamoDB's 16 MB (the run store sends at most 1 MiB of chunk data per call).
     *
     * @param log the log, for errors
     * @param items the items to put
     * @throws ProviderUnavailableException when items are still unprocessed at the deadline, or on a transient
     *     failure (some items may be written)
     */
    void batchPut(LogId log, List<Map<String, AttributeValue>> items) {
        List<WriteRequest> all = new ArrayList<>(items.size());
        for (Map<String, AttributeValue> item : items) {
            all.add(WriteRequest.builder().putRequest(PutRequest.builder().item(item).build()).build());
        }
        batchWrite(log, all, "put(s)", metrics::itemsWritten);
    }

    private void batchWrite(LogId log, List<WriteRequest> all, String what, LongConsumer processed) {
        long deadline = System.nanoTime() + batchWriteDeadline.toNanos();
        for (int from = 0; from < all.size(); from += 25) {
            List<WriteRequest> pending = new ArrayList<>(all.subList(from, Math.min(all.size(), from + 25)));
            int attempt = 0;
            while (!pending.isEmpty()) {
                List<WriteRequest> send = pending;
                BatchWriteItemResponse r = call(log, Operation.BATCH_WRITE_ITEM, () -> client.batchWriteItem(b -> b
                        .requestItems(Map.of(table, send)).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)));
                if (r.hasConsumedCapacity()) {
                    for (ConsumedCapacity c : r.consumedCapacity()) {
                        capacity(Operation.BATCH_WRITE_ITEM, c);
                    }
                }
                List<WriteRequest> unprocessed = r.hasUnprocessedItems()
                        ? r.unprocessedItems().getOrDefault(table, List.of()) : List.of();
                processed.accept(send.size() - unprocessed.size());
                pending = unprocessed;
                if (pending.isEmpty()) {
                    break;
                }
                metrics.unprocessedResubmit();
                long now = System.nanoTime();
                if (now >= deadline) {
                    throw new ProviderUnavailableException(log, "BatchWriteItem on table " + table + " left "
                            + pending.size() + " " + what + " unprocessed after " + batchWriteDeadline.toMillis()
                            + " ms of resubmits (throttled); they were not reported as done", null);
                }
                long backoffMs = Math.min(1000, 25L << Math.min(attempt++, 6));
                long sleepMs = Math.min(ThreadLocalRandom.current().nextLong(backoffMs / 2, backoffMs + 1),
                        Math.max(1, (deadline - now) / 1_000_000));
                try {
                    Thread.sleep(sleepMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new ProviderUnavailableException(log, "interrupted while resubmitting " + pending.size()
                            + " unprocessed " + what, e);
                }
            }
        }
    }

    /**
     * Deletes every item of a partition with a sort key in {@code lo..hi} (inclusive): strongly consistent key-only
     * {@code Query} pages, then {@link #batchDelete}.
     *
     * @param log the log, for errors
     * @param pk the partition key
     * @param lo the lowest sort key, inclusive
     * @param hi the highest sort key, inclusive
     * @return how many items were deleted
     * @throws ProviderUnavailableException as {@link #batchDelete}, or on a transient failure of a query
     * @throws WalStorageException on any other failure
     */
    long deleteAllBetween(LogId log, String pk, long lo, long hi) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse r = query(log, Layout.rangeQuery(pk, lo, hi, start, true, 0)
                    .projectionExpression("#p, #s").expressionAttributeNames(Map.of("#p", Layout.PK,
                            "#s", Layout.SK)));
            for (Map<String, AttributeValue> item : r.items()) {
                keys.add(Layout.key(pk, Layout.num(item, Layout.SK)));
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        batchDelete(log, keys);
        return keys.size();
    }

    private void capacity(Operation op, ConsumedCapacity c) {
        if (c != null) {
            metrics.capacity(op, c.capacityUnits());
        }
    }

    /** Sends one request, counting it and translating its failure. */
    <T> T call(LogId log, Operation op, Supplier<T> request) {
        metrics.request(op);
        try {
            return request.get();
        } catch (ConditionalCheckFailedException e) {
            throw e;
        } catch (SdkException e) {
            RuntimeException mapped = translate(log, op, e);
            if (mapped instanceof ProviderUnavailableException) {
                metrics.failure(op);
            }
            throw mapped;
        }
    }

    /**
     * Maps an SDK failure to the SPI's exceptions (the SDK exception is the cause; its message names no secret).
     *
     * @param log the log, or null
     * @param op the operation
     * @param e the failure
     * @return the exception to throw
     */
    RuntimeException translate(LogId log, Operation op, SdkException e) {
        String what = "DynamoDB " + op.name().toLowerCase(java.util.Locale.ROOT) + " on table " + table;
        if (isTransient(e)) {
            return new ProviderUnavailableException(log, what + " failed transiently (throttled, server error, "
                    + "timeout or unreachable): " + e.getMessage(), e);
        }
        if (e instanceof ResourceNotFoundException) {
            return new WalStorageException(log, what + ": the table does not exist: " + e.getMessage(), e);
        }
        return new WalStorageException(log, what + " failed: " + e.getMessage(), e);
    }

    /**
     * @param e an SDK failure
     * @return whether it is transient: throttling, a 5xx response, an I/O error, a timeout or an interruption
     */
    static boolean isTransient(SdkException e) {
        if (e instanceof ProvisionedThroughputExceededException || e instanceof RequestLimitExceededException
                || e instanceof ThrottlingException || e instanceof InternalServerErrorException
                || e instanceof ApiCallTimeoutException || e instanceof ApiCallAttemptTimeoutException
                || e instanceof AbortedException) {
            return true;
        }
        if (e instanceof AwsServiceException) {
            AwsServiceException a = (AwsServiceException) e;
            if (a.statusCode() >= 500 || a.isThrottlingException()) {
                return true;
            }
            String code = a.awsErrorDetails() == null ? null : a.awsErrorDetails().errorCode();
            return code != null && TRANSIENT_CODES.contains(code);
        }
        if (e instanceof SdkClientException) {
            for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
                if (t instanceof IOException) {
                    return true;
                }
            }
            String m = String.valueOf(e.getMessage());
            return m.contains("Unable to execute HTTP request") || m.contains("timed out")
                    || m.contains("Connection");
        }
        return false;
    }
}
