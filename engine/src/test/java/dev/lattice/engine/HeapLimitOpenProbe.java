package dev.lattice.engine;

/**
 * Child JVM of {@link HeapLimitOpenTest}: opens a Chronicle tree with default settings under a small heap and prints
 * one line, {@code OPENED <count>} or {@code REFUSED <exception class>: <message>}.
 */
public final class HeapLimitOpenProbe {

    private HeapLimitOpenProbe() {
    }

    /**
     * @param args the data directory and the tree name
     */
    public static void main(String[] args) {
        long t0 = System.nanoTime();
        try (Lattice l = Lattice.open("chronicle:" + args[0])) {
            long n = l.tree(args[1]).count();
            System.out.println("OPENED " + n);
        } catch (Throwable e) {
            System.out.println("REFUSED " + e.getClass().getName() + " after "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms: " + e.getMessage());
        }
        System.out.flush();
        System.exit(0);
    }
}
