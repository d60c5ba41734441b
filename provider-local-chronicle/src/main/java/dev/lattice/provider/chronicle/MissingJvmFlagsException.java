package dev.lattice.provider.chronicle;

import dev.lattice.spi.WalStorageException;

import java.util.List;

/**
 * The JVM was started without the flags Chronicle Queue needs on Java 17+ ({@code --add-opens} /
 * {@code --add-exports} of {@code java.base} packages to the unnamed module). Thrown when a Chronicle provider opens,
 * before anything touches Chronicle, instead of the {@code AssertionError: IllegalAccessException ...
 * FileChannelImpl.map0} Chronicle would throw at the first write. Not transient: restart the JVM with the flags the
 * message lists. A {@link WalStorageException} (with no log) so callers that handle provider failures in one place
 * see it there. Immutable.
 */
public class MissingJvmFlagsException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    /** Every flag the Chronicle provider needs, in the form to put on the {@code java} command line. */
    public static final List<String> REQUIRED_FLAGS = List.of(
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED");

    private final transient List<String> missing;

    /**
     * @param missing the flags found missing (a subset of {@link #REQUIRED_FLAGS})
     */
    public MissingJvmFlagsException(List<String> missing) {
        super(null, "the Chronicle provider needs JVM flags that this JVM was started without: "
                + String.join(" ", missing) + ". Start java with: " + String.join(" ", REQUIRED_FLAGS)
                + " (on JDK 24 and later also --enable-native-access=ALL-UNNAMED"
                + " --sun-misc-unsafe-memory-access=allow); see docs/providers/chronicle.md");
        this.missing = List.copyOf(missing);
    }

    /** @return the flags found missing */
    public List<String> missing() {
        return missing;
    }
}
