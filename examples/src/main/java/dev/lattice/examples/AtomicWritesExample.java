package dev.lattice.examples;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.PreconditionFailedException;
import dev.lattice.engine.Tree;
import dev.lattice.engine.Versioned;

import java.nio.charset.StandardCharsets;

/**
 * Atomic writes across two trees: an order is written and the stock decremented together or not at all, guarded by
 * a version precondition on the stock (optimistic concurrency). Runs on any provider URI (default
 * {@code chronicle:./lattice-data}).
 */
public final class AtomicWritesExample {

    private AtomicWritesExample() {
    }

    /**
     * @param args optional provider URI
     */
    public static void main(String[] args) {
        System.out.println("stock left: " + run(args.length > 0 ? args[0] : "chronicle:./lattice-data"));
    }

    /**
     * Places orders until the stock runs out, each one atomically with its stock decrement.
     *
     * @param uri the provider URI
     * @return the stock left at the end (0)
     */
    static int run(String uri) {
        try (Lattice lattice = Lattice.open(uri)) {
            Tree orders = lattice.tree("orders");
            Tree stock = lattice.tree("stock");
            long firstVersion = stock.put("sku-9", text("3"));
            for (int i = 1; i <= 5; i++) {
                Versioned current = stock.getVersioned("sku-9").orElseThrow();
                int left = Integer.parseInt(new String(current.value(), StandardCharsets.UTF_8));
                if (left == 0) {
                    System.out.println("order o-" + i + ": out of stock");
                    continue;
                }
                try {
                    lattice.atomic()                                         // all or nothing, never partially visible
                            .put(orders, "o-" + i, text("sku-9 x1"))
                            .put(stock, "sku-9", text(Integer.toString(left - 1)))
                            .expectVersion(stock, "sku-9", current.version())   // nothing written if it changed
                            .commit();
                    System.out.println("order o-" + i + ": placed");
                } catch (PreconditionFailedException e) {
                    System.out.println("order o-" + i + ": stock changed meanwhile, retry (" + e.getMessage() + ")");
                }
            }
            // a precondition that fails writes nothing: the stale version is refused
            try {
                lattice.atomic().put(orders, "o-stale", text("sku-9 x1")).expectVersion(stock, "sku-9", firstVersion)
                        .commit();
            } catch (PreconditionFailedException e) {
                System.out.println("stale write refused: " + e.getMessage());
            }
            return Integer.parseInt(new String(stock.get("sku-9").orElseThrow(), StandardCharsets.UTF_8));
        }
    }

    private static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
