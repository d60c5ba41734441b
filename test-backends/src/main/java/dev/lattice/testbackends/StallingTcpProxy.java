package dev.lattice.testbackends;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback TCP endpoint for deadline tests: a server that accepts connections and then <em>stalls</em>, reading
 * what the client sends and answering nothing, like a hung backend or a dead link whose packets vanish. With a
 * target it is a transparent proxy to that target until {@link #stall(boolean)} turns stalling on; without one it
 * stalls from the start ({@link #silent()}).
 *
 * <p>Threads: one acceptor plus two pumps per proxied connection (one per stalled connection), all daemon threads
 * named {@code stalling-proxy-*}; {@link #close()} closes every socket and so ends them all.
 *
 * <p>Thread-safe.
 */
public final class StallingTcpProxy implements AutoCloseable {

    /** Prefix of the names of this class's threads. */
    public static final String THREAD_PREFIX = "stalling-proxy-";

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong accepted = new AtomicLong();
    private volatile boolean stalled;
    private volatile boolean closed;

    private StallingTcpProxy(InetSocketAddress target, boolean stalled) {
        this.target = target;
        this.stalled = stalled;
        try {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("binding a loopback port failed", e);
        }
        Thread t = new Thread(this::acceptLoop, THREAD_PREFIX + "accept-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    /**
     * A server that accepts connections and never answers.
     *
     * @return the started server, on a free port of 127.0.0.1
     * @throws UncheckedIOException if no port can be bound
     */
    public static StallingTcpProxy silent() {
        return new StallingTcpProxy(null, true);
    }

    /**
     * A proxy to {@code host:port} that forwards both ways until stalled.
     *
     * @param host the target host
     * @param port the target port
     * @return the started proxy, on a free port of 127.0.0.1
     * @throws UncheckedIOException if no port can be bound
     */
    public static StallingTcpProxy to(String host, int port) {
        return new StallingTcpProxy(new InetSocketAddress(host, port), false);
    }

    /** @return the port clients connect to (on 127.0.0.1) */
    public int port() {
        return server.getLocalPort();
    }

    /** @return connections accepted so far */
    public long accepted() {
        return accepted.get();
    }

    /**
     * Turns stalling on (bytes are read and held, nothing is forwarded nor answered, new connections stall too)
     * or off (forwarding resumes; bytes held meanwhile are forwarded).
     *
     * @param on whether to stall
     */
    public void stall(boolean on) {
        synchronized (this) {
            stalled = on;
            notifyAll();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            accepted.incrementAndGet();
            sockets.add(client);
            if (target == null) {
                pump(client, null, "sink");
                continue;
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(target, 5_000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            sockets.add(upstream);
            pump(client, upstream, "up");
            pump(upstream, client, "down");
        }
    }

    /** Copies {@code from} to {@code to} (or discards when {@code to} is null), holding bytes while stalled. */
    private void pump(Socket from, Socket to, String direction) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream()) {
                OutputStream out = to == null ? null : to.getOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitNotStalled();
                    if (out != null) {
                        out.write(buf, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException | InterruptedException e) {
                // a side closed: end this connection
            } finally {
                closeQuietly(from);
                if (to != null) {
                    closeQuietly(to);
                }
            }
        }, THREAD_PREFIX + direction + "-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    private void awaitNotStalled() throws InterruptedException {
        synchronized (this) {
            while ((stalled || target == null) && !closed) {
                wait(100);
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** Closes the listening socket and every connection; the threads end. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        sockets.forEach(StallingTcpProxy::closeQuietly);
        stall(false);
    }
}
