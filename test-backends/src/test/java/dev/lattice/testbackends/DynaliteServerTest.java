package dev.lattice.testbackends;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Proves the shared dynalite answers real DynamoDB JSON requests, and that a private one stops by PID. */
@ExtendWith(DynaliteExtension.class)
class DynaliteServerTest {

    private static HttpResponse<String> call(DynaliteServer dynalite, String target, String body) throws Exception {
        return Http.send(HttpRequest.newBuilder(dynalite.endpoint())
                .header("X-Amz-Target", "DynamoDB_20120810." + target)
                .header("Content-Type", "application/x-amz-json-1.0")
                .header("X-Amz-Date", "20260101T000000Z")
                .header("Authorization", "AWS4-HMAC-SHA256 Credential=" + DynaliteServer.ACCESS_KEY_ID
                        + "/20260101/" + DynaliteServer.REGION + "/dynamodb/aws4_request, SignedHeaders=host,"
                        + " Signature=00")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    @Test
    void createsAndListsATable(DynaliteServer dynalite) throws Exception {
        String table = DynaliteServer.uniqueTableName("smoke");
        HttpResponse<String> created = call(dynalite, "CreateTable", "{\"TableName\":\"" + table + "\","
                + "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
                + "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
                + "\"BillingMode\":\"PAY_PER_REQUEST\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(200);

        HttpResponse<String> put = call(dynalite, "PutItem", "{\"TableName\":\"" + table + "\","
                + "\"Item\":{\"pk\":{\"S\":\"a\"}},\"ConditionExpression\":\"attribute_not_exists(pk)\"}");
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        HttpResponse<String> again = call(dynalite, "PutItem", "{\"TableName\":\"" + table + "\","
                + "\"Item\":{\"pk\":{\"S\":\"a\"}},\"ConditionExpression\":\"attribute_not_exists(pk)\"}");
        assertThat(again.statusCode()).isEqualTo(400);
        assertThat(again.body()).contains("ConditionalCheckFailedException");

        HttpResponse<String> listed = call(dynalite, "ListTables", "{}");
        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(listed.body()).contains(table);
    }

    @Test
    void sharedServerIsOnePerJvm(DynaliteServer dynalite) {
        assertThat(DynaliteServer.shared()).isSameAs(dynalite);
        assertThat(dynalite.endpoint().toString()).isEqualTo("http://127.0.0.1:" + dynalite.port());
    }

    @Test
    void privateServerStopsExactlyItsPid() {
        DynaliteServer own = DynaliteServer.start();
        long pid = own.pid();
        assertThat(AzuriteServerTest.accepts(own.port())).isTrue();
        own.close();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        assertThat(AzuriteServerTest.accepts(own.port())).isFalse();
        assertThat(DynaliteServer.shared().isAlive()).isTrue();
    }
}
