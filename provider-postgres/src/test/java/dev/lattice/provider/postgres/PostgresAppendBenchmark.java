package dev.lattice.provider.postgres;

import dev.lattice.conformance.WalTestSupport;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Measurement harness (not a test): coalesced append throughput of the provider against a raw JDBC baseline in the
 * same run and on the same server, plus replay figures.
 *
 * <ul>
 *   <li><b>provider</b>: {@code append} of batches of B entries of 100 bytes, T writer threads, one log each.</li>
 *   <li><b>jdbc</b>: the same bytes as plain JDBC batched INSERTs (one row per entry, {@code addBatch} per entry,
 *       {@code executeBatch}, {@code commit} per batch of B) into a table with a primary key on (log, offset), with
 *       and without pgjdbc's {@code reWriteBatchedInserts}; same {@code synchronous_commit=on}.</li>
 *   <li><b>replay</b>: a fresh provider instance reads each log back from offset -1 with pages of 10,000 entries /
 *       16 MiB and of 1,000 entries / 4 MiB; read calls and time.</li>
 * </ul>
 *
 * Each configuration runs the provider and the baselines alternately ({@code -Dbench.rounds}, default 5), after a
 * warm-up, and reports each one's median round and the ratio of the medians. Server: embedded PostgreSQL 17 with fsync and synchronous_commit on (or
 * {@code -Dlattice.postgres.url}). Run: see docs/providers/postgres.md.
 */
public final class PostgresAppendBenchmark {

    private static final int PAYLOAD = 100;
    private static final int ROUNDS = Integer.getInteger("bench.rounds", 5);
    private static final int ENTRIES_PER_THREAD = Integer.getInteger("bench.entries", 50_000);

    private PostgresAppendBenchmark() {
    }

