package dev.lattice.examples;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeEntry;

import java.nio.charset.StandardCharsets;

/**
 * The README's first program: an embedded lattice on local disk (Chronicle Queue). Run with the JVM flags the
 * README lists, e.g. {@code java --add-opens=... -cp ... dev.lattice.examples.EmbeddedChronicleExample ./data}.
 */
public final class EmbeddedChronicleExample {

    private EmbeddedChronicleExample() {
    }

    /**
     * @param args optional data directory (default {@code ./lattice-data})
     */
    public static void main(String[] args) {
        String dir = args.length > 0 ? args[0] : "./lattice-data";
        run("chronicle:" + dir);
    }

    /**
     * Writes, reads, scans and conditionally updates one tree.
     *
     * @param uri any provider URI (the README uses {@code chronicle:./lattice-data})
     * @return the value of {@code o-1} at the end
     */
    static String run(String uri) {
        try (Lattice lattice = Lattice.open(uri)) {
            Tree orders = lattice.tree("orders");                         // created on first use, 8 partitions
            long version = orders.put("o-1", bytes("new"));              // returns once committed to the WAL
            orders.put("o-2", bytes("new"));
            boolean updated = orders.putIfVersion("o-1", bytes("paid"), version);   // false if o-1 changed since
            System.out.println("o-1 updated: " + updated);
            try (ScanCursor c = orders.scan("o-", "o.", false)) {        // keys from "o-" (inclusive) to "o." (exclusive)
                while (c.hasNext()) {
                    TreeEntry e = c.next();
                    System.out.println(e.key() + " = " + new String(e.value(), StandardCharsets.UTF_8));
                }
            }
            return new String(orders.get("o-1").orElseThrow(), StandardCharsets.UTF_8);
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
