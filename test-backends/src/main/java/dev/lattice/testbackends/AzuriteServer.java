package dev.lattice.testbackends;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * A real Azurite server (Azure Blob, Queue and Table emulator, npm {@code azurite@3.37.0} pinned in
 * {@code test-backends/package-lock.json}) on 127.0.0.1, in memory, on free ports.
 *
 * <p>Started as {@code node parent-watch.js node_modules/azurite/dist/src/azurite.js --silent --inMemoryPersistence
 * --disableTelemetry --skipApiVersionCheck --blobHost 127.0.0.1 --blobPort P1 --tableHost 127.0.0.1 --tablePort P2
 * --queueHost 127.0.0.1 --queuePort P3}; up once all three ports accept connections. Tests use the well-known
 * development account {@value #ACCOUNT_NAME} and isolate themselves by table or container name
 * ({@link #uniqueTableName(String)}, {@link #uniqueContainerName(String)}).
 *
 * <p>Azurite is lenient where the cloud is strict (it does not enforce the 1 MiB entity limit nor one partition
 * key per transaction): providers must enforce the real limits themselves.
 *
 * <p>Thread-safe; immutable apart from {@link #close()}.
 */
public final class AzuriteServer implements AutoCloseable {
    /** The emulator's well-known account name. */
    public static final String ACCOUNT_NAME = "devstoreaccount1";
    /** The emulator's well-known account key (public, documented by Microsoft; not a secret). */
    public static final String ACCOUNT_KEY =
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    private static AzuriteServer shared;

    private final BackendProcess process;

    private AzuriteServer(BackendProcess process) {
        this.process = process;
    }

    /**
     * Returns the one server of this JVM, starting it (and installing the npm packages) on first use. It is
     * stopped by a JVM shutdown hook; do not {@link #close()} it.
     *
     * @return the shared running server
     * @throws BackendStartException if Node/npm is missing or the server does not come up
     */
    public static synchronized AzuriteServer shared() {
        if (shared == null || !shared.isAlive()) {
            shared = start();
        }
        return shared;
    }

    /**
     * Starts a new private server; the caller must {@link #close()} it (a shutdown hook stops it otherwise).
     *
     * @return the running server
     * @throws BackendStartException if Node/npm is missing or the server does not come up
     */
    public static AzuriteServer start() {
        Path dir = NodeBackends.ensureInstalled();
        return new AzuriteServer(BackendProcess.start("azurite", 3, ports -> List.of(
                NodeBackends.node(), "parent-watch.js", "node_modules/azurite/dist/src/azurite.js",
                "--silent", "--inMemoryPersistence", "--disableTelemetry", "--skipApiVersionCheck",
                "--blobHost", "127.0.0.1", "--blobPort", String.valueOf(ports.get(0)),
                "--tableHost", "127.0.0.1", "--tablePort", String.valueOf(ports.get(1)),
                "--queueHost", "127.0.0.1", "--queuePort", String.valueOf(ports.get(2))), dir));
    }

    /** @return the Table service endpoint, e.g. {@code http://127.0.0.1:41234/devstoreaccount1} (no trailing slash) */
    public String tableEndpoint() {
        return endpoint(tablePort());
    }

    /** @return the Blob service endpoint, e.g. {@code http://127.0.0.1:41233/devstoreaccount1} (no trailing slash) */
    public String blobEndpoint() {
        return endpoint(blobPort());
    }

    /** @return the Queue service endpoint (no trailing slash) */
    public String queueEndpoint() {
        return endpoint(queuePort());
    }

    /**
     * Returns a storage connection string for the development account with explicit endpoints, accepted by the
     * Azure SDK clients ({@code TableServiceClientBuilder.connectionString}, {@code BlobServiceClientBuilder}).
     *
     * @return {@code DefaultEndpointsProtocol=http;AccountName=...;AccountKey=...;BlobEndpoint=...;QueueEndpoint=...;TableEndpoint=...;}
     */
    public String connectionString() {
        return "DefaultEndpointsProtocol=http;AccountName=" + ACCOUNT_NAME + ";AccountKey=" + ACCOUNT_KEY
                + ";BlobEndpoint=" + blobEndpoint() + ";QueueEndpoint=" + queueEndpoint()
                + ";TableEndpoint=" + tableEndpoint() + ";";
    }

    /** @return the Blob service's TCP port on 127.0.0.1 */
    public int blobPort() {
        return process.ports().get(0);
    }

    /** @return the Table service's TCP port on 127.0.0.1 */
    public int tablePort() {
        return process.ports().get(1);
    }

    /** @return the Queue service's TCP port on 127.0.0.1 */
    public int queuePort() {
        return process.ports().get(2);
    }

    /** @return the operating-system process id of the server */
    public long pid() {
        return process.pid();
    }

    /** @return whether the server process is still running */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Returns a table name no other caller gets: ASCII letters and digits, starting with a letter, at most 63
     * characters (the Table service's naming rule).
     *
     * @param prefix a readable hint; characters other than ASCII letters and digits are dropped, cut to 30
     * @return a fresh table name
     */
    public static String uniqueTableName(String prefix) {
        String clean = prefix.replaceAll("[^A-Za-z0-9]", "");
        clean = clean.length() > 30 ? clean.substring(0, 30) : clean;
        return "t" + clean + UUID.randomUUID().toString().replace("-", "");
    }

    /**
     * Returns a blob container name no other caller gets: lower-case letters, digits and single dashes, 3 to 63
     * characters (the Blob service's naming rule).
     *
     * @param prefix a readable hint; characters other than ASCII letters and digits are dropped, cut to 24
     * @return a fresh container name
     */
    public static String uniqueContainerName(String prefix) {
        String clean = prefix.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
        clean = clean.length() > 24 ? clean.substring(0, 24) : clean;
        return "c" + clean + "-" + UUID.randomUUID().toString().replace("-", "");
    }

    /** Stops this server (SIGTERM, then SIGKILL, to its PID only). Idempotent. */
    @Override
    public void close() {
        process.close();
    }

    private static String endpoint(int port) {
        return "http://127.0.0.1:" + port + "/" + ACCOUNT_NAME;
    }

    @Override
    public String toString() {
        return "Azurite[pid=" + pid() + ", table=" + tableEndpoint() + ", blob=" + blobEndpoint() + "]";
    }
}
