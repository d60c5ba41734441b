package dev.lattice.provider.chronicle;

import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;

import java.util.ArrayList;
import java.util.List;

/**
 * Checks that {@code java.base} opens and exports to Chronicle's module what Chronicle Queue reaches into on Java
 * 17+ ({@code sun.nio.ch}, {@code java.lang.reflect} opened; {@code jdk.internal.ref} exported). Uses
 * {@link Module#isOpen(String, Module)} / {@link Module#isExported(String, Module)} only: no Chronicle class is
 * initialised. Stateless and thread-safe.
 */
final class JvmFlags {

    private JvmFlags() {
    }

    /**
     * @throws MissingJvmFlagsException if any of {@link MissingJvmFlagsException#REQUIRED_FLAGS} is not in effect
     */
    static void check() {
        List<String> missing = missing(SingleChronicleQueue.class.getModule());
        if (!missing.isEmpty()) {
            throw new MissingJvmFlagsException(missing);
        }
    }

    /**
     * @param chronicle the module Chronicle's classes are in (the unnamed module when on the class path)
     * @return the required flags not in effect for it, empty when all are
     */
    static List<String> missing(Module chronicle) {
        Module base = Object.class.getModule();
        List<String> out = new ArrayList<>();
        List<String> flags = MissingJvmFlagsException.REQUIRED_FLAGS;
        if (!base.isOpen("java.lang.reflect", chronicle)) {
            out.add(flags.get(0));
        }
        if (!base.isOpen("sun.nio.ch", chronicle)) {
            out.add(flags.get(1));
        }
        if (!base.isExported("jdk.internal.ref", chronicle)) {
            out.add(flags.get(2));
        }
        return out;
    }
}
