package dev.lattice.provider.chronicle;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A small real tmpfs file system that a test mounts (needs root: CI runs as root) and unmounts afterwards, for
 * disk-full tests. Mounting failures fail the test loudly: a disk-full test that silently skipped would prove nothing.
 */
final class Tmpfs implements AutoCloseable {

    final Path dir;

    private Tmpfs(Path dir) {
        this.dir = dir;
    }

    /**
     * Mounts a tmpfs of {@code mib} MiB on a fresh temporary directory.
     *
     * @param mib the size in MiB
     * @return the mounted file system
     * @throws IllegalStateException if the mount fails (not root, no mount binary)
     */
    static Tmpfs mount(int mib) {
        Path d = TestDirs.create("tmpfs-");
        run("mount", "-t", "tmpfs", "-o", "size=" + mib + "m", "tmpfs", d.toString());
        return new Tmpfs(d);
    }

    /**
     * Changes the size of the mounted file system.
     *
     * @param mib the new size in MiB
     */
    void resize(int mib) {
        run("mount", "-o", "remount,size=" + mib + "m", dir.toString());
    }

    /** @return bytes still free */
    long usable() throws IOException {
        return Files.getFileStore(dir).getUsableSpace();
    }

    @Override
    public void close() {
        try {
            run("umount", dir.toString());
        } catch (IllegalStateException busy) {
            run("umount", "-l", dir.toString()); // a file still open (a failed test): detach it anyway
        }
        try {
            Files.deleteIfExists(dir);
        } catch (IOException ignored) {
            // an empty mount point in the temp directory
        }
    }

    private static void run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out: " + String.join(" ", cmd));
            }
            String out = new String(p.getInputStream().readAllBytes());
            if (p.exitValue() != 0) {
                throw new IllegalStateException("'" + String.join(" ", cmd) + "' failed (exit " + p.exitValue()
                        + "; disk-full tests need root to mount a tmpfs): " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", cmd), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", cmd), e);
        }
    }
}
