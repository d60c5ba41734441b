package dev.lattice.examples;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The same program on PostgreSQL: only the URI (and the provider module, {@code lattice-provider-postgres}) change.
 * Needs a running server, e.g.
 * {@code java -cp ... dev.lattice.examples.PostgresExample 'postgres://localhost:5432/app?user=app' secret}.
 * The password goes in an option rather than the URI so that it does not end up in logs.
 */
public final class PostgresExample {

    private PostgresExample() {
    }

    /**
     * @param args the provider URI ({@code postgres://host:port/database?user=...}), then optionally the password
     */
    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: PostgresExample postgres://host:5432/db?user=... [password]");
            System.exit(2);
        }
        System.out.println("o-1 = " + run(args[0], args.length > 1 ? Map.of("password", args[1]) : Map.of()));
    }

    /**
     * @param uri the {@code postgres://} URI
     * @param options provider options (e.g. {@code password})
     * @return the value of {@code o-1} at the end
     */
    static String run(String uri, Map<String, String> options) {
        LatticeConfig config = LatticeConfig.builder().uri(uri).providerOptions(options).build();
        try (Lattice lattice = Lattice.open(config)) {
            Tree orders = lattice.tree("orders");
            long version = orders.put("o-1", "new".getBytes(StandardCharsets.UTF_8));
            orders.putIfVersion("o-1", "paid".getBytes(StandardCharsets.UTF_8), version);
            return new String(orders.get("o-1").orElseThrow(), StandardCharsets.UTF_8);
        }
    }
}
