package dev.lattice.provider.azure.tables;

import com.azure.core.http.rest.PagedResponse;
import com.azure.core.util.Context;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableServiceException;
import com.azure.data.tables.models.TableTransactionAction;
import java.util.Iterator;
import java.util.List;

/** {@link TableGateway} over the Azure SDK's synchronous clients. Thread-safe (the SDK clients are). */
final class SdkTableGateway implements TableGateway {
    private final TableServiceClient service;
    private final TableClient table;

    SdkTableGateway(TableServiceClient service, String tableName) {
        this.service = service;
        this.table = service.getTableClient(tableName);
    }

    @Override
    public TableEntity get(String partitionKey, String rowKey) {
        try {
            return table.getEntityWithResponse(partitionKey, rowKey, null, null, Context.NONE).getValue();
        } catch (TableServiceException e) {
            if (e.getResponse() != null && e.getResponse().getStatusCode() == 404) {
                return null;
            }
            throw e;
        }
    }

    @Override
    public void submit(List<TableTransactionAction> actions) {
        table.submitTransactionWithResponse(actions, null, Context.NONE);
    }

    @Override
    public void insert(TableEntity entity) {
        table.createEntityWithResponse(entity, null, Context.NONE);
    }

    @Override
    public QueryPage query(String filter, List<String> select, int top, String continuationToken) {
        ListEntitiesOptions options = new ListEntitiesOptions().setFilter(filter).setTop(top);
        if (select != null) {
            options.setSelect(select);
        }
        var pages = table.listEntities(options, null, Context.NONE);
        Iterator<PagedResponse<TableEntity>> it = continuationToken == null
                ? pages.iterableByPage().iterator() : pages.iterableByPage(continuationToken).iterator();
        if (!it.hasNext()) {
            return new QueryPage(List.of(), null);
        }
        PagedResponse<TableEntity> page = it.next();
        return new QueryPage(List.copyOf(page.getValue()), page.getContinuationToken());
    }

    @Override
    public String endpoint() {
        String e = service.getServiceEndpoint();
        int q = e == null ? -1 : e.indexOf('?');
        return q >= 0 ? e.substring(0, q) : e;
    }

    @Override
    public void createTableIfNotExists() {
        service.createTableIfNotExists(table.getTableName());
    }
}
