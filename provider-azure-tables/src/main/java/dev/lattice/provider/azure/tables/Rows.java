package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Payload properties and transaction packing shared by data rows and checkpoint chunk rows. Stateless.
 */
final class Rows {
    /** Names of the payload properties, in order. */
    private static final String[] PAYLOAD = new String[Layout.MAX_PROPERTIES_PER_ROW];

    static {
        for (int i = 0; i < PAYLOAD.length; i++) {
            PAYLOAD[i] = String.format("P%02d", i);
        }
    }

    private Rows() {
    }

    /** @return the payload property names, for a query's select list */
    static List<String> payloadNames() {
        return Arrays.asList(PAYLOAD);
    }

    /**
     * @param index 0 to {@link Layout#MAX_PROPERTIES_PER_ROW} - 1
     * @return the name of the {@code index}-th payload property ({@code P00}, {@code P01}, ...)
     */
    static String payloadName(int index) {
        return PAYLOAD[index];
    }

    /**
     * Puts {@code len} bytes of {@code src} into the row's payload properties, {@code layout.propertyBytes()} per
     * property.
     *
     * @throws IllegalArgumentException if the bytes need more than {@code layout.propertiesPerRow()} properties
     */
    static void putPayload(TableEntity row, byte[] src, int off, int len, Layout layout) {
        if (len > layout.rowBytes()) {
            throw new IllegalArgumentException(len + " bytes do not fit one row of " + layout.rowBytes());
        }
        int p = 0;
        for (int pos = 0; pos < len; pos += layout.propertyBytes()) {
            int n = Math.min(layout.propertyBytes(), len - pos);
            row.addProperty(PAYLOAD[p++], Arrays.copyOfRange(src, off + pos, off + pos + n));
        }
    }

    /**
     * Concatenates a row's payload properties {@code P00, P01, ...} in order, stopping at the first missing one.
     *
     * @param row the row
     * @param out where the bytes go
     * @return the number of bytes appended
     * @throws IllegalStateException if a payload property is not binary
     */
    static int appendPayload(TableEntity row, ByteArrayOutputStream out) {
        int total = 0;
        for (String name : PAYLOAD) {
            Object v = row.getProperty(name);
            if (v == null) {
                break;
            }
            if (!(v instanceof byte[] b)) {
                throw new IllegalStateException("property " + name + " of row " + row.getRowKey() + " is not binary");
            }
            out.write(b, 0, b.length);
            total += b.length;
        }
        return total;
    }

    /**
     * Groups rows of one partition into transactions in order: each holds at most
     * {@link AzureTableLimits#MAX_TRANSACTION_ACTIONS} actions and at most
     * {@link AzureTableLimits#MAX_TRANSACTION_PAYLOAD_BYTES} estimated request bytes; every row is checked against
     * the entity limits first.
     *
     * @param rows rows of one partition
     * @param type the action type for every row
     * @return the transactions, in row order
     * @throws IllegalStateException if a row breaks an entity limit (a layout bug, never the caller's input)
     */
    static List<List<TableTransactionAction>> pack(List<TableEntity> rows, TableTransactionActionType type) {
        List<List<TableTransactionAction>> out = new ArrayList<>();
        List<TableTransactionAction> current = new ArrayList<>();
        long budget = AzureTableLimits.MAX_TRANSACTION_PAYLOAD_BYTES - AzureTableLimits.TRANSACTION_OVERHEAD_BYTES;
        long used = 0;
        for (TableEntity row : rows) {
            checkEntity(row);
            long bytes = AzureTableLimits.actionRequestBytes(row.getPartitionKey(), row.getRowKey(),
                    row.getProperties());
            if (!current.isEmpty() && (current.size() == AzureTableLimits.MAX_TRANSACTION_ACTIONS
                    || used + bytes > budget)) {
                out.add(current);
                current = new ArrayList<>();
                used = 0;
            }
            if (bytes > budget) {
                throw new IllegalStateException("row " + row.getRowKey() + " needs " + bytes
                        + " request bytes, more than one transaction's " + budget);
            }
            current.add(new TableTransactionAction(type, row));
            used += bytes;
        }
        if (!current.isEmpty()) {
            out.add(current);
        }
        return out;
    }

    /**
     * Checks one entity against the service's entity limits.
     *
     * @throws IllegalStateException naming the limit it breaks
     */
    static void checkEntity(TableEntity row) {
        long size = AzureTableLimits.entityBytes(row.getPartitionKey(), row.getRowKey(), row.getProperties());
        if (size > AzureTableLimits.MAX_ENTITY_BYTES) {
            throw new IllegalStateException("row " + row.getRowKey() + " is " + size
                    + " bytes, above the service's entity limit of " + AzureTableLimits.MAX_ENTITY_BYTES);
        }
        int custom = 0;
        for (var p : row.getProperties().entrySet()) {
            if (AzureTableLimits.isSystemProperty(p.getKey())) {
                continue;
            }
            custom++;
            if (p.getValue() instanceof byte[] b && b.length > AzureTableLimits.MAX_BINARY_PROPERTY_BYTES) {
                throw new IllegalStateException("property " + p.getKey() + " of row " + row.getRowKey() + " is "
                        + b.length + " bytes, above the service's limit of "
                        + AzureTableLimits.MAX_BINARY_PROPERTY_BYTES);
            }
        }
        if (custom > AzureTableLimits.MAX_CUSTOM_PROPERTIES) {
            throw new IllegalStateException("row " + row.getRowKey() + " has " + custom
                    + " properties, above the service's limit of " + AzureTableLimits.MAX_CUSTOM_PROPERTIES);
        }
    }

    /** @return the property as a long (Int32 or Int64 in the table) */
    static long getLong(TableEntity e, String name) {
        Object v = e.getProperty(name);
        if (v instanceof Long l) {
            return l;
        }
        if (v instanceof Integer i) {
            return i;
        }
        throw new IllegalStateException("row " + e.getPartitionKey() + "/" + e.getRowKey() + " lacks numeric property "
                + name + " (found " + v + ")");
    }

    /** @return the property as an int */
    static int getInt(TableEntity e, String name) {
        long v = getLong(e, name);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new IllegalStateException("property " + name + " of " + e.getRowKey() + " is out of int range");
        }
        return (int) v;
    }

    /** @return the property as bytes */
    static byte[] getBytes(TableEntity e, String name) {
        Object v = e.getProperty(name);
        if (v instanceof byte[] b) {
            return b;
        }
        throw new IllegalStateException("row " + e.getPartitionKey() + "/" + e.getRowKey() + " lacks binary property "
                + name);
    }
}