    /**
     * Runs the measurements and prints a table.
     *
     * @param args unused
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        PostgresTestServer.Server server = PostgresTestServer.server();
        try {
            System.out.printf(Locale.ROOT, "server %s (embedded %s), %s%n", server.jdbcUrl(), server.embedded(),
                    settings(server));
            System.out.println("medians of " + ROUNDS + " rounds, " + ENTRIES_PER_THREAD + " entries of " + PAYLOAD
                    + " bytes per thread");
            System.out.println("batch  threads  provider keys/s  jdbc keys/s  jdbc-rewrite keys/s  ratio   rounds "
                    + "(provider/jdbc/jdbc-rewrite, keys/s)");
            List<String> replay = new ArrayList<>();
            for (int batch : new int[] {100, 1000}) {
                for (int threads : new int[] {1, 4}) {
                    run(server, batch, threads, replay);
                }
            }
            System.out.println();
            System.out.println("replay (fresh instance): batch threads entries/log  page(entries/bytes)  read calls  ms  "
                    + "entries/s");
            replay.forEach(System.out::println);
        } finally {
            if (server.process() != null) {
                server.process().close();
            }
        }
    }

    private static String settings(PostgresTestServer.Server server) throws SQLException {
        try (Connection c = server.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT version(), current_setting('fsync'),"
                     + " current_setting('synchronous_commit'), current_setting('wal_sync_method')")) {
            rs.next();
            return rs.getString(1).replaceAll(" on .*", "") + ", fsync=" + rs.getString(2) + ", synchronous_commit="
                    + rs.getString(3) + ", wal_sync_method=" + rs.getString(4);
        }
    }

    private static void run(PostgresTestServer.Server server, int batch, int threads, List<String> replay)
            throws Exception {
        int batchesPerThread = ENTRIES_PER_THREAD / batch;
        List<Double> ours = new ArrayList<>();
        List<Double> plain = new ArrayList<>();
        List<Double> rewrite = new ArrayList<>();
        String replaySchema = null;
        // Warm-up: a short run of each, not counted.
        String warm = PostgresTestServer.newSchema();
        ours(server, warm, batch, threads, Math.max(2, batchesPerThread / 10));
        jdbc(server, warm, batch, threads, Math.max(2, batchesPerThread / 10), false);
        jdbc(server, warm, batch, threads, Math.max(2, batchesPerThread / 10), true);
        PostgresTestServer.dropSchema(warm);
        for (int round = 0; round < ROUNDS; round++) {
            String schema = PostgresTestServer.newSchema();
            // Alternate who goes first, so drift in the machine's load does not favour one side.
            if (round % 2 == 0) {
                ours.add(ours(server, schema, batch, threads, batchesPerThread));
                plain.add(jdbc(server, schema, batch, threads, batchesPerThread, false));
                rewrite.add(jdbc(server, schema, batch, threads, batchesPerThread, true));
            } else {
                rewrite.add(jdbc(server, schema, batch, threads, batchesPerThread, true));
                plain.add(jdbc(server, schema, batch, threads, batchesPerThread, false));
                ours.add(ours(server, schema, batch, threads, batchesPerThread));
            }
            if (replaySchema == null) {
                replaySchema = schema;
            } else {
                PostgresTestServer.dropSchema(schema);
            }
        }
        double o = median(ours);
        double best = Math.max(median(plain), median(rewrite));
        System.out.printf(Locale.ROOT, "%5d  %7d  %15.0f  %11.0f  %19.0f  %6.2f   %s%n", batch, threads, o,
                median(plain), median(rewrite), o / best, rounds(ours, plain, rewrite));
        replay(server, replaySchema, batch, threads, 10_000, 16 << 20); // warm-up of the read path, not reported
        for (int[] page : new int[][] {{10_000, 16 << 20}, {1_000, 4 << 20}}) {
            replay.add(replay(server, replaySchema, batch, threads, page[0], page[1]));
        }
        PostgresTestServer.dropSchema(replaySchema);
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(null);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    private static String rounds(List<Double> a, List<Double> b, List<Double> c) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < a.size(); i++) {
            out.append(String.format(Locale.ROOT, "%s%.0f/%.0f/%.0f", i == 0 ? "" : " ", a.get(i), b.get(i),
                    c.get(i)));
        }
        return out.toString();
    }

    private static List<EncodedBatch> batches(int thread, int batch, int count) {
        List<EncodedBatch> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long first = (long) i * batch;
            List<byte[]> ps = new ArrayList<>(batch);
            for (int k = 0; k < batch; k++) {
                ps.add(WalTestSupport.payload(thread, first + k, PAYLOAD));
            }
            out.add(EncodedBatch.of(first, BatchId.random(), ps));
        }
        return out;
    }

    /** Appends with the provider; returns keys (entries) per second over all threads. */
    private static double ours(PostgresTestServer.Server server, String schema, int batch, int threads, int count)
            throws Exception {
        java.util.Map<String, String> options = new java.util.HashMap<>(server.options());
        options.put("poolSize", String.valueOf(Math.max(2, threads)));
        try (WalStorageProvider p = PostgresWalStorageProvider.open(server.providerUri(schema), options)) {
            List<List<EncodedBatch>> work = new ArrayList<>();
            List<Fence> fences = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                work.add(batches(t, batch, count));
                LogId log = new LogId("bench", t);
                Fence f = p.claim(log);
                p.reconcile(log, f);
                fences.add(f);
            }
            return timed(threads, t -> {
                for (EncodedBatch b : work.get(t)) {
                    p.append(fences.get(t).log(), fences.get(t), b);
                }
            }, (long) threads * count * batch);
        }
    }

    /** Appends the same bytes with plain JDBC batched INSERTs; returns keys per second over all threads. */
    private static double jdbc(PostgresTestServer.Server server, String schema, int batch, int threads, int count,
                               boolean rewrite) throws Exception {
        String table = "\"" + schema + "\".raw_" + (rewrite ? "rw" : "plain");
        try (Connection c = connect(server, false); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS \"" + schema + "\"");
            s.execute("CREATE TABLE " + table + " (log_id integer NOT NULL, off bigint NOT NULL, payload bytea NOT NULL,"
                    + " PRIMARY KEY (log_id, off))");
        }
        List<List<EncodedBatch>> work = new ArrayList<>();
        List<Connection> conns = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            work.add(batches(t, batch, count));
            Connection c = connect(server, rewrite);
            c.setAutoCommit(false);
            conns.add(c);
        }
        try {
            return timed(threads, t -> {
                Connection c = conns.get(t);
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                        + " (log_id, off, payload) VALUES (?, ?, ?)")) {
                    for (EncodedBatch b : work.get(t)) {
                        long off = b.firstOffset();
                        for (byte[] e : b.entries()) {
                            ps.setInt(1, t);
                            ps.setLong(2, off++);
                            ps.setBytes(3, e);
                            ps.addBatch();
                        }
                        ps.executeBatch();
                        c.commit();
                    }
                }
            }, (long) threads * count * batch);
        } finally {
            for (Connection c : conns) {
                c.close();
            }
        }
    }

    private static Connection connect(PostgresTestServer.Server server, boolean rewrite) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", server.user());
        if (server.password() != null) {
            p.setProperty("password", server.password());
        }
        p.setProperty("options", "-c synchronous_commit=on");
        p.setProperty("reWriteBatchedInserts", String.valueOf(rewrite));
        return DriverManager.getConnection(server.jdbcUrl(), p);
    }

    private interface Work {
        void run(int thread) throws Exception;
    }

    private static double timed(int threads, Work work, long keys) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long t0 = System.nanoTime();
            List<Future<Object>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                fs.add(pool.submit(() -> {
                    work.run(thread);
                    return null;
                }));
            }
            for (Future<Object> f : fs) {
                f.get();
            }
            return keys / ((System.nanoTime() - t0) / 1e9);
        } finally {
            pool.shutdownNow();
        }
    }

    private static String replay(PostgresTestServer.Server server, String schema, int batch, int threads,
                                 int pageEntries, long pageBytes) {
        try (WalStorageProvider p = PostgresWalStorageProvider.open(server.providerUri(schema), server.options())) {
            LogId log = new LogId("bench", 0);
            long t0 = System.nanoTime();
            long from = -1;
            long entries = 0;
            int calls = 0;
            while (true) {
                ReadPage page = p.read(log, from, pageEntries, pageBytes);
                calls++;
                if (page.isEmpty()) {
                    break;
                }
                entries += page.entries().size();
                from = page.nextFromExclusive(from);
            }
            double ms = (System.nanoTime() - t0) / 1e6;
            return String.format(Locale.ROOT, "%5d %7d %11d  %8d / %-8d  %10d  %6.1f  %.0f", batch, threads,
                    entries, pageEntries, pageBytes, calls, ms, entries / (ms / 1e3));
        }
    }
}
