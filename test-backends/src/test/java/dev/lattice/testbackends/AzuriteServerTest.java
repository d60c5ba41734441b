package dev.lattice.testbackends;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Proves the shared Azurite answers real, signed Table and Blob requests, and that a private one stops by PID. */
@ExtendWith(AzuriteExtension.class)
class AzuriteServerTest {

    @Test
    void tableServiceCreatesAndListsATable(AzuriteServer azurite) throws Exception {
        String table = AzuriteServer.uniqueTableName("smoke");
        String date = Http.rfc1123Now();
        String resource = "/" + AzuriteServer.ACCOUNT_NAME + "/" + AzuriteServer.ACCOUNT_NAME + "/Tables";
        HttpResponse<String> created = Http.send(HttpRequest.newBuilder(URI.create(azurite.tableEndpoint() + "/Tables"))
                .header("x-ms-date", date).header("x-ms-version", "2019-02-02")
                .header("Accept", "application/json;odata=nometadata").header("Content-Type", "application/json")
                .header("DataServiceVersion", "3.0").header("Authorization", Http.sharedKeyLite(date + "\n" + resource))
                .POST(HttpRequest.BodyPublishers.ofString("{\"TableName\":\"" + table + "\"}")).build());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);

        String date2 = Http.rfc1123Now();
        HttpResponse<String> listed = Http.send(HttpRequest.newBuilder(URI.create(azurite.tableEndpoint() + "/Tables"))
                .header("x-ms-date", date2).header("x-ms-version", "2019-02-02")
                .header("Accept", "application/json;odata=nometadata").header("DataServiceVersion", "3.0")
                .header("Authorization", Http.sharedKeyLite(date2 + "\n" + resource)).GET().build());
        assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
        assertThat(listed.body()).contains(table);
        assertThat(listed.headers().firstValue("Server")).hasValueSatisfying(s -> assertThat(s).startsWith("Azurite-Table/3.37.0"));
    }

    @Test
    void blobServiceCreatesAContainer(AzuriteServer azurite) throws Exception {
        String container = AzuriteServer.uniqueContainerName("smoke");
        String date = Http.rfc1123Now();
        String headers = "x-ms-date:" + date + "\nx-ms-version:2019-02-02\n";
        String resource = "/" + AzuriteServer.ACCOUNT_NAME + "/" + AzuriteServer.ACCOUNT_NAME + "/" + container;
        // Shared Key (the Blob service does not take Shared Key Lite): verb, 11 empty standard headers,
        // canonical x-ms-* headers, then the resource with its query parameters.
        String stringToSign = "PUT" + "\n".repeat(12) + headers + resource + "\nrestype:container";
        HttpResponse<String> created = Http.send(HttpRequest.newBuilder(
                        URI.create(azurite.blobEndpoint() + "/" + container + "?restype=container"))
                .header("x-ms-date", date).header("x-ms-version", "2019-02-02")
                .header("Authorization", Http.sharedKey(stringToSign))
                .PUT(HttpRequest.BodyPublishers.noBody()).build());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        assertThat(created.headers().firstValue("Server")).hasValueSatisfying(s -> assertThat(s).startsWith("Azurite-Blob/3.37.0"));
    }

    @Test
    void connectionStringNamesTheDevAccountAndAllEndpoints(AzuriteServer azurite) {
        assertThat(azurite.connectionString())
                .contains("AccountName=devstoreaccount1;")
                .contains("AccountKey=" + AzuriteServer.ACCOUNT_KEY + ";")
                .contains("TableEndpoint=http://127.0.0.1:" + azurite.tablePort() + "/devstoreaccount1;")
                .contains("BlobEndpoint=http://127.0.0.1:" + azurite.blobPort() + "/devstoreaccount1;")
                .contains("QueueEndpoint=http://127.0.0.1:" + azurite.queuePort() + "/devstoreaccount1;");
        assertThat(azurite.tableEndpoint()).isEqualTo("http://127.0.0.1:" + azurite.tablePort() + "/devstoreaccount1");
    }

    @Test
    void sharedServerIsOnePerJvm(AzuriteServer azurite) {
        assertThat(AzuriteServer.shared()).isSameAs(azurite);
        assertThat(azurite.isAlive()).isTrue();
    }

    @Test
    void privateServerStopsExactlyItsPid() {
        AzuriteServer own = AzuriteServer.start();
        long pid = own.pid();
        int port = own.tablePort();
        assertThat(own.pid()).isNotEqualTo(AzuriteServer.shared().pid());
        assertThat(accepts(port)).isTrue();
        own.close();
        own.close();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        assertThat(accepts(port)).isFalse();
        assertThat(AzuriteServer.shared().isAlive()).isTrue();
    }

    @Test
    void uniqueNamesFollowTheServiceRules() {
        String table = AzuriteServer.uniqueTableName("my-test_Class!");
        assertThat(table).matches("[A-Za-z][A-Za-z0-9]{2,62}").startsWith("tmytestClass");
        assertThat(AzuriteServer.uniqueTableName("x")).isNotEqualTo(AzuriteServer.uniqueTableName("x"));
        String container = AzuriteServer.uniqueContainerName("My Container With A Very Long Name Indeed");
        assertThat(container).matches("[a-z0-9](-?[a-z0-9])+").hasSizeBetween(3, 63);
    }

    static boolean accepts(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
