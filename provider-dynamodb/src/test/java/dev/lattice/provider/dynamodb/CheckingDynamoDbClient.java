package dev.lattice.provider.dynamodb;

import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.CreateTableResponse;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.DeleteTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteTableResponse;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A {@link DynamoDbClient} decorator for tests, between the provider and the real client:
 * <ul>
 *   <li>holds every item written to DynamoDB's real 400 KB item limit with {@link DynamoItemSize} (PutItem items,
 *       BatchWriteItem puts, and for UpdateItem the key plus the update's values), failing with
 *       {@link ItemLimitExceededError} before the request is sent, so an emulator that counts more leniently cannot
 *       hide an oversized item;</li>
 *   <li>counts requests per type and records the keys of every GetItem;</li>
 *   <li>runs test actions just before a request is sent or just after its response arrived;</li>
 *   <li>injects faults: a rule matches requests of a type (and a predicate), may skip some, then fails a number of
 *       them before sending (nothing reached the server) or after (the request landed, its response is lost);</li>
 *   <li>simulates throttled {@code BatchWriteItem}s by sending only part of a request and returning the rest as
 *       {@code UnprocessedItems}.</li>
 * </ul>
 * Thread-safe.
 */
final class CheckingDynamoDbClient implements DynamoDbClient {

    /** An item above DynamoDB's limit was about to be sent: a provider bug, never retried. */
    static final class ItemLimitExceededError extends AssertionError {
        private static final long serialVersionUID = 1L;

        ItemLimitExceededError(String message) {
            super(message);
        }
    }

    /** When an injected fault fires. */
    enum Timing {
        /** Instead of sending the request. */
        BEFORE,
        /** After the request landed: the response is dropped. */
        AFTER
    }

    /** One fault rule; mutable counters guarded by the client. */
    static final class Rule {
        final Class<? extends DynamoDbRequest> type;
        final Predicate<DynamoDbRequest> match;
        final Timing timing;
        final Supplier<RuntimeException> error;
        int skip;
        int times;
        int fired;

        Rule(Class<? extends DynamoDbRequest> type, Predicate<DynamoDbRequest> match, Timing timing, int skip,
             int times, Supplier<RuntimeException> error) {
            this.type = type;
            this.match = match;
            this.timing = timing;
            this.skip = skip;
            this.times = times;
            this.error = error;
        }

        /** @return how often it fired */
        synchronized int fired() {
            return fired;
        }
    }

    private final DynamoDbClient delegate;
    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    private final List<Map<String, AttributeValue>> getKeys = new CopyOnWriteArrayList<>();
    private final AtomicLong maxItemBytes = new AtomicLong();
    private volatile int unprocessedCalls;
    private volatile boolean unprocessedForever;
    private volatile Consumer<DynamoDbRequest> beforeSend;
    private volatile Consumer<DynamoDbRequest> afterReceive;

    CheckingDynamoDbClient(DynamoDbClient delegate) {
        this.delegate = delegate;
    }

    /**
     * Adds a fault rule.
     *
     * @param type request type
     * @param match which requests of that type
     * @param timing before or after sending
     * @param skip matching requests to let through first
     * @param times how many to fail after that ({@code Integer.MAX_VALUE} for all)
     * @param error the exception to throw
     * @return the rule (to read {@link Rule#fired()})
     */
    Rule inject(Class<? extends DynamoDbRequest> type, Predicate<DynamoDbRequest> match, Timing timing, int skip,
                int times, Supplier<RuntimeException> error) {
        Rule r = new Rule(type, match, timing, skip, times, error);
        rules.add(r);
        return r;
    }

    /**
     * Sets an action run just before each request is sent (after it is counted, before fault rules), on the calling
     * thread; null for none. Lets a test change the table between a provider's read and its conditional write.
     *
     * @param action the action, given the request
     */
    void beforeSending(Consumer<DynamoDbRequest> action) {
        this.beforeSend = action;
    }

    /**
     * Sets an action run just after each request was answered by the server, before the response is returned to
     * the provider, on the calling thread; null for none. Lets a test change the table (or the provider's state)
     * between a read's response and what the provider does with it.
     *
     * @param action the action, given the request
     */
    void afterReceiving(Consumer<DynamoDbRequest> action) {
        this.afterReceive = action;
    }

    /** Removes every fault rule, the {@link #beforeSending} and {@link #afterReceiving} actions and throttling. */
    void clearFaults() {
        beforeSend = null;
        afterReceive = null;
        rules.clear();
        unprocessedCalls = 0;
        unprocessedForever = false;
    }

    /**
     * Makes the next {@code calls} BatchWriteItem requests (or all, when {@code forever}) process only their first
     * item and return the rest as unprocessed.
     */
    void throttleBatchWrites(int calls, boolean forever) {
        this.unprocessedCalls = calls;
        this.unprocessedForever = forever;
    }

    /** @return requests sent (or failed by a rule) of a type, by simple class name e.g. "QueryRequest" */
    long count(Class<? extends DynamoDbRequest> type) {
        AtomicLong n = counts.get(type.getSimpleName());
        return n == null ? 0 : n.get();
    }

