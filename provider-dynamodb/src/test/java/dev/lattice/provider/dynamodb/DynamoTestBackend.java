package dev.lattice.provider.dynamodb;

import dev.lattice.spi.ProviderLimits;
import dev.lattice.testbackends.DynaliteServer;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

import java.net.URI;
import java.util.Map;
import java.util.UUID;

/**
 * The DynamoDB endpoint tests run against: by default the shared dynalite server of lattice-test-backends (loopback,
 * in memory, static dummy credentials); with {@code -Dlattice.dynamodb.endpoint=https://...} a real endpoint instead
 * (opt-in), with {@code -Dlattice.dynamodb.region} (default {@code us-east-1}), credentials from the SDK default
 * chain and one shared table {@code -Dlattice.dynamodb.table} (default {@code lattice-test}, created on demand)
 * in which each test storage is isolated by a unique key prefix.
 *
 * <p>Thread-safe.
 */
final class DynamoTestBackend {

    /** System property selecting a real endpoint. */
    static final String ENDPOINT_PROPERTY = "lattice.dynamodb.endpoint";

    /**
     * DynamoDB's own limits at the SPI level: an entry can never exceed one 400 KB item; batches and checkpoints
     * span several items, so the service puts no bound on them (the provider's declared limits are its own).
     */
    static final ProviderLimits SERVICE_LIMITS = new ProviderLimits(DynamoItemSize.MAX_ITEM_BYTES, Long.MAX_VALUE,
            Integer.MAX_VALUE, Long.MAX_VALUE);

    private static DynamoDbClient raw;
    private static CheckingDynamoDbClient checking;

    private DynamoTestBackend() {
    }

    /** @return whether tests run against a real endpoint */
    static boolean real() {
        String e = System.getProperty(ENDPOINT_PROPERTY);
        return e != null && !e.isBlank();
    }

    /** @return the endpoint: the real one, or the shared dynalite server's (started on first use) */
    static URI endpoint() {
        return real() ? URI.create(System.getProperty(ENDPOINT_PROPERTY)) : DynaliteServer.shared().endpoint();
    }

    /** @return settings for a table on the test endpoint, with credentials, region and table creation */
    static DynamoDbSettings.Builder settings(String table) {
        DynamoDbSettings.Builder b = DynamoDbSettings.builder().table(table).endpoint(endpoint()).createTable(true)
                .apiCallTimeout(java.time.Duration.ofSeconds(60));
        if (real()) {
            b.region(System.getProperty("lattice.dynamodb.region", "us-east-1"));
        } else {
            b.region(DynaliteServer.REGION)
                    .staticCredentials(DynaliteServer.ACCESS_KEY_ID, DynaliteServer.SECRET_ACCESS_KEY, null);
        }
        return b;
    }

    /** @return the options map for {@code dynamodb://} URIs on the test endpoint */
    static Map<String, String> uriOptions() {
        if (real()) {
            return Map.of("endpoint", endpoint().toString(),
                    "region", System.getProperty("lattice.dynamodb.region", "us-east-1"));
        }
        return Map.of("endpoint", endpoint().toString(), "region", DynaliteServer.REGION,
                "accessKeyId", DynaliteServer.ACCESS_KEY_ID, "secretAccessKey", DynaliteServer.SECRET_ACCESS_KEY);
    }

    /** @return one SDK client per JVM (never closed: a shutdown stops the JVM) */
    static synchronized DynamoDbClient rawClient() {
        if (raw == null) {
            raw = DynamoDbWalStorageProvider.buildClient(settings("unused-table").build());
        }
        return raw;
    }

    /** @return one item-limit-checking client per JVM, over {@link #rawClient()}, without fault rules */
    static synchronized CheckingDynamoDbClient checkingClient() {
        if (checking == null) {
            checking = new CheckingDynamoDbClient(rawClient());
        }
        return checking;
    }

    /** An isolated storage: its own table (dynalite) or its own key prefix in a shared table (real endpoint). */
    static final class Storage {
        final String table;
        final String keyPrefix;

        Storage(String table, String keyPrefix) {
            this.table = table;
            this.keyPrefix = keyPrefix;
        }

        /** @return settings for providers over this storage */
        DynamoDbSettings settings() {
            return DynamoTestBackend.settings(table).keyPrefix(keyPrefix).build();
        }

        /** Deletes the storage: the table (dynalite), or every item under the prefix (real endpoint). */
        void drop() {
            DynamoDbClient c = rawClient();
            if (keyPrefix.isEmpty()) {
                c.deleteTable(b -> b.tableName(table));
                return;
            }
            Map<String, AttributeValue> start = null;
            do {
                Map<String, AttributeValue> s = start;
                ScanResponse r = c.scan(b -> {
                    b.tableName(table).filterExpression("begins_with(#p, :pre)")
                            .expressionAttributeNames(Map.of("#p", Layout.PK))
                            .expressionAttributeValues(Map.of(":pre", AttributeValue.fromS(keyPrefix + "|")));
                    if (s != null) {
                        b.exclusiveStartKey(s);
                    }
                });
                for (Map<String, AttributeValue> item : r.items()) {
                    c.deleteItem(b -> b.tableName(table).key(Layout.key(item.get(Layout.PK).s(),
                            Long.parseLong(item.get(Layout.SK).n()))));
                }
                start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
            } while (start != null);
        }
    }

    /**
     * A new isolated storage.
     *
     * @param hint a readable part of the table name or prefix
     * @return the storage; the table is created by the first provider opened over it
     */
    static Storage newStorage(String hint) {
        if (real()) {
            String full = hint.replaceAll("[^A-Za-z0-9_.-]", "") + "-" + UUID.randomUUID();
            String prefix = full.substring(Math.max(0, full.length() - 60));
            return new Storage(System.getProperty("lattice.dynamodb.table", "lattice-test"), prefix);
        }
        return new Storage(DynaliteServer.uniqueTableName(hint), "");
    }
}
