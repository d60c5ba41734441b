package dev.lattice.bench.peer;

import java.nio.file.Path;

/** Deleting benchmark directories, for harnesses outside this package. Stateless. */
public final class KvStoreDirs {

    private KvStoreDirs() {
    }

    /**
     * Deletes a directory tree (a no-op when absent).
     *
     * @param dir the directory
     * @throws java.io.UncheckedIOException if something cannot be deleted
     */
    public static void delete(Path dir) {
        RecoveryHarness.delete(dir);
    }
}
