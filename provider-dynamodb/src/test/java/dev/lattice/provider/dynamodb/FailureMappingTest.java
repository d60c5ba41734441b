package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.CheckingDynamoDbClient.Timing;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.InternalServerErrorException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ThrottlingException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How backend failures surface: throttling ({@code ProvisionedThroughputExceededException},
 * {@code RequestLimitExceeded}, {@code ThrottlingException}), 5xx responses, I/O errors and timeouts become
 * {@link ProviderUnavailableException} with the SDK exception as cause, on every kind of call; a 4xx validation
 * error is a plain {@link WalStorageException}. {@code BatchWriteItem} deletes resubmit unprocessed items until done,
 * and give up at the deadline without reporting success; the next trim finishes the job.
 */
class FailureMappingTest {

    private static final LogId LOG = new LogId("failures", 2);

    private final CheckingDynamoDbClient client = new CheckingDynamoDbClient(DynamoTestBackend.rawClient());
    private DynamoTestBackend.Storage storage;
    private DynamoDbWalStorageProvider provider;
    private Fence fence;
    private List<EncodedBatch> base;

    @BeforeEach
    void open() {
        storage = DynamoTestBackend.newStorage("failures");
        provider = DynamoDbWalStorageProvider.open(client, DynamoTestBackend.settings(storage.table)
                .keyPrefix(storage.keyPrefix).batchWriteDeadline(Duration.ofSeconds(2)).build());
        fence = provider.claim(LOG);
        provider.reconcile(LOG, fence);
        base = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            EncodedBatch b = batch(i, i * 5L, 5, 30);
            provider.append(LOG, fence, b);
            base.add(b);
        }
    }

    @AfterEach
    void close() {
        client.clearFaults();
        provider.close();
        storage.drop();
    }

    private static DynamoDbException serviceError(String kind) {
        switch (kind) {
            case "ProvisionedThroughputExceeded":
                return (DynamoDbException) ProvisionedThroughputExceededException.builder().statusCode(400)
                        .message("injected").build();
            case "RequestLimitExceeded":
                return (DynamoDbException) RequestLimitExceededException.builder().statusCode(400)
                        .message("injected").build();
            case "Throttling":
                return (DynamoDbException) ThrottlingException.builder().statusCode(400).message("injected").build();
            case "InternalServerError":
                return (DynamoDbException) InternalServerErrorException.builder().statusCode(500)
                        .message("injected").build();
            case "ServiceUnavailable503":
                return (DynamoDbException) DynamoDbException.builder().statusCode(503).message("injected")
                        .awsErrorDetails(AwsErrorDetails.builder().errorCode("ServiceUnavailable").build()).build();
            default:
                throw new IllegalArgumentException(kind);
        }
    }

    /** Each throttling or 5xx error, on a stage, a commit, a read and a state call: ProviderUnavailableException. */
    @ParameterizedTest
    @ValueSource(strings = {"ProvisionedThroughputExceeded", "RequestLimitExceeded", "Throttling",
        "InternalServerError", "ServiceUnavailable503"})
    void throttlingAndServerErrorsAreTransient(String kind) {
        Supplier<RuntimeException> error = () -> serviceError(kind);
        EncodedBatch next = batch(99, 40, 3, 30);
        client.inject(PutItemRequest.class, r -> true, Timing.BEFORE, 0, 1, error);
        assertTransient(() -> provider.stage(LOG, fence, next), kind);
        provider.stage(LOG, fence, next);
        client.inject(UpdateItemRequest.class, r -> true, Timing.BEFORE, 0, 1, error);
        assertTransient(() -> provider.commit(LOG, fence, 42), kind);
        provider.commit(LOG, fence, 42);
        client.inject(QueryRequest.class, r -> true, Timing.BEFORE, 0, 1, error);
        assertTransient(() -> provider.read(LOG, -1, 100, 100_000), kind);
        client.inject(GetItemRequest.class, r -> true, Timing.BEFORE, 0, 1, error);
        assertTransient(() -> provider.state(LOG), kind);
        List<LogEntry> expected = new ArrayList<>(entriesOf(base));
        expected.addAll(entriesOf(next));
        assertSameEntries(readAll(provider, LOG), expected);
    }

    private static void assertTransient(Runnable call, String kind) {
        assertThatThrownBy(call::run).as(kind).isInstanceOf(ProviderUnavailableException.class)
                .hasCauseInstanceOf(DynamoDbException.class).hasMessageContaining("transient");
    }

    /** An I/O error and an API call timeout are transient too. */
    @Test
    void ioErrorsAndTimeoutsAreTransient() {
        client.inject(QueryRequest.class, r -> true, Timing.BEFORE, 0, 1, () -> SdkClientException.builder()
                .message("Unable to execute HTTP request: Connection reset").cause(new IOException("reset")).build());
        assertThatThrownBy(() -> provider.read(LOG, -1, 10, 10_000)).isInstanceOf(ProviderUnavailableException.class)
                .hasCauseInstanceOf(SdkClientException.class);
        client.inject(UpdateItemRequest.class, r -> true, Timing.BEFORE, 0, 1, () -> ApiCallTimeoutException.builder()
                .message("injected timeout").build());
        assertThatThrownBy(() -> provider.claim(LOG)).isInstanceOf(ProviderUnavailableException.class)
                .hasCauseInstanceOf(ApiCallTimeoutException.class);
    }

    /** A 400 validation error is not transient: a plain WalStorageException with the cause. */
    @Test
    void validationErrorsAreNotTransient() {
        client.inject(QueryRequest.class, r -> true, Timing.BEFORE, 0, 1, () -> DynamoDbException.builder()
                .statusCode(400).message("injected validation error")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("ValidationException").build()).build());
        assertThatThrownBy(() -> provider.read(LOG, -1, 10, 10_000)).isInstanceOf(WalStorageException.class)
                .isNotInstanceOf(ProviderUnavailableException.class).hasCauseInstanceOf(DynamoDbException.class);
    }

    private int itemsAtOrBelow(long sortKey) {
        QueryResponse r = DynamoTestBackend.rawClient().query(q -> q.tableName(storage.table)
                .keyConditionExpression("#p = :p AND #s BETWEEN :z AND :k").consistentRead(true)
                .expressionAttributeNames(Map.of("#p", Layout.PK, "#s", Layout.SK))
                .expressionAttributeValues(Map.of(":p", AttributeValue.fromS(provider.layout().logKey(LOG)),
                        ":z", Layout.n(0), ":k", Layout.n(sortKey))));
        return r.count();
    }

    /** Throttled BatchWriteItem deletes: unprocessed items are resubmitted until every one is done. */
    @Test
    void unprocessedDeletesAreResubmittedUntilDone() {
        client.throttleBatchWrites(3, false);
        long before = provider.metrics().unprocessedResubmits();
        provider.trim(LOG, fence, 29);
        assertThat(provider.metrics().unprocessedResubmits() - before).isGreaterThanOrEqualTo(3);
        assertThat(itemsAtOrBelow(29)).isZero();
        assertSameEntries(readAll(provider, LOG), entriesOf(base).subList(30, 40));
    }

    /**
     * Deletes that stay unprocessed past the deadline: the trim fails with ProviderUnavailableException (never
     * success), the watermark it recorded first still hides the entries, and the next trim deletes them.
     */
    @Test
    void deletesUnprocessedAtTheDeadlineFailTheTrim() {
        client.throttleBatchWrites(0, true);
        assertThatThrownBy(() -> provider.trim(LOG, fence, 19)).isInstanceOf(ProviderUnavailableException.class)
                .hasMessageContaining("unprocessed");
        client.clearFaults();
        assertThat(itemsAtOrBelow(19)).as("the deletes did not happen").isEqualTo(4);
        assertSameEntries(readAll(provider, LOG), entriesOf(base).subList(20, 40));
        assertThat(provider.state(LOG).trimWatermark()).isEqualTo(19);
        provider.trim(LOG, fence, 24);
        assertThat(itemsAtOrBelow(24)).isZero();
        assertSameEntries(readAll(provider, LOG), entriesOf(base).subList(25, 40));
        assertThat(provider.state(LOG).retainedEntries()).isEqualTo(15);
    }
}
