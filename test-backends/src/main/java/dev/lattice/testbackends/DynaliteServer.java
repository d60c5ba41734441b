package dev.lattice.testbackends;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

/**
 * A real dynalite server (DynamoDB API emulator, npm {@code dynalite@4.0.0} pinned in
 * {@code test-backends/package-lock.json}) on 127.0.0.1, in memory, on a free port.
 *
 * <p>Started as {@code node -r <dir>/dynalite-guard.js parent-watch.js node_modules/dynalite/cli.js --host
 * 127.0.0.1 --port P --createTableMs 0 --deleteTableMs 0 --updateTableMs 0}; up once the port accepts connections.
 * Tests isolate themselves by table name ({@link #uniqueTableName(String)}). dynalite checks neither the signature
 * nor the credentials; use {@link #REGION}, {@link #ACCESS_KEY_ID} and {@link #SECRET_ACCESS_KEY}.
 *
 * <p>Aborted requests: dynalite 4.0.0 rethrows a request's {@code 'aborted'} error ({@code ECONNRESET}, raised when
 * the client closes its connection before the request body is complete, e.g. a client process killed with SIGKILL)
 * as an uncaught exception and exits. The real service drops such a request. {@code dynalite-guard.js} (next to
 * {@code parent-watch.js}, preloaded with {@code node -r}) drops exactly that error and prints a line starting
 * {@code lattice-guard:} once per drop ({@link #abortedRequestsDropped()} counts them); every other uncaught error
 * still ends the process (exit code 70).
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

    /** Start of the line the guard prints for each aborted request it dropped. */
    static final String DROP_LINE_PREFIX = "lattice-guard:";
    /** The guard script, in the {@code test-backends} folder. */
    static final String GUARD_SCRIPT = "dynalite-guard.js";

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
                NodeBackends.node(), "-r", dir.resolve(GUARD_SCRIPT).toString(),
                "parent-watch.js", "node_modules/dynalite/cli.js",
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
     * Counts the requests the guard dropped because their client closed the connection before sending all of them
     * (see the class comment), read from the server's output.
     *
     * @return drops since this server started; 0 once {@link #close()} has removed its output file
     * @throws UncheckedIOException if the output file exists but cannot be read
     */
    public long abortedRequestsDropped() {
        try {
            return Files.readString(process.log(), StandardCharsets.UTF_8).lines()
                    .filter(l -> l.startsWith(DROP_LINE_PREFIX)).count();
        } catch (NoSuchFileException closed) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read dynalite's output " + process.log(), e);
        }
    }

    /**
     * Returns the end of the server's output (at most the last 4,000 characters), for a failure message.
     *
     * @return the output, or a placeholder once {@link #close()} has removed its file
     */
    public String outputTail() {
        return NodeBackends.tail(process.log());
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
