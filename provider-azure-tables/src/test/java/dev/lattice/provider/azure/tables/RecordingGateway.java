package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A {@link TableGateway} decorator for tests: counts requests (gets, transactions and the entities in them,
 * single-entity inserts, query pages and the entities returned), keeps the writes submitted (an insert as a one-action
 * CREATE), and injects failures into chosen writes, before they reach the table (nothing applied) or after (applied,
 * response lost). Thread-safe.
 */
final class RecordingGateway implements TableGateway {
    private final TableGateway delegate;
    final AtomicLong gets = new AtomicLong();
    final AtomicLong transactions = new AtomicLong();
    final AtomicLong transactionEntities = new AtomicLong();
    /** Single-entity inserts (run chunk rows), not counted in {@link #transactions}. */
    final AtomicLong inserts = new AtomicLong();
    final AtomicLong queryPages = new AtomicLong();
    final AtomicLong queriedEntities = new AtomicLong();
    final List<List<TableTransactionAction>> submitted = Collections.synchronizedList(new ArrayList<>());
    private volatile Fault fault;

    /**
     * A failure to inject into writes: transactions, and single-entity inserts seen as one-action CREATE
     * transactions.
     *
     * @param matches which writes it applies to
     * @param skip how many matching writes pass first
     * @param after whether the failure comes after the write was applied (response lost)
     */
    record Fault(Predicate<List<TableTransactionAction>> matches, int skip, boolean after, AtomicInteger seen,
                 AtomicInteger fired) {
        Fault(Predicate<List<TableTransactionAction>> matches, int skip, boolean after) {
            this(matches, skip, after, new AtomicInteger(), new AtomicInteger());
        }
    }

    RecordingGateway(TableGateway delegate) {
        this.delegate = delegate;
    }

    /** Injects one failure; returns it (see {@link Fault#fired()}). */
    Fault inject(Fault f) {
        fault = f;
        return f;
    }

    /** Stops injecting. */
    void clearFault() {
        fault = null;
    }

    @Override
    public TableEntity get(String partitionKey, String rowKey) {
        gets.incrementAndGet();
        return delegate.get(partitionKey, rowKey);
    }

    @Override
    public void submit(List<TableTransactionAction> actions) {
        Fault f = fault;
        boolean fire = false;
        if (f != null && f.matches().test(actions) && f.seen().getAndIncrement() == f.skip()) {
            fire = true;
            f.fired().incrementAndGet();
        }
        if (fire && !f.after()) {
            throw new UncheckedIOException(new IOException("injected: connection reset before the transaction"));
        }
        transactions.incrementAndGet();
        transactionEntities.addAndGet(actions.size());
        submitted.add(List.copyOf(actions));
        delegate.submit(actions);
        if (fire) {
            throw new UncheckedIOException(new IOException("injected: response lost after the transaction"));
        }
    }

    /**
     * A single-entity insert: counted in {@link #inserts} and kept in {@link #submitted} as a one-action CREATE, and
     * subject to the injected fault like a one-action CREATE transaction.
     */
    @Override
    public void insert(TableEntity entity) {
        List<TableTransactionAction> asAction = List.of(
                new TableTransactionAction(TableTransactionActionType.CREATE, entity));
        Fault f = fault;
        boolean fire = false;
        if (f != null && f.matches().test(asAction) && f.seen().getAndIncrement() == f.skip()) {
            fire = true;
            f.fired().incrementAndGet();
        }
        if (fire && !f.after()) {
            throw new UncheckedIOException(new IOException("injected: connection reset before the insert"));
        }
        inserts.incrementAndGet();
        submitted.add(asAction);
        delegate.insert(entity);
        if (fire) {
            throw new UncheckedIOException(new IOException("injected: response lost after the insert"));
        }
    }

    @Override
    public QueryPage query(String filter, List<String> select, int top, String continuationToken) {
        QueryPage p = delegate.query(filter, select, top, continuationToken);
        queryPages.incrementAndGet();
        queriedEntities.addAndGet(p.entities().size());
        return p;
    }

    @Override
    public void createTableIfNotExists() {
        delegate.createTableIfNotExists();
    }

    /** @return requests made so far: gets + transactions + inserts + query pages */
    long requests() {
        return gets.get() + transactions.get() + inserts.get() + queryPages.get();
    }
}
