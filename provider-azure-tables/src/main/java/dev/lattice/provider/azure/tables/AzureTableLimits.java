package dev.lattice.provider.azure.tables;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

/**
 * The Azure Table service's hard limits (from the service's published "Understanding the Table service data model"
 * and "Performing entity group transactions" pages) and the size estimates this provider packs rows and
 * transactions with. The emulator used in tests (Azurite) does not enforce all of them, so the provider checks every
 * entity and transaction against these numbers itself before sending it.
 *
 * <p>Stateless and thread-safe.
 */
public final class AzureTableLimits {
    /** Most actions (entities) in one entity-group transaction, inclusive. */
    public static final int MAX_TRANSACTION_ACTIONS = 100;
    /** Largest request payload of one entity-group transaction, bytes, inclusive (4 MiB). */
    public static final int MAX_TRANSACTION_PAYLOAD_BYTES = 4 << 20;
    /** Largest entity, bytes, inclusive (1 MiB), as computed by {@link #entityBytes}. */
    public static final int MAX_ENTITY_BYTES = 1 << 20;
    /** Most custom properties of one entity, inclusive (255 including PartitionKey, RowKey and Timestamp). */
    public static final int MAX_CUSTOM_PROPERTIES = 252;
    /** Largest binary property value, bytes, inclusive (64 KiB). */
    public static final int MAX_BINARY_PROPERTY_BYTES = 64 << 10;
    /** Longest string property value, UTF-16 code units, inclusive (64 KiB as UTF-16). */
    public static final int MAX_STRING_PROPERTY_CHARS = 32 << 10;
    /** Longest PartitionKey or RowKey, UTF-16 code units, inclusive (1 KiB). */
    public static final int MAX_KEY_CHARS = 1024;

    /**
     * Bytes this provider budgets for one action's framing inside a transaction request (change-set boundary,
     * request line with the table URL, headers, JSON punctuation): far more than Azure's real framing for an account
     * URL of normal length.
     */
    static final int ACTION_OVERHEAD_BYTES = 2048;
    /** Bytes budgeted for the transaction's own envelope (batch boundary and headers). */
    static final int TRANSACTION_OVERHEAD_BYTES = 16 << 10;

    private AzureTableLimits() {
    }

    /**
     * The size the service charges an entity with, per its published formula: 4 bytes, plus 2 bytes per character of
     * PartitionKey and RowKey, plus for every property 8 bytes, 2 bytes per character of its name and the value's
     * size (binary: length + 4; string: 4 + 2 per UTF-16 unit; Int64, Double, DateTime: 8; Int32: 4; Boolean: 1;
     * Guid: 16). The service-maintained Timestamp property (34 bytes) is included.
     *
     * @param partitionKey the entity's PartitionKey
     * @param rowKey the entity's RowKey
     * @param properties the custom properties (OData annotations such as {@code odata.etag} and keys are skipped)
     * @return the size, bytes
     * @throws IllegalArgumentException for a value type the provider never writes
     */
    public static long entityBytes(String partitionKey, String rowKey, Map<String, Object> properties) {
        long size = 4 + 2L * (partitionKey.length() + rowKey.length()) + 8 + 2 * "Timestamp".length() + 8;
        for (Map.Entry<String, Object> p : properties.entrySet()) {
            if (isSystemProperty(p.getKey())) {
                continue;
            }
            size += 8 + 2L * p.getKey().length() + valueBytes(p.getKey(), p.getValue());
        }
        return size;
    }

    /**
     * An upper bound of the bytes one action adds to a transaction request: base64 for binary values, the decimal
     * text for numbers, the keys twice (URL and body), type annotations, plus {@link #ACTION_OVERHEAD_BYTES}.
     *
     * @param partitionKey the entity's PartitionKey
     * @param rowKey the entity's RowKey
     * @param properties the custom properties
     * @return the estimate, bytes
     */
    public static long actionRequestBytes(String partitionKey, String rowKey, Map<String, Object> properties) {
        long size = ACTION_OVERHEAD_BYTES + 3L * (utf8(partitionKey) + utf8(rowKey));
        for (Map.Entry<String, Object> p : properties.entrySet()) {
            if (isSystemProperty(p.getKey())) {
                continue;
            }
            Object v = p.getValue();
            long value;
            if (v instanceof byte[] b) {
                value = 4L * ((b.length + 2) / 3);
            } else if (v instanceof String s) {
                value = 6L * s.length(); // worst-case JSON escaping
            } else {
                value = 32;
            }
            size += 2L * utf8(p.getKey()) + 48 + value; // "name":..., "name@odata.type":"Edm.Xxx",
        }
        return size;
    }

    /** @return whether the name is a key, Timestamp or an OData annotation, not a custom property */
    static boolean isSystemProperty(String name) {
        return name.equals("PartitionKey") || name.equals("RowKey") || name.equals("Timestamp")
                || name.startsWith("odata.") || name.contains("@odata.");
    }

    private static long valueBytes(String name, Object v) {
        if (v instanceof byte[] b) {
            return b.length + 4L;
        } else if (v instanceof String s) {
            return 4 + 2L * s.length();
        } else if (v instanceof Long || v instanceof Double || v instanceof java.time.OffsetDateTime) {
            return 8;
        } else if (v instanceof Integer) {
            return 4;
        } else if (v instanceof Boolean) {
            return 1;
        } else if (v instanceof UUID) {
            return 16;
        }
        throw new IllegalArgumentException("property '" + name + "' has a type the provider never writes: "
                + (v == null ? "null" : v.getClass().getName()));
    }

    private static int utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
