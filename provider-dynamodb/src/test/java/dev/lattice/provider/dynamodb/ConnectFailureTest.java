package dev.lattice.provider.dynamodb;

import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.Providers;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.net.URI;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** An open against a server that is down says that it could not connect, to what, and how long it tried. */
class ConnectFailureTest {

    @Test
    void anOpenAgainstAServerThatIsDownSaysItCouldNotConnectToWhatAndHowLong() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        Throwable t = catchThrowable(() -> Providers.open(URI.create("dynamodb://lattice_down?region=us-east-1"
                + "&endpoint=http://127.0.0.1:" + closed + "&accessKeyId=a&connectTimeout=1s"),
                Map.of("secretAccessKey", "not-shown")).close());
        assertThat(t).isInstanceOf(ProviderUnavailableException.class);
        assertThat(t.getMessage())
                .contains("could not connect to DynamoDB at http://127.0.0.1:" + closed + " (table 'lattice_down')")
                .containsPattern("tried for \\d+ ms, connectTimeout 1000 ms, apiCallTimeout \\d+ ms\\)")
                .contains("Connection refused").doesNotContain("not-shown");
    }
}
