package dev.lattice.cli;

import dev.lattice.engine.AtomicKillHarness;
import dev.lattice.testbackends.AzuriteServer;
import dev.lattice.testbackends.DynaliteServer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The process-kill crash test of atomic writes on every remote provider: PostgreSQL (embedded, {@code fsync=on},
 * {@code synchronous_commit=on}), Azure Table Storage and Azure Blob Storage (Azurite), DynamoDB (dynalite; its
 * {@link DynaliteServer} drops requests a killed client aborted instead of crashing), each server started by this JVM
 * on 127.0.0.1. The rounds and checks are the engine's {@link AtomicKillHarness} (from the engine's test-jar): a
 * child JVM ({@code AtomicKillTestWriter}) streams single-log, multi-log and cross-tree atomic writes from several
 * threads and prints the id of every acknowledged write; the test kills it with SIGKILL at a random moment (the server keeps
 * running, so requests the child sent just before dying may still land), reopens, and checks:
 * <ul>
 *   <li>replay never fails (the test's open and the next child's open);</li>
 *   <li>every write whose own keys ({@code w<i>-k<j>-..}) are present has all of them, with its values and one
 *       version; every acknowledged write is present, with the version its {@code commit()} returned;</li>
 *   <li>each group of 16 shared keys holds exactly one write's keys (its puts present, its deletes absent, one
 *       version), and that version is at least the highest acknowledged version of a write to the group;</li>
 *   <li>an atomic write over all three trees works after the reopen.</li>
 * </ul>
 * Every third round skips the check after the kill and kills the next child shortly after its open, so the child's
 * own open resolves what the previous kill left prepared and can itself be killed while resolving. The Chronicle
 * (embedded default) run of the same check is the engine module's {@code AtomicProcessKillTest}.
 *
 * <p>Properties: {@code -Dlattice.atomiccrash.rounds=N} rounds per provider (default 3 to keep the build short; a
 * soak is 30+); {@code -Dlattice.atomiccrash.providers=postgres,dynamodb} runs only those;
 * {@code -Dlattice.atomiccrash.seed=S} repeats the kill delays; {@code -Dlattice.atomiccrash.maxDelayMs} (default
 * 4000) bounds the random delay between the child's first acknowledgement and the kill;
 * {@code -Dlattice.atomiccrash.dump=true} writes the WAL as the kill left it (every log's entries and checkpoint) to a
 * file before each check. A failure always writes the WAL after the failed check and copies the child logs and dumps
 * to {@code target/atomic-kill-failures/} (the servers' data is gone when the test ends).
 */
class AtomicCrashTest {

    /** Every remote provider module the CLI ships. */
    static final List<String> PROVIDERS = List.of("postgres", "azure-tables", "azure-blob", "dynamodb");

    @TempDir
    Path dir;

    /** @return the providers to run: all, or those {@code -Dlattice.atomiccrash.providers} names */
    static List<String> providers() {
        String only = System.getProperty("lattice.atomiccrash.providers", "");
        if (only.isBlank()) {
            return PROVIDERS;
        }
        List<String> chosen = Arrays.stream(only.split(",")).map(String::trim).toList();
        assertThat(PROVIDERS).as("-Dlattice.atomiccrash.providers").containsAll(chosen);
        return chosen;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    @Timeout(value = 60, unit = TimeUnit.MINUTES) // a backstop against a hang; every wait inside is bounded
    void acknowledgedAtomicWritesAreWholeAndUnacknowledgedOnesAllOrNothingAfterSigkill(String provider)
            throws Exception {
        int rounds = Integer.getInteger("lattice.atomiccrash.rounds", 3);
        long seed = Long.getLong("lattice.atomiccrash.seed", new Random().nextLong());
        long maxDelayMs = Long.getLong("lattice.atomiccrash.maxDelayMs", 4000);
        String name = "atomiccrash" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        EmbeddedPostgres pg = null;
        DynaliteServer dynalite = null;
        try {
            String uri;
            Map<String, String> options = new LinkedHashMap<>();
            switch (provider) {
                case "postgres" -> {
                    pg = EmbeddedPostgres.builder().setServerConfig("fsync", "on")
                            .setServerConfig("synchronous_commit", "on").start();
                    uri = "postgres://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres&schema=" + name;
                }
                case "azure-tables" -> {
                    uri = "azure-tables:" + AzuriteServer.uniqueTableName("atomiccrash");
                    options.put("connectionString", AzuriteServer.shared().connectionString());
                }
                case "azure-blob" -> {
                    uri = "azure-blob:" + AzuriteServer.uniqueContainerName("atomiccrash");
                    options.put("connectionString", AzuriteServer.shared().connectionString());
                }
                case "dynamodb" -> {
                    dynalite = DynaliteServer.start(); // private: its drop count and liveness are this test's
                    uri = "dynamodb:" + DynaliteServer.uniqueTableName("atomiccrash");
                    options.put("endpoint", dynalite.endpoint().toString());
                    options.put("region", DynaliteServer.REGION);
                    options.put("accessKeyId", DynaliteServer.ACCESS_KEY_ID);
                    options.put("secretAccessKey", DynaliteServer.SECRET_ACCESS_KEY);
                    options.put("createTable", "true");
                }
                default -> throw new IllegalArgumentException("unknown provider " + provider);
            }
            AtomicKillHarness h = new AtomicKillHarness(uri, options, dir, seed, maxDelayMs,
                    Boolean.getBoolean("lattice.atomiccrash.dump"));
            h.run(rounds);
            assertThat(h.totalAcks()).as("%s: acknowledged writes over %d rounds", provider, rounds).isPositive();
        } finally {
            if (pg != null) {
                pg.close();
            }
            if (dynalite != null) {
                try {
                    assertThat(dynalite.isAlive()).as("dynalite exited during the test; its output:%n%s",
                            dynalite.outputTail()).isTrue();
                    System.out.println("dynalite: " + dynalite.abortedRequestsDropped()
                            + " requests aborted by a killed child were dropped instead of crashing the server");
                } finally {
                    dynalite.close();
                }
            }
        }
    }
}
