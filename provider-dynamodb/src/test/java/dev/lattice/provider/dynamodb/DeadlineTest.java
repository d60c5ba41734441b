package dev.lattice.provider.dynamodb;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.testbackends.DynaliteServer;
import dev.lattice.testbackends.StallingTcpProxy;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Every SDK call has a deadline: against a server that accepts connections and never answers, and against dynalite
 * behind a proxy that stops forwarding, a call fails with {@link ProviderUnavailableException} within
 * {@code apiCallTimeout} plus slack, leaves no thread behind once the provider is closed, and the provider works
 * again when the server answers again.
 */
class DeadlineTest {

    private static final LogId LOG = new LogId("deadline", 1);
    private static final long SLACK_FACTOR = 5;

    private static long millisOf(Runnable r, Throwable[] failure) {
        long t0 = System.nanoTime();
        failure[0] = catchThrowable(r::run);
        return (System.nanoTime() - t0) / 1_000_000;
    }

    private static DynamoDbSettings.Builder shortDeadlines(URI endpoint, String table) {
        return DynamoDbSettings.builder().table(table).endpoint(endpoint).region(DynaliteServer.REGION)
                .staticCredentials(DynaliteServer.ACCESS_KEY_ID, DynaliteServer.SECRET_ACCESS_KEY, null)
                .createTable(true).apiCallTimeout(Duration.ofMillis(1_000))
                .apiCallAttemptTimeout(Duration.ofMillis(400)).socketTimeout(Duration.ofMillis(400))
                .connectTimeout(Duration.ofMillis(400)).maxAttempts(3);
    }

    @Test
    void aSilentServerFailsOpenWithinTheApiCallTimeoutAndLeavesNoThread() throws Exception {
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        try (StallingTcpProxy silent = StallingTcpProxy.silent()) {
            Throwable[] f = new Throwable[1];
            long ms = millisOf(() -> DynamoDbWalStorageProvider.open(
                    shortDeadlines(URI.create("http://127.0.0.1:" + silent.port()), "deadline-silent").build()), f);
            System.out.printf("apiCallTimeout=1s (attempt 400ms), silent server: open failed after %d ms%n", ms);
            assertThat(f[0]).isInstanceOf(ProviderUnavailableException.class);
            assertThat(silent.accepted()).isPositive();
            assertThat(ms).isLessThan(1_000 * SLACK_FACTOR);
        }
        assertNoNewThreads(before);
    }

    @Test
    void aServerThatStopsAnsweringFailsCallsWithinTheApiCallTimeoutAndTheLogWorksAfterwards() throws Exception {
        URI dynalite = DynamoTestBackend.endpoint();
        DynamoTestBackend.rawClient().listTables(); // the shared test client's threads (it drops the table): not ours
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        try (StallingTcpProxy proxy = StallingTcpProxy.to(dynalite.getHost(), dynalite.getPort())) {
            DynamoTestBackend.Storage storage = DynamoTestBackend.newStorage("deadline");
            try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(shortDeadlines(
                    URI.create("http://127.0.0.1:" + proxy.port()), storage.table).keyPrefix(storage.keyPrefix)
                    .apiCallTimeout(Duration.ofSeconds(2)).build())) {
                Fence fence = p.claim(LOG);
                p.reconcile(LOG, fence);
                EncodedBatch b0 = batch(3, 0, 2, 20);
                p.append(LOG, fence, b0);
                proxy.stall(true);
                Throwable[] f = new Throwable[1];
                long append = millisOf(() -> p.append(LOG, fence, batch(3, 2, 2, 20)), f);
                assertThat(f[0]).isInstanceOf(ProviderUnavailableException.class);
                long state = millisOf(() -> p.state(LOG), f);
                assertThat(f[0]).isInstanceOf(ProviderUnavailableException.class);
                System.out.printf("apiCallTimeout=2s (attempt 400ms), stalled server: append failed after %d ms,"
                        + " state after %d ms%n", append, state);
                assertThat(append).isLessThan(2_000 * SLACK_FACTOR);
                assertThat(state).isLessThan(2_000 * SLACK_FACTOR);
                proxy.stall(false);
                EncodedBatch b1 = batch(3, 2, 2, 20);
                long t0 = System.nanoTime();
                p.append(LOG, fence, b1); // retry with the same batch: outcome settled, stored once
                System.out.printf("retry after unstall took %d ms%n", (System.nanoTime() - t0) / 1_000_000);
                assertSameEntries(readAll(p, LOG), entriesOf(List.of(b0, b1)));
            }
            try {
                assertNoNewThreads(before);
            } finally {
                storage.drop();
            }
        }
    }

    /** Threads started during the test (SDK timers, HTTP) have all ended within 5 s of the provider's close. */
    private static void assertNoNewThreads(Set<Thread> before) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        List<String> alive = List.of();
        while (System.nanoTime() < deadline) {
            // Keep-Alive-Timer is the JDK's HttpURLConnection cache cleaner (one per JVM, ends by itself when idle)
            alive = Thread.getAllStackTraces().keySet().stream().filter(t -> !before.contains(t) && t.isAlive()
                            && !t.getName().equals("Keep-Alive-Timer") && !t.getName().startsWith(StallingTcpProxy.THREAD_PREFIX))
                    .map(Thread::getName).toList();
            if (alive.isEmpty()) {
                return;
            }
            Thread.sleep(50);
        }
        assertThat(alive).as("threads left running").isEmpty();
    }

    @Test
    void attemptAndSocketTimeoutsAreOptions() {
        DynamoDbSettings s = DynamoDbSettings.fromUri(URI.create("dynamodb://tbl?apiCallAttemptTimeout=2s"
                + "&socketTimeout=1500ms&apiCallTimeout=20s"), Map.of());
        assertThat(s.apiCallAttemptTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.socketTimeout()).isEqualTo(Duration.ofMillis(1_500));
        DynamoDbSettings d = DynamoDbSettings.fromUri(URI.create("dynamodb://tbl"), Map.of());
        assertThat(d.apiCallTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.apiCallAttemptTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(d.socketTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(DynamoDbSettings.fromUri(URI.create("dynamodb://tbl?apiCallTimeout=3s"), Map.of())
                .apiCallAttemptTimeout()).isEqualTo(Duration.ofSeconds(3));
    }
}
