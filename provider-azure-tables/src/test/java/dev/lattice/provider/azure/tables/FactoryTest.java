package dev.lattice.provider.azure.tables;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import com.azure.data.tables.sas.TableAccountSasPermission;
import com.azure.data.tables.sas.TableAccountSasResourceType;
import com.azure.data.tables.sas.TableAccountSasService;
import com.azure.data.tables.sas.TableAccountSasSignatureValues;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testbackends.AzuriteExtension;
import dev.lattice.testbackends.AzuriteServer;
import java.net.URI;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Discovery by URI scheme, URI forms, options, credentials, and secrets kept out of messages. */
@ExtendWith(AzuriteExtension.class)
class FactoryTest {
    private static final LogId LOG = new LogId("factory", 0);
    private final List<String> tables = new ArrayList<>();
    private final AzureTablesProviderFactory factory = new AzureTablesProviderFactory();

    @AfterEach
    void dropTables() {
        tables.forEach(AzuriteTables::drop);
    }

    private String table() {
        String t = AzuriteServer.uniqueTableName("factory");
        tables.add(t);
        return t;
    }

    private static void roundTrip(WalStorageProvider p) {
        try (p) {
            Fence f = p.claim(LOG);
            EncodedBatch b = batch(3, 0, 3, 50);
            p.append(LOG, f, b);
            assertSameEntries(readAll(p, LOG), entriesOf(b));
            assertThat(p.describe().name()).isEqualTo("azure-tables");
        }
    }

    @Test
    void serviceLoaderFindsTheSchemeAndOpensWithAConnectionString() {
        assertThat(Providers.schemes()).contains("azure-tables");
        assertThat(Providers.factory("azure-tables")).isInstanceOf(AzureTablesProviderFactory.class);
        String t = table();
        roundTrip(Providers.open(URI.create("azure-tables:" + t),
                Map.of("connectionString", AzuriteServer.shared().connectionString())));
        roundTrip(Providers.open(URI.create("azure-tables:" + table() + "?runChunksInFlight=1"),
                Map.of("connectionString", AzuriteServer.shared().connectionString())));
    }

    @Test
    void endpointAndSharedKey() {
        String t = table();
        roundTrip(factory.open(URI.create("azure-tables://ignored.example/" + t), Map.of(
                "endpoint", AzuriteServer.shared().tableEndpoint(),
                "accountName", AzuriteServer.ACCOUNT_NAME, "accountKey", AzuriteServer.ACCOUNT_KEY,
                "attemptTimeout", "5s", "maxRetries", "2")));
    }

    @Test
    void endpointAndSasToken() {
        String t = table();
        TableServiceClient keyed = new TableServiceClientBuilder()
                .connectionString(AzuriteServer.shared().connectionString()).buildClient();
        String sas = keyed.generateAccountSas(new TableAccountSasSignatureValues(OffsetDateTime.now().plusHours(1),
                TableAccountSasPermission.parse("rwdlacu"), TableAccountSasService.parse("t"),
                TableAccountSasResourceType.parse("sco")));
        roundTrip(factory.open(URI.create("azure-tables:///" + t), Map.of(
                "endpoint", AzuriteServer.shared().tableEndpoint(), "sasToken", "?" + sas)));
    }

    @Test
    void hostFormNamesTheHttpsEndpointAndTheTable() {
        // No server listens on this port: the provider fails to create the table, as a transient failure.
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables://127.0.0.1:1/devstoreaccount1/logs"),
                Map.of("accountName", "a", "accountKey", AzuriteServer.ACCOUNT_KEY, "attemptTimeout", "2s",
                        "maxRetries", "0"))).isInstanceOf(ProviderUnavailableException.class)
                .hasMessageContaining("creating table 'logs'");
    }

    @Test
    void anOpenAgainstAServerThatIsDownSaysItCouldNotConnectToWhatAndHowLong() throws Exception {
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:logs"), Map.of("connectionString",
                "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + AzuriteServer.ACCOUNT_KEY
                        + ";TableEndpoint=http://127.0.0.1:" + closed + "/devstoreaccount1",
                "attemptTimeout", "2s", "maxRetries", "0")))
                .isInstanceOf(ProviderUnavailableException.class)
                .hasMessageContaining("could not connect to Azure Table Storage at http://127.0.0.1:" + closed
                        + "/devstoreaccount1 (creating table 'logs') (tried for ")
                .hasMessageNotContaining("outcome unknown").hasMessageNotContaining(AzuriteServer.ACCOUNT_KEY);
    }

    @Test
    void badOptionsAreRefusedWithClearMessages() {
        String cs = AzuriteServer.shared().connectionString();
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:t1?tabel=x"), Map.of("connectionString", cs)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tabel")
                .hasMessageContaining("known options");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:ab"), Map.of("connectionString", cs)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("3 to 63");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:tables"), Map.of("connectionString", cs)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:one"), Map.of("connectionString", cs,
                "table", "two"))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'one'");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:///"), Map.of("connectionString", cs)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no table");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:tbl"), Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exactly one credential");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:tbl"), Map.of("connectionString", cs,
                "sasToken", "sv=1"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exactly one credential");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:tbl"), Map.of("sasToken", "sv=1")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no endpoint");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:tbl"), Map.of("credential", "default",
                "endpoint", "https://acct.table.core.windows.net")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("azure-identity");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:tbl"), Map.of("connectionString", cs,
                "maxRetries", "99"))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxRetries");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:tbl"), Map.of("connectionString", cs,
                "runChunksInFlight", "0"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("runChunksInFlight").hasMessageContaining("1..64");
        assertThatThrownBy(() -> factory.open(URI.create("azure-tables:tbl"), Map.of("connectionString", cs,
                "runChunksInFlight", "65"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("runChunksInFlight");
        assertThatThrownBy(() -> factory.open(URI.create("chronicle:tbl"), Map.of("connectionString", cs)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scheme");
    }

    @Test
    void secretsStayOutOfMessages() {
        String secret = "S3cr3tK3yThatMustNotLeak==";
        Map<String, String> options = new HashMap<>();
        options.put("connectionString", "AccountName=x;AccountKey=" + secret + ";garbage");
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() ->
                factory.open(URI.create("azure-tables:tbl"), options));
        assertThat(t).isInstanceOf(IllegalArgumentException.class);
        for (Throwable c = t; c != null; c = c.getCause()) {
            assertThat(String.valueOf(c.getMessage())).doesNotContain(secret);
        }
        Throwable u = org.assertj.core.api.Assertions.catchThrowable(() -> factory.open(
                URI.create("azure-tables:tbl?bogus=1"), Map.of("accountKey", secret)));
        assertThat(u).isInstanceOf(IllegalArgumentException.class);
        assertThat(u.getMessage()).doesNotContain(secret);
    }
}
