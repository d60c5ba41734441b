package dev.lattice.testbackends;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One emulator process on 127.0.0.1: started with its output in a log file, considered up once every one of its
 * ports accepts TCP connections, stopped by its own PID (never by name).
 *
 * <p>The process runs under {@code parent-watch.js}, so it also exits when the JVM that started it dies without
 * running shutdown hooks (its stdin pipe closes). A JVM shutdown hook stops it on a normal exit.
 *
 * <p>Thread-safe: {@link #close()} may be called from any thread, more than once.
 */
final class BackendProcess implements AutoCloseable {
    /** How long a server gets to accept connections, ms (Azurite took 2-2.6 s; the machine is shared). */
    static final long START_TIMEOUT_MS = 90_000;
    /** How long a stopped server gets to exit after SIGTERM before it is killed, ms. */
    static final long STOP_TIMEOUT_MS = 10_000;
    private static final int START_ATTEMPTS = 3;

    private final String name;
    private final List<String> command;
    private final List<Integer> ports;
    private final Process process;
    private final Path log;
    private final Thread shutdownHook;
    private volatile boolean closed;

    private BackendProcess(String name, List<String> command, List<Integer> ports, Process process, Path log) {
        this.name = name;
        this.command = command;
        this.ports = List.copyOf(ports);
        this.process = process;
        this.log = log;
        this.shutdownHook = new Thread(this::stopProcess, "stop-" + name + "-" + process.pid());
    }

    /**
     * Starts a server on fresh loopback ports and waits until all of them accept connections. A start that
     * fails because a port was taken in the meantime ({@code EADDRINUSE}) is retried on new ports, up to
     * {@value #START_ATTEMPTS} times.
     *
     * @param name short name for messages and the log file, e.g. {@code azurite}
     * @param portCount how many ports the server listens on
     * @param commandForPorts builds the command line from the chosen ports (index order)
     * @param workDir working directory of the process
     * @return the running server
     * @throws BackendStartException if the executable is missing, the process exits, or a port does not accept
     *     connections within {@value #START_TIMEOUT_MS} ms; the message names the command and its output
     */
    static BackendProcess start(String name, int portCount, Function<List<Integer>, List<String>> commandForPorts,
            Path workDir) {
        BackendStartException last = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
            List<Integer> ports = freePorts(portCount);
            List<String> command = commandForPorts.apply(ports);
            try {
                return startOnce(name, command, ports, workDir);
            } catch (PortTakenException e) {
                last = e.failure;
            }
        }
        throw last;
    }

    /**
     * Picks distinct free TCP ports on 127.0.0.1 (bound then released; a tiny race with other processes remains,
     * which {@link #start} absorbs by retrying).
     *
     * @param count how many ports, at least 1
     * @return {@code count} distinct port numbers
     */
    static List<Integer> freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            List<Integer> ports = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket();
                sockets.add(socket);
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                ports.add(socket.getLocalPort());
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port on 127.0.0.1", e);
        } finally {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // released anyway
                }
            }
        }
    }

    private static BackendProcess startOnce(String name, List<String> command, List<Integer> ports, Path workDir) {
        Path log;
        try {
            log = Files.createTempFile("lattice-" + name + "-", ".log");
        } catch (IOException e) {
            throw new BackendStartException("cannot create a log file for " + name + ": " + e, e);
        }
        Process process;
        try {
            // stdin stays a pipe on purpose: parent-watch.js exits when it closes (JVM death).
            process = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new BackendStartException("cannot start " + name + ": `" + String.join(" ", command) + "` in "
                    + workDir + " failed to launch (is Node 20+ on PATH? set -D" + NodeBackends.NODE_PROPERTY
                    + " otherwise): " + e, e);
        }
        BackendProcess backend = new BackendProcess(name, command, ports, process, log);
        Runtime.getRuntime().addShutdownHook(backend.shutdownHook);
        try {
            backend.awaitPorts();
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
        return backend;
    }

    private void awaitPorts() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
        int next = 0;
        while (next < ports.size()) {
            if (!process.isAlive()) {
                String output = NodeBackends.tail(log);
                BackendStartException failure = new BackendStartException(name + " exited with code "
                        + process.exitValue() + " before listening on 127.0.0.1:" + ports.get(next) + "; command: `"
                        + String.join(" ", command) + "`; output:\n" + output);
                if (output.contains("EADDRINUSE")) {
                    throw new PortTakenException(failure);
                }
                throw failure;
            }
            if (accepts(ports.get(next))) {
                next++;
                continue;
            }
            if (System.nanoTime() > deadline) {
                throw new BackendStartException(name + " (pid " + process.pid() + ") did not accept connections on"
                        + " 127.0.0.1:" + ports.get(next) + " within " + START_TIMEOUT_MS + " ms; command: `"
                        + String.join(" ", command) + "`; output:\n" + NodeBackends.tail(log));
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BackendStartException("interrupted while waiting for " + name, e);
            }
        }
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** @return the operating-system process id of the server */
    long pid() {
        return process.pid();
    }

    /** @return whether the server process is still running */
    boolean isAlive() {
        return process.isAlive();
    }

    /** @return the ports, in the order given to the command builder */
    List<Integer> ports() {
        return ports;
    }

    /** @return the file that receives the server's stdout and stderr */
    Path log() {
        return log;
    }

    /**
     * Stops the server: SIGTERM to its PID, then SIGKILL to the same PID after {@value #STOP_TIMEOUT_MS} ms.
     * Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook runs (or ran) anyway
        }
        stopProcess();
        try {
            Files.deleteIfExists(log);
        } catch (IOException ignored) {
            // a leftover temp file is harmless
        }
    }

    private void stopProcess() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(STOP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** A start failed because another process took one of the chosen ports first. */
    private static final class PortTakenException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient BackendStartException failure;

        PortTakenException(BackendStartException failure) {
            super(failure.getMessage(), null, false, false);
            this.failure = failure;
        }
    }
}
