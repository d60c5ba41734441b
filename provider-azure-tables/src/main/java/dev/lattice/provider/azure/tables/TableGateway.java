package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableTransactionAction;
import java.util.List;

/**
 * The table operations the provider uses, so that tests can wrap them (enforce the service's limits on every
 * request, count requests, inject a failure between two writes). Every write is an entity-group transaction (one
 * partition key, at most {@link AzureTableLimits#MAX_TRANSACTION_ACTIONS} actions, all or nothing), except run chunk
 * rows, which go one per single-entity {@link #insert}.
 *
 * <p>Implementations are thread-safe. Failures surface as the Azure SDK's exceptions
 * ({@code TableServiceException}, {@code TableTransactionFailedException}, or a runtime exception for I/O);
 * the provider maps them.
 */
interface TableGateway {

    /**
     * Point read of one entity.
     *
     * @param partitionKey the PartitionKey
     * @param rowKey the RowKey
     * @return the entity with its ETag, or {@code null} when it does not exist
     */
    TableEntity get(String partitionKey, String rowKey);

    /**
     * Submits one entity-group transaction.
     *
     * @param actions 1 to 100 actions on one partition
     * @throws com.azure.data.tables.models.TableTransactionFailedException when an action fails (nothing applied)
     */
    void submit(List<TableTransactionAction> actions);

    /**
     * Inserts one entity outside any transaction (a single-entity Insert Entity request): the service refuses it with
     * 409 {@code EntityAlreadyExists} when the row exists. Used for run chunk rows, whose requests are kept to one row
     * so that the SDK holds one row's request body at a time (an entity-group transaction's multipart body is built
     * through several in-memory copies).
     *
     * @param entity the entity, at most 1 MiB under the service's formula
     * @throws com.azure.data.tables.models.TableServiceException when the service refuses it (409 if it exists)
     */
    void insert(TableEntity entity);

    /**
     * Fetches one page of a query. The service may return fewer entities than {@code top}, even none, together with
     * a continuation token: callers follow tokens until there is none.
     *
     * @param filter the OData filter
     * @param select the properties to return, or {@code null} for all
     * @param top most entities in the page, 1 to 1000
     * @param continuationToken {@code null} for the first page, else the previous page's token
     * @return the page
     */
    QueryPage query(String filter, List<String> select, int top, String continuationToken);

    /** Creates the table when it does not exist. */
    void createTableIfNotExists();

    /**
     * The service endpoint, for messages (never a secret: no SAS token or key).
     *
     * @return the endpoint URL, or null when unknown
     */
    default String endpoint() {
        return null;
    }

    /**
     * One page of query results.
     *
     * @param entities the entities, in PartitionKey then RowKey order
     * @param continuationToken the token for the next page, {@code null} at the end
     */
    record QueryPage(List<TableEntity> entities, String continuationToken) {
    }
}
