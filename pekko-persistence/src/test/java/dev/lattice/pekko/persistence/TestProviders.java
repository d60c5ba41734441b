package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import dev.lattice.testbackends.AzuriteServer;
import dev.lattice.testbackends.DynaliteServer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Provider URIs and options for the plugin tests, each on a fresh storage object: {@code memory:}, Chronicle (under
 * {@code target/}), an embedded PostgreSQL (one per JVM, a schema per call), DynamoDB (dynalite) and Azure Tables /
 * Azure Blob (Azurite), the emulators started on 127.0.0.1 by the test-backends module.
 */
final class TestProviders {

    /** The providers the TCK runs on. */
    enum Kind { MEMORY, CHRONICLE, POSTGRES, DYNAMODB, AZURE_TABLES, AZURE_BLOB }

    /** A URI and its options. */
    record Target(String uri, Map<String, String> options) {
    }

    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final String RUN = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    private static EmbeddedPostgres postgres;

    private TestProviders() {
    }

    static synchronized EmbeddedPostgres postgres() {
        if (postgres == null) {
            try {
                postgres = EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            EmbeddedPostgres pg = postgres;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    pg.close();
                } catch (IOException ignored) {
                    // the JVM is exiting
                }
            }));
        }
        return postgres;
    }

    /**
     * @param kind the provider
     * @param name a label for the storage object
     * @return a fresh storage object's URI and options
     */
    static Target fresh(Kind kind, String name) {
        return fresh(kind, name, null);
    }

    /**
     * Starts an emulator process of its own for a provider kind, for a spec that must not share the JVM's emulator
     * with the specs before it (the perf specs: an Azurite that served another spec's tens of thousands of requests
     * answers more slowly). The caller closes it.
     *
     * @param kind the provider
     * @return a new {@link DynaliteServer} or {@link AzuriteServer}; null for providers without an emulator
     * @throws dev.lattice.testbackends.BackendStartException if the emulator does not come up
     */
    static AutoCloseable privateEmulator(Kind kind) {
        return switch (kind) {
            case DYNAMODB -> DynaliteServer.start();
            case AZURE_TABLES, AZURE_BLOB -> AzuriteServer.start();
            default -> null;
        };
    }

    /**
     * @param kind the provider
     * @param name a label for the storage object
     * @param emulator the emulator to use ({@link #privateEmulator(Kind)}), or null for the JVM's shared one
     * @return a fresh storage object's URI and options
     */
    static Target fresh(Kind kind, String name, AutoCloseable emulator) {
        String label = (name + RUN + SEQ.incrementAndGet()).toLowerCase().replaceAll("[^a-z0-9]", "");
        Map<String, String> o = new LinkedHashMap<>();
        return switch (kind) {
            case MEMORY -> new Target("memory:pekko-" + label, o);
            case CHRONICLE -> {
                try {
                    Path dir = Files.createDirectories(Path.of("target", "pekko-chronicle")).resolve(label);
                    yield new Target("chronicle:" + dir.toAbsolutePath(), o);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            case POSTGRES -> new Target("postgres://127.0.0.1:" + postgres().getPort() + "/postgres?user=postgres&schema=p"
                    + label, o);
            case DYNAMODB -> {
                DynaliteServer d = emulator instanceof DynaliteServer own ? own : DynaliteServer.shared();
                o.put("endpoint", d.endpoint().toString());
                o.put("region", DynaliteServer.REGION);
                o.put("accessKeyId", DynaliteServer.ACCESS_KEY_ID);
                o.put("secretAccessKey", DynaliteServer.SECRET_ACCESS_KEY);
                o.put("createTable", "true");
                yield new Target("dynamodb:" + DynaliteServer.uniqueTableName("pekko"), o);
            }
            case AZURE_TABLES -> {
                o.put("connectionString", azurite(emulator).connectionString());
                yield new Target("azure-tables:" + AzuriteServer.uniqueTableName("pekko"), o);
            }
            case AZURE_BLOB -> {
                o.put("connectionString", azurite(emulator).connectionString());
                yield new Target("azure-blob:" + AzuriteServer.uniqueContainerName("pekko"), o);
            }
        };
    }

    private static AzuriteServer azurite(AutoCloseable emulator) {
        return emulator instanceof AzuriteServer own ? own : AzuriteServer.shared();
    }

    /**
     * The actor system configuration selecting the Lattice plugins on a target, with Pekko's logging quiet.
     *
     * @param t the target
     * @return the configuration (falls back to the defaults)
     */
    static Config config(Target t) {
        Config base = ConfigFactory.parseString("""
                pekko.loglevel = ERROR
                pekko.stdout-loglevel = ERROR
                pekko.log-dead-letters = off
                pekko.log-dead-letters-during-shutdown = off
                # the emulators share 2 cores with the build: the TCK's 3 s expectations get 3x
                pekko.test.timefactor = 3
                pekko.persistence.journal.plugin = "lattice.persistence.journal"
                pekko.persistence.snapshot-store.plugin = "lattice.persistence.snapshot-store"
                pekko.persistence.state.plugin = "lattice.persistence.state"
                """);
        return base.withValue("lattice.persistence.connection.uri", ConfigValueFactory.fromAnyRef(t.uri()))
                .withValue("lattice.persistence.connection.options", ConfigValueFactory.fromMap(t.options()));
    }

    /**
     * @param kind the provider
     * @param name a label
     * @return {@link #config(Target)} of a fresh target
     */
    static Config config(Kind kind, String name) {
        return config(fresh(kind, name));
    }
}
