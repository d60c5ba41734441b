package dev.lattice.provider.dynamodb;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * Request counters of one provider instance: requests, throttled or failed requests and consumed capacity units per
 * DynamoDB operation, plus items written, read and deleted, and what run reads fetched or found in the run read
 * cache. Providers do not depend on Micrometer; read a
 * {@link #snapshot()} (the engine or an operator's code can publish it) or let the provider log it at close.
 *
 * <p>Counters are {@link LongAdder}s and {@link DoubleAdder}s: thread-safe; a snapshot taken while calls run may mix
 * counts from just before and just after one call.
 */
public final class DynamoDbMetrics {

    /** The DynamoDB operations the provider uses. */
    public enum Operation {
        /** {@code GetItem}: head, tree, catalog and run header items only, never one entry. */
        GET_ITEM,
        /** {@code PutItem}: batch and checkpoint chunk items, run headers. */
        PUT_ITEM,
        /** {@code UpdateItem}: head, tree and catalog items. */
        UPDATE_ITEM,
        /** {@code DeleteItem}: conditional deletes of staged chunks (abort, reconcile). */
        DELETE_ITEM,
        /** {@code Query}: reads, replay, trim and reconcile scans of one partition, run chunk reads. */
        QUERY,
        /**
         * {@code BatchWriteItem}: unconditional deletes below the trim watermark, of dropped checkpoints and runs,
         * and the chunk items of run writes.
         */
        BATCH_WRITE_ITEM,
        /** {@code DescribeTable}, {@code CreateTable}: at open. */
        TABLE
    }

    private final Map<Operation, LongAdder> requests = new EnumMap<>(Operation.class);
    private final Map<Operation, LongAdder> failures = new EnumMap<>(Operation.class);
    private final Map<Operation, DoubleAdder> capacity = new EnumMap<>(Operation.class);
    private final LongAdder conditionFailures = new LongAdder();
    private final LongAdder itemsWritten = new LongAdder();
    private final LongAdder itemsRead = new LongAdder();
    private final LongAdder itemsDeleted = new LongAdder();
    private final LongAdder unprocessedResubmits = new LongAdder();
    private final LongAdder runChunksFetched = new LongAdder();
    private final LongAdder runChunkBytesFetched = new LongAdder();
    private final LongAdder runChunkCacheHits = new LongAdder();
    private final LongAdder runHeaderCacheHits = new LongAdder();

    /** Creates zeroed counters. */
    public DynamoDbMetrics() {
        for (Operation op : Operation.values()) {
            requests.put(op, new LongAdder());
            failures.put(op, new LongAdder());
            capacity.put(op, new DoubleAdder());
        }
    }

    void request(Operation op) {
        requests.get(op).increment();
    }

    void failure(Operation op) {
        failures.get(op).increment();
    }

    void capacity(Operation op, Double units) {
        if (units != null) {
            capacity.get(op).add(units);
        }
    }

    void conditionFailure() {
        conditionFailures.increment();
    }

    void itemsWritten(long n) {
        itemsWritten.add(n);
    }

    void itemsRead(long n) {
        itemsRead.add(n);
    }

    void itemsDeleted(long n) {
        itemsDeleted.add(n);
    }

    void unprocessedResubmit() {
        unprocessedResubmits.increment();
    }

    void runChunkFetched(int payloadBytes) {
        runChunksFetched.increment();
        runChunkBytesFetched.add(payloadBytes);
    }

    void runChunkCacheHit() {
        runChunkCacheHits.increment();
    }

    void runHeaderCacheHit() {
        runHeaderCacheHits.increment();
    }

    /** @return the counters now */
    public Snapshot snapshot() {
        Map<Operation, Long> r = new EnumMap<>(Operation.class);
        Map<Operation, Long> f = new EnumMap<>(Operation.class);
        Map<Operation, Double> c = new EnumMap<>(Operation.class);
        for (Operation op : Operation.values()) {
            r.put(op, requests.get(op).sum());
            f.put(op, failures.get(op).sum());
            c.put(op, capacity.get(op).sum());
        }
        return new Snapshot(Map.copyOf(r), Map.copyOf(f), Map.copyOf(c), conditionFailures.sum(),
                itemsWritten.sum(), itemsRead.sum(), itemsDeleted.sum(), unprocessedResubmits.sum(),
                runChunksFetched.sum(), runChunkBytesFetched.sum(), runChunkCacheHits.sum(), runHeaderCacheHits.sum());
    }

    /**
     * Counters at one moment.
     *
     * @param requests requests sent, per operation (each SDK call counts once, whatever the SDK retried inside)
     * @param failures requests that failed with a transient error (throttled, 5xx, I/O, timeout), per operation
     * @param capacityUnits consumed capacity units the service reported, per operation (0 where it reports none)
     * @param conditionFailures conditional writes refused ({@code ConditionalCheckFailedException}): fences,
     *     retries recognised, compare-and-set races
     * @param itemsWritten items put (batch, checkpoint and run chunks, run headers)
     * @param itemsRead items returned by {@code Query} and {@code GetItem}
     * @param itemsDeleted items deleted
     * @param unprocessedResubmits {@code BatchWriteItem} calls that resubmitted unprocessed items
     * @param runChunksFetched run chunk items run reads received from {@code Query} (each verified; read-ahead
     *     included)
     * @param runChunkBytesFetched data bytes of those chunk items
     * @param runChunkCacheHits run chunks run reads found in the run read cache instead
     * @param runHeaderCacheHits run reads that found the run's header in the run read cache (no {@code GetItem})
     */
    public record Snapshot(Map<Operation, Long> requests, Map<Operation, Long> failures,
                           Map<Operation, Double> capacityUnits, long conditionFailures, long itemsWritten,
                           long itemsRead, long itemsDeleted, long unprocessedResubmits, long runChunksFetched,
                           long runChunkBytesFetched, long runChunkCacheHits, long runHeaderCacheHits) {

        /**
         * @param op an operation
         * @return requests of that operation
         */
        public long requests(Operation op) {
            return requests.getOrDefault(op, 0L);
        }

        /** @return requests of every operation */
        public long totalRequests() {
            return requests.values().stream().mapToLong(Long::longValue).sum();
        }

        /** @return consumed capacity units of every operation */
        public double totalCapacityUnits() {
            return capacityUnits.values().stream().mapToDouble(Double::doubleValue).sum();
        }

        /**
         * The difference to an earlier snapshot.
         *
         * @param earlier the earlier snapshot
         * @return this minus {@code earlier}, counter by counter
         */
        public Snapshot minus(Snapshot earlier) {
            Map<Operation, Long> r = new EnumMap<>(Operation.class);
            Map<Operation, Long> f = new EnumMap<>(Operation.class);
            Map<Operation, Double> c = new EnumMap<>(Operation.class);
            for (Operation op : Operation.values()) {
                r.put(op, requests(op) - earlier.requests(op));
                f.put(op, failures.getOrDefault(op, 0L) - earlier.failures.getOrDefault(op, 0L));
                c.put(op, capacityUnits.getOrDefault(op, 0.0) - earlier.capacityUnits.getOrDefault(op, 0.0));
            }
            return new Snapshot(Map.copyOf(r), Map.copyOf(f), Map.copyOf(c),
                    conditionFailures - earlier.conditionFailures, itemsWritten - earlier.itemsWritten,
                    itemsRead - earlier.itemsRead, itemsDeleted - earlier.itemsDeleted,
                    unprocessedResubmits - earlier.unprocessedResubmits, runChunksFetched - earlier.runChunksFetched,
                    runChunkBytesFetched - earlier.runChunkBytesFetched,
                    runChunkCacheHits - earlier.runChunkCacheHits, runHeaderCacheHits - earlier.runHeaderCacheHits);
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("requests");
            for (Operation op : Operation.values()) {
                long n = requests(op);
                if (n > 0) {
                    sb.append(' ').append(op.name().toLowerCase(java.util.Locale.ROOT)).append('=').append(n);
                }
            }
            return sb.append(", failures=").append(failures.values().stream().mapToLong(Long::longValue).sum())
                    .append(", capacityUnits=").append(String.format(java.util.Locale.ROOT, "%.1f",
                            totalCapacityUnits()))
                    .append(", conditionFailures=").append(conditionFailures)
                    .append(", itemsWritten=").append(itemsWritten).append(", itemsRead=").append(itemsRead)
                    .append(", itemsDeleted=").append(itemsDeleted)
                    .append(", unprocessedResubmits=").append(unprocessedResubmits)
                    .append(", runChunksFetched=").append(runChunksFetched)
                    .append(", runChunkBytesFetched=").append(runChunkBytesFetched)
                    .append(", runChunkCacheHits=").append(runChunkCacheHits)
                    .append(", runHeaderCacheHits=").append(runHeaderCacheHits).toString();
        }
    }
}
