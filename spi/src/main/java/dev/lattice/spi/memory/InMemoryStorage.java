package dev.lattice.spi.memory;

import dev.lattice.spi.LogId;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The storage behind {@link InMemoryWalStorageProvider}: what survives closing a provider and opening a new one over
 * the same object (the in-memory model of "reopen"). Lost when the object is dropped or the JVM exits.
 *
 * <p>Thread-safe.
 */
public final class InMemoryStorage {

    private static final ConcurrentMap<String, InMemoryStorage> NAMED = new ConcurrentHashMap<>();

    final ConcurrentMap<LogId, InMemoryLog> logs = new ConcurrentHashMap<>();

    /** Creates an empty, anonymous storage. */
    public InMemoryStorage() {
    }

    /**
     * The JVM-wide storage with a name, created empty on first use; {@code memory:<name>} URIs use it.
     *
     * @param name the name
     * @return the storage
     * @throws NullPointerException if {@code name} is null
     */
    public static InMemoryStorage named(String name) {
        Objects.requireNonNull(name, "name");
        return NAMED.computeIfAbsent(name, n -> new InMemoryStorage());
    }

    /**
     * Forgets a named storage (its data goes with it once no provider uses it).
     *
     * @param name the name
     */
    public static void dropNamed(String name) {
        NAMED.remove(name);
    }

    InMemoryLog log(LogId id) {
        return logs.computeIfAbsent(id, k -> new InMemoryLog());
    }
}
