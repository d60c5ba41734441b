package dev.lattice.provider.dynamodb;

import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testbackends.DynaliteServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * URI and option validation (clear {@link IllegalArgumentException}s naming the option, before any request),
 * secrets kept out of messages and {@code toString}, ServiceLoader discovery by scheme, table creation and key-schema
 * checks, key-prefix isolation, the handed-in client, and the descriptor.
 */
class OptionsAndDiscoveryTest {

    private static final String SECRET = "wJalrXUtnFEMI-very-secret-key";

    /** Malformed URIs and options fail with IllegalArgumentException naming the problem. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "dynamodb://tbl?colour=blue                        | unknown option(s) [colour]",
        "dynamodb://tbl?Region=eu-west-1                   | unknown option(s) [Region]",
        "dynamodb:///                                      | needs a table",
        "dynamodb://ab                                     | table name must be 3-255",
        "dynamodb://tbl?region=EU_WEST                     | option 'region' must look like",
        "dynamodb://tbl?endpoint=ftp://x                   | option 'endpoint' must be http(s)",
        "dynamodb://tbl?accessKeyId=AKIA                   | go together",
        "dynamodb://tbl?sessionToken=tok                   | needs 'accessKeyId'",
        "dynamodb://tbl?createTable=maybe                  | option 'createTable' must be true or false",
        "dynamodb://tbl?keyPrefix=a%2Fb                    | option 'keyPrefix' must be",
        "dynamodb://tbl?maxAttempts=0                      | option 'maxAttempts' must be in 1..20",
        "dynamodb://tbl?apiCallTimeout=soon                | option 'apiCallTimeout' must be a duration",
        "dynamodb://tbl?batchWriteDeadline=0s              | option 'batchWriteDeadline' must be positive",
        "dynamodb://tbl?runCacheBytes=-1                   | option 'runCacheBytes' must be in 0..1073741824",
        "dynamodb://tbl?runCacheBytes=1073741825           | option 'runCacheBytes' must be in 0..1073741824",
        "dynamodb://tbl?runCacheBytes=4MiB                 | option 'runCacheBytes' must be an integer",
        "dynamodb://tbl?runChunkBytes=4095                 | option 'runChunkBytes' must be in 4096..408576",
        "dynamodb://tbl?runChunkBytes=408577               | option 'runChunkBytes' must be in 4096..408576",
        "postgres://tbl                                    | URI scheme must be 'dynamodb'",
    })
    void badUrisAndOptionsAreRefused(String uri, String message) {
        Throwable t = catchThrowable(() -> DynamoDbSettings.fromUri(URI.create(uri), Map.of()));
        assertThat(t).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    /** The accepted URI forms and option values. */
    @Test
    void uriFormsAndOptionsParse() {
        DynamoDbSettings s = DynamoDbSettings.fromUri(URI.create("dynamodb://my.table-1?region=eu-west-1"
                + "&endpoint=http://127.0.0.1:8000&createTable=true&keyPrefix=app-1&apiCallTimeout=5s&maxAttempts=5"
                + "&batchWriteDeadline=PT2S&connectTimeout=250ms&tableActiveTimeout=1m"), Map.of());
        assertThat(s.table()).isEqualTo("my.table-1");
        assertThat(s.region()).isEqualTo("eu-west-1");
        assertThat(s.endpoint()).isEqualTo(URI.create("http://127.0.0.1:8000"));
        assertThat(s.createTable()).isTrue();
        assertThat(s.keyPrefix()).isEqualTo("app-1");
        assertThat(s.apiCallTimeout()).hasSeconds(5);
        assertThat(s.maxAttempts()).isEqualTo(5);
        assertThat(s.batchWriteDeadline()).hasSeconds(2);
        assertThat(s.connectTimeout()).hasMillis(250);
        assertThat(s.tableActiveTimeout()).hasMinutes(1);
        assertThat(s.hasStaticCredentials()).isFalse();
        assertThat(DynamoDbSettings.fromUri(URI.create("dynamodb:other_table"), Map.of()).table())
                .isEqualTo("other_table");
        assertThat(s.runCacheBytes()).as("default run cache").isEqualTo(4L << 20);
        assertThat(s.runChunkBytes()).as("default run chunk").isEqualTo(64 << 10);
        DynamoDbSettings runs = DynamoDbSettings.fromUri(URI.create("dynamodb://tbl?runCacheBytes=0"),
                Map.of("runChunkBytes", "408576"));
        assertThat(runs.runCacheBytes()).isZero();
        assertThat(runs.runChunkBytes()).isEqualTo(DynamoDbRunStore.MAX_CHUNK_BYTES);
        assertThat(runs.toString()).contains("runCacheBytes=0", "runChunkBytes=408576");
        assertThatThrownBy(() -> DynamoDbSettings.builder().runCacheBytes((1L << 30) + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'runCacheBytes'");
        assertThatThrownBy(() -> DynamoDbSettings.builder().runChunkBytes(1000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'runChunkBytes'");
        assertThat(DynamoDbSettings.fromUri(URI.create("dynamodb://x"), Map.of("table", "from_map")).table())
                .isEqualTo("from_map");
    }

    /** Static credentials: never in toString, nor in the message of any refusal. */
    @Test
    void secretsStayOutOfMessages() {
        DynamoDbSettings s = DynamoDbSettings.fromUri(URI.create("dynamodb://tbl"),
                Map.of("accessKeyId", "AKIAEXAMPLE", "secretAccessKey", SECRET, "sessionToken", SECRET + "-tok"));
        assertThat(s.hasStaticCredentials()).isTrue();
        assertThat(s.toString()).doesNotContain(SECRET).contains("static");
        Throwable unknown = catchThrowable(() -> DynamoDbSettings.fromUri(URI.create("dynamodb://tbl?bogus=1"),
                Map.of("accessKeyId", "AKIAEXAMPLE", "secretAccessKey", SECRET)));
        assertThat(unknown).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bogus");
        assertThat(trace(unknown)).doesNotContain(SECRET);
        Map<String, String> options = new HashMap<>(DynamoTestBackend.uriOptions());
        options.put("secretAccessKey", SECRET);
        options.put("accessKeyId", "AKIAEXAMPLE");
        Throwable missing = catchThrowable(() -> DynamoDbWalStorageProvider.open(
                URI.create("dynamodb://" + DynaliteServer.uniqueTableName("missing")), options).close());
        assertThat(missing).isInstanceOf(WalStorageException.class).hasMessageContaining("createTable=true");
        assertThat(trace(missing)).doesNotContain(SECRET);
    }

    private static String trace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return w.toString();
    }

    /**
     * The factory is found by scheme through ServiceLoader, opens a working provider (creating the table), and
     * describes itself: replicated durability, its limits and features.
     */
    @Test
    void discoveredByScheme() throws Exception {
        assertThat(Providers.schemes()).contains("dynamodb");
        assertThat(Providers.factory("dynamodb").description()).contains("dynamodb://");
        DynamoTestBackend.Storage storage = DynamoTestBackend.newStorage("discovery");
        Map<String, String> options = new HashMap<>(DynamoTestBackend.uriOptions());
        options.put("createTable", "true");
        if (!storage.keyPrefix.isEmpty()) {
            options.put("keyPrefix", storage.keyPrefix);
        }
        try (WalStorageProvider p = Providers.open(URI.create("dynamodb://" + storage.table), options)) {
            assertThat(p).isInstanceOf(DynamoDbWalStorageProvider.class);
            assertThat(p.describe().durability()).isEqualTo(DurabilityLevel.REPLICATED);
            assertThat(p.describe().features()).contains(ProviderFeature.PERSISTENT, ProviderFeature.CONCURRENT_STAGE,
                    ProviderFeature.PHYSICAL_BYTES);
            // a remote provider's calls must stay on the engine's pool, under its call deadline
            assertThat(p.describe().features()).doesNotContain(ProviderFeature.LOCAL_CALLS);
            assertThat(p.describe().limits()).isEqualTo(DynamoDbWalStorageProvider.LIMITS);
            assertThat(p.runs().limits().preferredReadBytes()).as("one chunk of the default size")
                    .isEqualTo(DynamoDbSettings.DEFAULT_RUN_CHUNK_BYTES);
            LogId log = new LogId("discovered", 0);
            Fence f = p.claim(log);
            p.reconcile(log, f);
            p.append(log, f, batch(1, 0, 3, 10));
            assertThat(readAll(p, log)).hasSize(3);
        } finally {
            storage.drop();
        }
    }

    /** A table with another key schema is refused with a message naming the schema the provider needs. */
    @Test
    void wrongKeySchemaIsRefused() {
        String table = DynaliteServer.uniqueTableName("wrong-schema");
        DynamoTestBackend.rawClient().createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder().attributeName("id")
                        .attributeType(ScalarAttributeType.S).build())
                .keySchema(KeySchemaElement.builder().attributeName("id").keyType(KeyType.HASH).build()));
        try {
            assertThatThrownBy(() -> DynamoDbWalStorageProvider.open(DynamoTestBackend.checkingClient(),
                    DynamoTestBackend.settings(table).build())).isInstanceOf(WalStorageException.class)
                    .hasMessageContaining("partition key p (S) and sort key s (N)");
        } finally {
            DynamoTestBackend.rawClient().deleteTable(b -> b.tableName(table));
        }
    }

    /**
     * Two providers with different key prefixes share one table without seeing each other; closing a provider
     * leaves a handed-in client open.
     */
    @Test
    void keyPrefixesIsolateProvidersAndTheHandedInClientStaysOpen() {
        String table = DynaliteServer.uniqueTableName("prefixes");
        CheckingDynamoDbClient client = new CheckingDynamoDbClient(DynamoTestBackend.rawClient());
        try (DynamoDbWalStorageProvider one = DynamoDbWalStorageProvider.open(client,
                DynamoTestBackend.settings(table).keyPrefix("one").build());
             DynamoDbWalStorageProvider two = DynamoDbWalStorageProvider.open(client,
                     DynamoTestBackend.settings(table).keyPrefix("two").build())) {
            LogId log = new LogId("shared", 0);
            Fence f1 = one.claim(log);
            one.reconcile(log, f1);
            one.append(log, f1, batch(1, 0, 4, 10));
            assertThat(two.trees()).isEmpty();
            assertThat(two.state(log).committedTail()).isEqualTo(-1);
            Fence f2 = two.claim(log);
            assertThat(f2.epoch()).isEqualTo(1);
            two.reconcile(log, f2);
            two.append(log, f2, batch(2, 0, 2, 10));
            assertThat(readAll(one, log)).hasSize(4);
            assertThat(readAll(two, log)).hasSize(2);
            assertThat(one.trees()).isEqualTo(List.of("shared"));
            one.close();
            assertThat(client.describeTable(b -> b.tableName(table)).table().tableName()).isEqualTo(table);
        } finally {
            DynamoTestBackend.rawClient().deleteTable(b -> b.tableName(table));
        }
    }
}
