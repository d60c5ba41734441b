package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A {@link TableGateway} decorator that holds every request to the real Azure Table service's limits, because
 * Azurite does not enforce them all (1 MiB per entity, one partition per transaction). Written independently of the
 * provider's own packing code ({@link Rows}, {@link AzureTableLimits}) so that a mistake there is caught here.
 *
 * <p>A violation throws {@link AssertionError} before the request is sent (no retry loop swallows it) and is also
 * recorded, so a test can assert afterwards that none happened even if some code caught the error. Also checks the
 * protocol's own rules on the head row: never an UPSERT, every UPDATE conditional (If-Match).
 *
 * <p>Thread-safe.
 */
final class ServiceLimitCheckingGateway implements TableGateway {
    /** The service's per-transaction action limit. */
    static final int MAX_ACTIONS = 100;
    /** The service's per-transaction payload limit, bytes. */
    static final long MAX_TRANSACTION_BYTES = 4L * 1024 * 1024;
    /** The service's per-entity limit, bytes. */
    static final long MAX_ENTITY_BYTES = 1024L * 1024;
    /** The service's per-binary-property limit, bytes. */
    static final int MAX_BINARY_BYTES = 64 * 1024;
    /** The service's custom-property limit per entity. */
    static final int MAX_PROPERTIES = 252;

    private final TableGateway delegate;
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());

    ServiceLimitCheckingGateway(TableGateway delegate) {
        this.delegate = delegate;
    }

    /** @return every violation seen so far */
    List<String> violations() {
        return List.copyOf(violations);
    }

    @Override
    public TableEntity get(String partitionKey, String rowKey) {
        checkKey(partitionKey);
        checkKey(rowKey);
        return delegate.get(partitionKey, rowKey);
    }

    @Override
    public void submit(List<TableTransactionAction> actions) {
        if (actions.isEmpty()) {
            fail("empty transaction");
        }
        if (actions.size() > MAX_ACTIONS) {
            fail("transaction of " + actions.size() + " actions, the service allows " + MAX_ACTIONS);
        }
        String pk = actions.get(0).getEntity().getPartitionKey();
        long payload = 0;
        for (TableTransactionAction a : actions) {
            TableEntity e = a.getEntity();
            if (!e.getPartitionKey().equals(pk)) {
                fail("transaction spans partitions '" + pk + "' and '" + e.getPartitionKey()
                        + "' (the service refuses CommandsInBatchActOnDifferentPartitions)");
            }
            checkKey(e.getPartitionKey());
            checkKey(e.getRowKey());
            if (e.getRowKey().equals(Keys.HEAD)) {
                if (a.getActionType() == TableTransactionActionType.UPSERT_MERGE
                        || a.getActionType() == TableTransactionActionType.UPSERT_REPLACE) {
                    fail("UPSERT of head row " + pk + " (ignores If-Match: never fenced)");
                }
                if ((a.getActionType() == TableTransactionActionType.UPDATE_MERGE
                        || a.getActionType() == TableTransactionActionType.UPDATE_REPLACE) && !a.getIfUnchanged()) {
                    fail("unconditional UPDATE of head row " + pk);
                }
            }
            if (a.getActionType() != TableTransactionActionType.DELETE) {
                payload += checkEntity(e);
            } else {
                payload += 512 + 2L * (e.getPartitionKey().length() + e.getRowKey().length());
            }
        }
        if (payload > MAX_TRANSACTION_BYTES) {
            fail("transaction of about " + payload + " request bytes, the service allows " + MAX_TRANSACTION_BYTES);
        }
        delegate.submit(actions);
    }

    /** A single-entity insert: the keys and the entity limits, as for an entity in a transaction. */
    @Override
    public void insert(TableEntity entity) {
        checkKey(entity.getPartitionKey());
        checkKey(entity.getRowKey());
        checkEntity(entity);
        delegate.insert(entity);
    }

    @Override
    public QueryPage query(String filter, List<String> select, int top, String continuationToken) {
        if (top < 1 || top > 1000) {
            fail("query with top " + top + " (the service allows 1..1000)");
        }
        return delegate.query(filter, select, top, continuationToken);
    }

    @Override
    public void createTableIfNotExists() {
        delegate.createTableIfNotExists();
    }

    /**
     * Checks one entity; returns a lower bound of its bytes in a transaction request (base64 of binary values plus
     * 400 bytes of framing).
     */
    private long checkEntity(TableEntity e) {
        long size = 4 + 2L * (e.getPartitionKey().length() + e.getRowKey().length()) + 8 + 18 + 8; // + Timestamp
        long request = 400;
        int custom = 0;
        for (Map.Entry<String, Object> p : e.getProperties().entrySet()) {
            String name = p.getKey();
            if (name.equals("PartitionKey") || name.equals("RowKey") || name.equals("Timestamp")
                    || name.startsWith("odata.") || name.contains("@odata.")) {
                continue;
            }
            custom++;
            Object v = p.getValue();
            long value;
            if (v instanceof byte[] b) {
                if (b.length > MAX_BINARY_BYTES) {
                    fail("binary property " + name + " of " + e.getRowKey() + " is " + b.length
                            + " bytes, the service allows " + MAX_BINARY_BYTES);
                }
                value = b.length + 4;
                request += (b.length + 2) / 3 * 4L;
            } else if (v instanceof String s) {
                if (s.length() > 32 * 1024) {
                    fail("string property " + name + " is " + s.length() + " chars, the service allows 32K");
                }
                value = 4 + 2L * s.length();
                request += s.length();
            } else if (v instanceof Long || v instanceof Double) {
                value = 8;
            } else if (v instanceof Integer) {
                value = 4;
            } else if (v instanceof Boolean) {
                value = 1;
            } else {
                fail("property " + name + " has an unexpected type " + (v == null ? null : v.getClass()));
                value = 0;
            }
            size += 8 + 2L * name.length() + value;
        }
        if (custom > MAX_PROPERTIES) {
            fail("entity " + e.getRowKey() + " has " + custom + " properties, the service allows " + MAX_PROPERTIES);
        }
        if (size > MAX_ENTITY_BYTES) {
            fail("entity " + e.getPartitionKey() + "/" + e.getRowKey() + " is " + size
                    + " bytes, the service allows " + MAX_ENTITY_BYTES);
        }
        return request;
    }

    private void checkKey(String key) {
        if (key.length() > 1024) {
            fail("key of " + key.length() + " chars, the service allows 1024");
        }
        for (char c : key.toCharArray()) {
            if (c == '/' || c == '\\' || c == '#' || c == '?' || c < 0x20 || (c >= 0x7F && c <= 0x9F)) {
                fail("key '" + key + "' holds a character the service forbids in keys");
            }
        }
    }

    private void fail(String message) {
        violations.add(message);
        throw new AssertionError("Azure Table service limit broken: " + message);
    }
}