    /** @return the keys of every GetItem since the last {@link #resetCounts()} */
    List<Map<String, AttributeValue>> getItemKeys() {
        return new ArrayList<>(getKeys);
    }

    /** Zeroes the request counts and GetItem keys. */
    void resetCounts() {
        counts.clear();
        getKeys.clear();
    }

    /** @return the largest item size checked so far, in bytes */
    long maxItemBytes() {
        return maxItemBytes.get();
    }

    private <T> T run(DynamoDbRequest request, Supplier<T> send) {
        counts.computeIfAbsent(request.getClass().getSimpleName(),
                k -> new AtomicLong()).incrementAndGet();
        Consumer<DynamoDbRequest> hook = beforeSend;
        if (hook != null) {
            hook.accept(request);
        }
        Rule firing = null;
        for (Rule r : rules) {
            if (!r.type.isInstance(request) || !r.match.test(request)) {
                continue;
            }
            synchronized (r) {
                if (r.skip > 0) {
                    r.skip--;
                    continue;
                }
                if (r.times > 0) {
                    if (r.times != Integer.MAX_VALUE) {
                        r.times--;
                    }
                    r.fired++;
                    firing = r;
                    break;
                }
            }
        }
        if (firing != null && firing.timing == Timing.BEFORE) {
            throw firing.error.get();
        }
        T result = send.get();
        Consumer<DynamoDbRequest> after = afterReceive;
        if (after != null) {
            after.accept(request);
        }
        if (firing != null) {
            throw firing.error.get();
        }
        return result;
    }

    private void checkItem(Map<String, AttributeValue> item, String what) {
        long size = DynamoItemSize.of(item);
        maxItemBytes.accumulateAndGet(size, Math::max);
        if (size > DynamoItemSize.MAX_ITEM_BYTES) {
            throw new ItemLimitExceededError(what + " of " + size + " bytes exceeds DynamoDB's item limit of "
                    + DynamoItemSize.MAX_ITEM_BYTES + " bytes (key " + item.get(Layout.PK) + "/"
                    + item.get(Layout.SK) + ")");
        }
    }

    @Override
    public String serviceName() {
        return delegate.serviceName();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public GetItemResponse getItem(GetItemRequest request) {
        getKeys.add(request.key());
        return run(request, () -> delegate.getItem(request));
    }

    @Override
    public PutItemResponse putItem(PutItemRequest request) {
        checkItem(request.item(), "PutItem item");
        return run(request, () -> delegate.putItem(request));
    }

    @Override
    public UpdateItemResponse updateItem(UpdateItemRequest request) {
        Map<String, AttributeValue> lowerBound = new java.util.HashMap<>(request.key());
        if (request.hasExpressionAttributeValues()) {
            lowerBound.putAll(request.expressionAttributeValues());
        }
        checkItem(lowerBound, "UpdateItem (key and values)");
        return run(request, () -> delegate.updateItem(request));
    }

    @Override
    public DeleteItemResponse deleteItem(DeleteItemRequest request) {
        return run(request, () -> delegate.deleteItem(request));
    }

    @Override
    public QueryResponse query(QueryRequest request) {
        return run(request, () -> delegate.query(request));
    }

    @Override
    public ScanResponse scan(ScanRequest request) {
        return run(request, () -> delegate.scan(request));
    }

    @Override
    public BatchWriteItemResponse batchWriteItem(BatchWriteItemRequest request) {
        for (List<WriteRequest> ws : request.requestItems().values()) {
            for (WriteRequest w : ws) {
                if (w.putRequest() != null) {
                    checkItem(w.putRequest().item(), "BatchWriteItem put");
                }
            }
        }
        boolean throttle;
        synchronized (this) {
            throttle = unprocessedForever || unprocessedCalls > 0;
            if (!unprocessedForever && unprocessedCalls > 0) {
                unprocessedCalls--;
            }
        }
        if (!throttle) {
            return run(request, () -> delegate.batchWriteItem(request));
        }
        Map.Entry<String, List<WriteRequest>> e = request.requestItems().entrySet().iterator().next();
        List<WriteRequest> all = e.getValue();
        if (unprocessedForever) {
            run(request, () -> null);
            return BatchWriteItemResponse.builder().unprocessedItems(Map.of(e.getKey(), all)).build();
        }
        BatchWriteItemRequest part = request.toBuilder().requestItems(Map.of(e.getKey(), all.subList(0, 1))).build();
        run(request, () -> delegate.batchWriteItem(part));
        List<WriteRequest> rest = all.subList(1, all.size());
        return BatchWriteItemResponse.builder().unprocessedItems(rest.isEmpty() ? Map.of()
                : Map.of(e.getKey(), rest)).build();
    }

    @Override
    public DescribeTableResponse describeTable(DescribeTableRequest request) {
        return run(request, () -> delegate.describeTable(request));
    }

    @Override
    public CreateTableResponse createTable(CreateTableRequest request) {
        return run(request, () -> delegate.createTable(request));
    }

    @Override
    public DeleteTableResponse deleteTable(DeleteTableRequest request) {
        return run(request, () -> delegate.deleteTable(request));
    }
}
