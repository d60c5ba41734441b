package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.DynamoDbMetrics.Operation;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunStore;
import dev.lattice.testbackends.DynaliteServer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import static dev.lattice.conformance.WalTestSupport.randomBytes;

/**
 * Run-read cost harness (not a test): writes one run of random bytes through {@code dynamodb://} with the given
 * options, then, each with a fresh provider instance, reads it back sequentially in blocks and with random small
 * reads, and prints per phase the bytes the client received and sent over its sockets (counted by a TCP proxy
 * between the provider and dynalite), requests by type, chunk items returned, and wall time, as Markdown rows.
 *
 * <p>Uses only {@link DynamoDbSettings#fromUri} and the SPI, so it also compiles against code older than the run
 * cache (pass no options that code does not know). Against a private dynalite. Usage: {@code java -cp ...
 * dev.lattice.provider.dynamodb.DynamoRunReadHarness [runBytes=8388608] [blockBytes=65536]
 * [random=1000x4096,300x65536] [options=name=value,...]}: {@code random} lists phases of {@code count x bytes}
 * reads at random positions (seeded), each with a fresh instance. Byte counts do not depend on the machine's load;
 * times do.
 */
public final class DynamoRunReadHarness {

    private static final LogId LOG = new LogId("runread", 0);

    private DynamoRunReadHarness() {
    }

    /**
     * Runs the harness.
     *
     * @param args optional: run bytes, sequential block bytes, random phases, options
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        int runBytes = args.length > 0 ? Integer.parseInt(args[0]) : 8 << 20;
        int blockBytes = args.length > 1 ? Integer.parseInt(args[1]) : 64 << 10;
        String[] random = (args.length > 2 ? args[2] : "1000x4096,300x65536").split(",");
        Map<String, String> options = new HashMap<>();
        if (args.length > 3 && !args[3].isBlank()) {
            for (String kv : args[3].split(",")) {
                int eq = kv.indexOf('=');
                options.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        DynaliteServer dynalite = DynaliteServer.shared();
        String table = DynaliteServer.uniqueTableName("runread");
        try (CountingProxy proxy = new CountingProxy(new InetSocketAddress("127.0.0.1", dynalite.port()))) {
            Map<String, String> o = new HashMap<>(options);
            o.put("endpoint", "http://127.0.0.1:" + proxy.port());
            o.put("region", DynaliteServer.REGION);
            o.put("accessKeyId", DynaliteServer.ACCESS_KEY_ID);
            o.put("secretAccessKey", DynaliteServer.SECRET_ACCESS_KEY);
            o.put("createTable", "true");
            o.put("apiCallTimeout", "120s");
            o.put("apiCallAttemptTimeout", "60s");
            DynamoDbSettings settings = DynamoDbSettings.fromUri(URI.create("dynamodb://" + table), o);
            byte[] data = randomBytes(20261203L, runBytes);
            RunId id = new RunId("harness-run");
            System.out.println("dynalite " + dynalite.endpoint() + " via counting proxy; run " + runBytes
                    + " bytes; options " + options + "; java " + System.getProperty("java.version"));
            System.out.println();
            System.out.println("| phase | calls | bytes used | bytes received | received / used | bytes sent | requests "
                    + "| GetItem | Query | items read | ms |");
            System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(settings)) {
                Fence f = p.claim(LOG);
                Phase w = Phase.start(p, proxy);
                p.runs().write(LOG, f, id, new ByteArrayInputStream(data), data.length);
                w.print("write", 1, runBytes);
            }
            try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(settings)) {
                RunStore runs = p.runs();
                Phase s = Phase.start(p, proxy);
                byte[] back = new byte[runBytes];
                int calls = 0;
                for (long pos = 0; pos < runBytes; ) {
                    int n = runs.read(LOG, id, pos, back, (int) pos, (int) Math.min(blockBytes, runBytes - pos));
                    if (n <= 0) {
                        throw new IllegalStateException("short read at " + pos);
                    }
                    pos += n;
                    calls++;
                }
                s.print("sequential, " + blockBytes + "-byte reads", calls, runBytes);
                if (!Arrays.equals(back, data)) {
                    throw new IllegalStateException("the run read back differs");
                }
            }
            for (String phase : random) {
                int randomReads = Integer.parseInt(phase.substring(0, phase.indexOf('x')));
                int randomBytes = Integer.parseInt(phase.substring(phase.indexOf('x') + 1));
                try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(settings)) {
                    RunStore runs = p.runs();
                    Random rnd = new Random(7);
                    byte[] buf = new byte[randomBytes];
                    Phase r = Phase.start(p, proxy);
                    for (int i = 0; i < randomReads; i++) {
                        int pos = rnd.nextInt(runBytes - randomBytes + 1);
                        int n = runs.read(LOG, id, pos, buf, 0, randomBytes);
                        if (n != randomBytes || !Arrays.equals(buf, 0, n, data, pos, pos + n)) {
                            throw new IllegalStateException("random read at " + pos + " differs");
                        }
                    }
                    r.print("random, " + randomBytes + "-byte reads", randomReads, (long) randomReads * randomBytes);
                }
            }
            DynamoTestBackend.rawClient().deleteTable(b -> b.tableName(table));
        }
    }

    /** Counters at the start of one phase. */
    private record Phase(DynamoDbWalStorageProvider p, CountingProxy proxy, DynamoDbMetrics.Snapshot m, long in,
                         long out, long t0) {
        static Phase start(DynamoDbWalStorageProvider p, CountingProxy proxy) {
            return new Phase(p, proxy, p.metrics(), proxy.received.get(), proxy.sent.get(), System.nanoTime());
        }

        void print(String name, int calls, long used) {
            long ms = (System.nanoTime() - t0) / 1_000_000;
            DynamoDbMetrics.Snapshot d = p.metrics().minus(m);
            long in = proxy.received.get() - this.in;
            long out = proxy.sent.get() - this.out;
            System.out.println(String.format(Locale.ROOT, "| %s | %,d | %,d | %,d | %.2f | %,d | %,d | %,d | %,d | %,d | %,d |",
                    name, calls, used, in, (double) in / used, out, d.totalRequests(), d.requests(Operation.GET_ITEM),
                    d.requests(Operation.QUERY), d.itemsRead(), ms));
        }
    }

    /** A loopback TCP proxy counting the bytes each way. Thread-safe; daemon threads. */
    static final class CountingProxy implements AutoCloseable {
        final AtomicLong received = new AtomicLong();
        final AtomicLong sent = new AtomicLong();
        private final ServerSocket server;
        private final InetSocketAddress target;
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();

        CountingProxy(InetSocketAddress target) throws IOException {
            this.target = target;
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread t = new Thread(this::accept, "counting-proxy-accept");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return server.getLocalPort();
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    Socket upstream = new Socket(target.getAddress(), target.getPort());
                    sockets.add(client);
                    sockets.add(upstream);
                    pump(client.getInputStream(), upstream.getOutputStream(), sent);
                    pump(upstream.getInputStream(), client.getOutputStream(), received);
                } catch (IOException e) {
                    if (!server.isClosed()) {
                        throw new UncheckedIOException(e);
                    }
                }
            }
        }

        private static void pump(InputStream in, OutputStream out, AtomicLong counter) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[64 << 10];
                try {
                    for (int n; (n = in.read(buf)) >= 0; ) {
                        counter.addAndGet(n);
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException ignored) {
                    // the other side closed
                } finally {
                    try {
                        out.close();
                    } catch (IOException ignored) {
                        // closing anyway
                    }
                }
            }, "counting-proxy-pump");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
