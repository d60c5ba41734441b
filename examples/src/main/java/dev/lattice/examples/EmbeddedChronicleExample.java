package dev.lattice.examples;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;

import static java.nio.charset.StandardCharsets.UTF_8;

public class EmbeddedChronicleExample {

    public static void main(String[] args) {
        String dir = args.length > 0 ? args[0] : "./lattice-data";
        try (Lattice lattice = Lattice.open("chronicle:" + dir)) {       // any provider URI: memory:x, postgres://...
            Tree orders = lattice.tree("orders");                          // created on first use, 8 partitions
            long version = orders.put("o-1", utf8("new"));                 // returns once committed to the WAL
            orders.putIfVersion("o-1", utf8("paid"), version);             // false if o-1 changed since
            try (ScanCursor c = orders.scan("o-", "o.", false)) {          // "o-" inclusive to "o." exclusive
                c.forEachRemaining(e -> System.out.println(e.key() + " = " + new String(e.value(), UTF_8)));
            }
            Tree stock = lattice.tree("stock");
            long stockVersion = stock.put("sku-9", utf8("3"));
            lattice.atomic()                                               // all or nothing, never partially visible
                   .put(orders, "o-2", utf8("sku-9 x1")).put(stock, "sku-9", utf8("2"))
                   .expectVersion(stock, "sku-9", stockVersion)            // precondition: nothing written if it fails
                   .commit();
        }
    }

    static byte[] utf8(String s) {
        return s.getBytes(UTF_8);
    }
}
