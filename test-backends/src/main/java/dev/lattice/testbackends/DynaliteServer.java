package dev.lattice.testbackends;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

/**
 * A real dynalite server (DynamoDB API emulator, npm {@code dynalite@4.0.0} pinned in
 * {@code test-backends/package-lock.json}) on 127.0.0.1, in memory, on a free port.
 *
 * <p>Started as {@code node parent-watch.js node_modules/dynalite/cli.js --host 127.0.0.1 --port P --createTableMs 0
 * --deleteTableMs 0 --updateTableMs 0}; up once the port accepts connections. Tests isolate themselves by table
 * name ({@link #uniqueTableName(String)}). dynalite checks neither the signature nor the credentials; use
 * {@link #REGION}, {@link #ACCESS_KEY_ID} and {@link #SECRET_ACCESS_KEY}.
 *
 * <p>Known gap: dynalite has no {@code TransactWriteItems}/{@code TransactGetItems}; it is faithful for conditional
 * Put/Update, Query paging, 25-item BatchWrite and the 400 KB item limit.
 *
 * <p>Thread-safe; immutable apart from {@link #close()}.
 */
public final class DynaliteServer implements AutoCloseable {
    /** Region to configure clients with (dynalite ignores it). */
    public static final String REGION = "us-east-1";
    /** Dummy access key id (dynalite ignores credentials). */
    public static final String ACCESS_KEY_ID = "lattice-test";
    /** Dummy secret access key (dynalite ignores credentials; not a secret). */
    public static final String SECRET_ACCESS_KEY = "lattice-test-secret";

    private static DynaliteServer shared;

    private final BackendProcess process;

    private DynaliteServer(BackendProcess process) {
        this.process = process;
    }

    /**
     * Returns the one server of this JVM, starting it (and installing the npm packages) on first use. It is
     * stopped by a JVM shutdown hook; do not {@link #close()} it.
     *
     * @return the shared running server
     * @throws BackendStartException if Node/npm is missing or the server does not come up
     */
    public static synchronized DynaliteServer shared() {
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
    public static DynaliteServer start() {
        Path dir = NodeBackends.ensureInstalled();
        return new DynaliteServer(BackendProcess.start("dynalite", 1, ports -> List.of(
                NodeBackends.node(), "parent-watch.js", "node_modules/dynalite/cli.js",
                "--host", "127.0.0.1", "--port", String.valueOf(ports.get(0)),
                "--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"), dir));
    }

    /** @return the endpoint to give the DynamoDB client, e.g. {@code http://127.0.0.1:41235} */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port());
    }

    /** @return the TCP port on 127.0.0.1 */
    public int port() {
        return process.ports().get(0);
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
     * Returns a table name no other caller gets: letters, digits, {@code _ - .}, 3 to 255 characters (DynamoDB's
     * naming rule).
     *
     * @param prefix a readable hint; characters outside {@code [A-Za-z0-9_.-]} are dropped, cut to 60
     * @return a fresh table name
     */
    public static String uniqueTableName(String prefix) {
        String clean = prefix.replaceAll("[^A-Za-z0-9_.-]", "");
        clean = clean.length() > 60 ? clean.substring(0, 60) : clean;
        return "t-" + clean + "-" + UUID.randomUUID();
    }

    /** Stops this server (SIGTERM, then SIGKILL, to its PID only). Idempotent. */
    @Override
    public void close() {
        process.close();
    }

    @Override
    public String toString() {
        return "Dynalite[pid=" + pid() + ", endpoint=" + endpoint() + "]";
    }
}
