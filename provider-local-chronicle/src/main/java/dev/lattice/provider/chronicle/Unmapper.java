package dev.lattice.provider.chronicle;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.MappedByteBuffer;
import java.util.function.Consumer;

/**
 * Releases a file mapping at once instead of when the garbage collector finds its buffer unreachable, so a deleted
 * run's disk space and address space are given back when its last read ends. Uses the JDK's
 * {@code sun.misc.Unsafe.invokeCleaner} (module {@code jdk.unsupported}, present in JDK 9 to 25; JDK 24 and later
 * need {@code --sun-misc-unsafe-memory-access=allow}, which the Chronicle provider already requires); where it is
 * missing, {@link #AVAILABLE} is false and mappings are released by the garbage collector.
 *
 * <p>The caller must guarantee that no thread reads the buffer during or after {@link #unmap} (a read of an unmapped
 * buffer crashes the JVM): {@link RunMappings} counts its readers for that. Thread-safe.
 */
final class Unmapper {

    private static final Consumer<MappedByteBuffer> CLEANER = find();
    /** True when mappings are released at once; false when they wait for the garbage collector. */
    static final boolean AVAILABLE = CLEANER != null;

    private Unmapper() {
    }

    /**
     * Releases a mapping (no-op where {@link #AVAILABLE} is false).
     *
     * @param buffer a buffer returned by {@link java.nio.channels.FileChannel#map}, not a duplicate or slice, that
     *               no thread reads any more
     */
    static void unmap(MappedByteBuffer buffer) {
        if (CLEANER != null) {
            CLEANER.accept(buffer);
        }
    }

    private static Consumer<MappedByteBuffer> find() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            Object unsafe = theUnsafe.get(null);
            Method invokeCleaner = unsafeClass.getMethod("invokeCleaner", java.nio.ByteBuffer.class);
            return b -> {
                try {
                    invokeCleaner.invoke(unsafe, b);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("cannot release a run file mapping", e);
                }
            };
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
