package dev.lattice.provider.chronicle;

import net.openhft.chronicle.core.Jvm;
import net.openhft.chronicle.core.onoes.Slf4jExceptionHandler;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Keeps Chronicle quiet and private without JVM flags: switches off its analytics client (which would phone
 * {@code www.google-analytics.com} and write {@code ~/.chronicle.analytics.client.id} and
 * {@code ~/.chronicle.analytics.last}) and its start-up banner, points JNA's scratch directory at
 * {@code java.io.tmpdir} (instead of creating {@code ~/.cache/JNA/temp}), and lowers Chronicle's "Took N ms to ..."
 * performance notes from INFO to DEBUG.
 *
 * <p>Chronicle reads the system properties once, in static initialisers, so {@link #properties()} must run before any
 * Chronicle class is initialised: the provider's entry classes ({@link ChronicleConfig},
 * {@link ChronicleProviderFactory}, {@link ChronicleWalStorageProvider}) call it from their own static initialisers.
 * A property the application set itself (e.g. {@code -Dchronicle.analytics.disable=false}) is left alone; with
 * {@code -Dlattice.chronicle.quiet=false} nothing is changed at all. If the application initialised Chronicle before
 * (it uses Chronicle itself), the properties come too late and Chronicle keeps its own behaviour. Thread-safe.
 */
final class ChronicleQuiet {

    /** System property that, set to {@code false}, leaves Chronicle's defaults untouched. */
    static final String SWITCH = "lattice.chronicle.quiet";

    /** The properties set when absent, with their values. */
    static final String[][] PROPERTIES = {
        {"chronicle.analytics.disable", "true"},
        {"chronicle.announcer.disable", "true"},
    };

    private static final AtomicBoolean PERF_LOWERED = new AtomicBoolean();

    private ChronicleQuiet() {
    }

    /**
     * Sets Chronicle's analytics and announcer switches and JNA's temp directory, each only when absent. Touches no
     * Chronicle class. Idempotent.
     */
    static void properties() {
        if (!enabled()) {
            return;
        }
        for (String[] p : PROPERTIES) {
            setIfAbsent(p[0], p[1]);
        }
        String tmp = System.getProperty("java.io.tmpdir");
        if (tmp != null) {
            setIfAbsent("jna.tmpdir", tmp);
        }
    }

    /**
     * Routes Chronicle's performance notes ({@code Jvm.perf()}: "Took N ms to add mapping", "... to pollDiskSpace",
     * "... to grow file") to SLF4J DEBUG under the same logger names. Initialises Chronicle's {@code Jvm} class, so
     * call it only after {@link #properties()} and the JVM flag check. Idempotent.
     */
    static void lowerPerfNotes() {
        if (enabled() && PERF_LOWERED.compareAndSet(false, true)) {
            Jvm.setPerfExceptionHandler(Slf4jExceptionHandler.DEBUG);
        }
    }

    private static boolean enabled() {
        return !"false".equalsIgnoreCase(System.getProperty(SWITCH));
    }

    private static void setIfAbsent(String name, String value) {
        try {
            if (System.getProperty(name) == null) {
                System.setProperty(name, value);
            }
        } catch (SecurityException ignored) {
            // a security manager forbids it: Chronicle keeps its defaults, the flags in the docs still work
        }
    }
}
