package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.DynamoDbMetrics.Operation;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

import java.util.HashMap;
import java.util.Map;

/**
 * Setting up: the SDK client the provider builds for itself, and the table check or creation at open
 * (docs/providers/dynamodb.md, "URI and options" and "Key schema and items").
 *
 * <p>Stateless and thread-safe.
 */
final class TableSetup {

    private static final Logger LOG = LoggerFactory.getLogger(TableSetup.class);

    private TableSetup() {
    }

    /**
     * Builds the SDK client of {@link DynamoDbWalStorageProvider#open(DynamoDbSettings)}.
     *
     * @param s the settings
     * @return a new client; the caller closes it
     * @throws IllegalArgumentException if no region is set and the default chain finds none
     */
    static DynamoDbClient buildClient(DynamoDbSettings s) {
        Region region;
        if (s.region() != null) {
            region = Region.of(s.region());
        } else {
            try {
                region = DefaultAwsRegionProviderChain.builder().build().getRegion();
            } catch (SdkException e) {
                throw new IllegalArgumentException("option 'region' is required: the AWS SDK default region chain "
                        + "(AWS_REGION, profile, instance metadata) found none", e);
            }
        }
        DynamoDbClientBuilder b = DynamoDbClient.builder()
                .region(region)
                .httpClient(UrlConnectionHttpClient.builder().connectionTimeout(s.connectTimeout())
                        .socketTimeout(s.socketTimeout()).build())
                .overrideConfiguration(c -> c.apiCallTimeout(s.apiCallTimeout())
                        .apiCallAttemptTimeout(s.apiCallAttemptTimeout())
                        .retryStrategy(r -> r.maxAttempts(s.maxAttempts())));
        if (s.endpoint() != null) {
            b.endpointOverride(s.endpoint());
        }
        if (s.hasStaticCredentials()) {
            AwsCredentials creds = s.sessionToken() == null
                    ? AwsBasicCredentials.create(s.accessKeyId(), s.secretAccessKey())
                    : AwsSessionCredentials.create(s.accessKeyId(), s.secretAccessKey(), s.sessionToken());
            b.credentialsProvider(StaticCredentialsProvider.create(creds));
        } else {
            b.credentialsProvider(DefaultCredentialsProvider.builder().build());
        }
        return b.build();
    }

    /**
     * Checks the table exists with the provider's key schema, creating it (on-demand billing) when missing and
     * {@code createTable} is set.
     *
     * @param calls the backend calls
     * @param settings the settings (table name, createTable, tableActiveTimeout)
     * @throws ProviderUnavailableException if DynamoDB cannot be reached or the table does not become active in time
     * @throws WalStorageException if the table is missing (without {@code createTable}) or has another key schema
     */
    static void ensureTable(DynamoCalls calls, DynamoDbSettings settings) {
        String table = settings.table();
        TableDescription t;
        try {
            t = calls.call(null, Operation.TABLE, () -> calls.client().describeTable(b -> b.tableName(table))).table();
        } catch (WalStorageException e) {
            if (!(e.getCause() instanceof ResourceNotFoundException)) {
                throw e;
            }
            if (!settings.createTable()) {
                throw new WalStorageException(null, "DynamoDB table '" + table + "' does not exist; create it with "
                        + "partition key p (S) and sort key s (N), or set option createTable=true", e.getCause());
            }
            t = createTable(calls, settings, table);
        }
        checkKeySchema(t);
    }

    private static TableDescription createTable(DynamoCalls calls, DynamoDbSettings settings, String table) {
        try {
            calls.call(null, Operation.TABLE, () -> calls.client().createTable(b -> b.tableName(table)
                    .billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(
                            AttributeDefinition.builder().attributeName(Layout.PK)
                                    .attributeType(ScalarAttributeType.S).build(),
                            AttributeDefinition.builder().attributeName(Layout.SK)
                                    .attributeType(ScalarAttributeType.N).build())
                    .keySchema(KeySchemaElement.builder().attributeName(Layout.PK).keyType(KeyType.HASH).build(),
                            KeySchemaElement.builder().attributeName(Layout.SK).keyType(KeyType.RANGE).build())));
            LOG.info("created DynamoDB table {} (on-demand billing)", table);
        } catch (WalStorageException e) {
            if (!(e.getCause() instanceof ResourceInUseException)) {
                throw e;
            }
        }
        long deadline = System.nanoTime() + settings.tableActiveTimeout().toNanos();
        while (true) {
            TableDescription t = calls.call(null, Operation.TABLE,
                    () -> calls.client().describeTable(b -> b.tableName(table))).table();
            if (t.tableStatus() == TableStatus.ACTIVE) {
                return t;
            }
            if (System.nanoTime() > deadline) {
                throw new ProviderUnavailableException(null, "DynamoDB table '" + table + "' is not active after "
                        + settings.tableActiveTimeout().toSeconds() + " s (status " + t.tableStatus() + ")", null);
            }
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ProviderUnavailableException(null, "interrupted while waiting for table '" + table
                        + "' to become active", e);
            }
        }
    }

    private static void checkKeySchema(TableDescription t) {
        Map<String, String> types = new HashMap<>();
        for (AttributeDefinition d : t.attributeDefinitions()) {
            types.put(d.attributeName(), d.attributeTypeAsString());
        }
        Map<String, String> keys = new HashMap<>();
        for (KeySchemaElement k : t.keySchema()) {
            keys.put(k.keyTypeAsString(), k.attributeName());
        }
        if (!Layout.PK.equals(keys.get("HASH")) || !Layout.SK.equals(keys.get("RANGE"))
                || !"S".equals(types.get(Layout.PK)) || !"N".equals(types.get(Layout.SK))) {
            throw new WalStorageException(null, "DynamoDB table '" + t.tableName() + "' has key schema " + keys
                    + " " + types + "; the provider needs partition key p (S) and sort key s (N)");
        }
    }
}
