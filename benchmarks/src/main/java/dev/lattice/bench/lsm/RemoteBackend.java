package dev.lattice.bench.lsm;

import dev.lattice.testbackends.AzuriteServer;
import dev.lattice.testbackends.DynaliteServer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The server of one {@link LargeTreeHarness} case on a remote provider (not part of the product), started on
 * 127.0.0.1 as the providers' own tests start it: zonky embedded PostgreSQL ({@code fsync=on},
 * {@code synchronous_commit=on}), dynalite or Azurite through test-backends (in memory). Gives the provider URI the
 * child JVMs open and the server's size. Not thread-safe.
 */
abstract class RemoteBackend implements AutoCloseable {

    /** @return the provider URI of the case's tree (its own schema, table or container) */
    abstract String uri();

    /**
     * @return the server's bytes: PostgreSQL's {@code pg_database_size} of the database, an emulator's resident set
     *     ({@code VmRSS}, it keeps everything in memory); -1 when unknown
     */
    abstract long bytes();

    /** Stops the server (no-op for a server the caller started). */
    @Override
    public abstract void close();

    /**
     * @param store the harness's store name
     * @param givenUri {@code --uri} (store {@code uri} only), may be null
     * @param name a name for the case's schema, table or container (ASCII letters and digits)
     * @return the started backend, or null for the local stores ({@code lattice}, {@code rocksdb})
     * @throws IllegalArgumentException for an unknown store, or {@code uri} without {@code --uri}
     * @throws IllegalStateException if the server does not start
     */
    static RemoteBackend start(String store, String givenUri, String name) {
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        switch (store) {
            case "lattice":
            case "rocksdb":
                return null;
            case "uri":
                if (givenUri == null) {
                    throw new IllegalArgumentException("store uri needs --uri PROVIDER_URI");
                }
                return new Fixed(givenUri, "given server", -1, () -> { });
            case "postgres":
                return postgres(lower);
            case "dynamodb": {
                DynaliteServer d = DynaliteServer.start();
                String uri = "dynamodb://lt-" + lower + "?endpoint=" + enc(d.endpoint().toString()) + "&region="
                        + DynaliteServer.REGION + "&accessKeyId=" + enc(DynaliteServer.ACCESS_KEY_ID)
                        + "&secretAccessKey=" + enc(DynaliteServer.SECRET_ACCESS_KEY) + "&createTable=true";
                return new Fixed(uri, d.toString(), d.pid(), d::close);
            }
            case "azure-tables":
            case "azure-blob": {
                AzuriteServer a = AzuriteServer.start();
                String uri = store + ":" + (store.equals("azure-tables") ? "lt" + name : "lt-" + lower)
                        + "?connectionString=" + enc(a.connectionString());
                return new Fixed(uri, a.toString(), a.pid(), a::close);
            }
            default:
                throw new IllegalArgumentException("unknown store " + store
                        + "; known: lattice, rocksdb, postgres, dynamodb, azure-tables, azure-blob, uri");
        }
    }

    private static RemoteBackend postgres(String schema) {
        EmbeddedPostgres pg;
        try {
            pg = EmbeddedPostgres.builder().setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on").start();
        } catch (IOException e) {
            throw new IllegalStateException("embedded PostgreSQL did not start: " + e.getMessage(), e);
        }
        String uri = "postgres://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres&schema=lt_" + schema;
        return new Fixed(uri, "EmbeddedPostgres[port=" + pg.getPort() + "]", -1, () -> {
            try {
                pg.close();
            } catch (IOException e) {
                throw new UncheckedIOException("stopping embedded PostgreSQL", e);
            }
        }) {
            @Override
            long bytes() {
                try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement();
                     ResultSet rs = st.executeQuery("select pg_database_size('postgres')")) {
                    rs.next();
                    return rs.getLong(1);
                } catch (SQLException e) {
                    return -1;
                }
            }
        };
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** A backend with a fixed URI, a process whose resident set is its size (pid -1: unknown) and a stop action. */
    private static class Fixed extends RemoteBackend {
        private final String uri;
        private final String description;
        private final long pid;
        private final Runnable stop;

        Fixed(String uri, String description, long pid, Runnable stop) {
            this.uri = uri;
            this.description = description;
            this.pid = pid;
            this.stop = stop;
        }

        @Override
        String uri() {
            return uri;
        }

        @Override
        long bytes() {
            if (pid < 0) {
                return -1;
            }
            try {
                for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                    if (line.startsWith("VmRSS:")) {
                        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                    }
                }
            } catch (IOException | NumberFormatException e) {
                return -1;
            }
            return -1;
        }

        @Override
        public void close() {
            stop.run();
        }

        @Override
        public String toString() {
            return description;
        }
    }
}
