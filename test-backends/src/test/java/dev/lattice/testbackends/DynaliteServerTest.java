package dev.lattice.testbackends;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Proves the shared dynalite answers real DynamoDB JSON requests, that a private one stops by PID, and that a request
 * its client aborts is dropped instead of ending the server.
 */
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

    @Test
    void aRequestItsClientAbortsIsDroppedAndTheServerKeepsAnswering() throws Exception {
        // a private server: without the guard this request ends the process, which must not hit the shared one
        DynaliteServer own = DynaliteServer.start();
        try {
            assertThat(own.abortedRequestsDropped()).isZero();
            // headers promise 1000 bytes of body; the client sends 6 and closes: the server sees 'aborted'
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), own.port())) {
                OutputStream out = socket.getOutputStream();
                out.write(("POST / HTTP/1.1\r\nHost: 127.0.0.1:" + own.port() + "\r\n"
                        + "X-Amz-Target: DynamoDB_20120810.ListTables\r\n"
                        + "Content-Type: application/x-amz-json-1.0\r\nContent-Length: 1000\r\n\r\n{\"Limi")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            // wait for the outcome (bounded; the wait's length is never asserted): a drop line, or the process gone
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (own.abortedRequestsDropped() == 0 && own.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(own.isAlive()).as("dynalite alive after the aborted request; its output:%n%s", own.outputTail())
                    .isTrue();
            assertThat(own.abortedRequestsDropped()).as("drops counted; output:%n%s", own.outputTail()).isEqualTo(1);
            HttpResponse<String> listed = call(own, "ListTables", "{}");
            assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
            assertThat(own.isAlive()).isTrue();
        } finally {
            own.close();
        }
    }
}
