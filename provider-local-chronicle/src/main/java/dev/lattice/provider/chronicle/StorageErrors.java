package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Maps local I/O failures to the SPI's typed errors: a full disk (ENOSPC, EDQUOT, or a mapped page that could not be
 * backed) becomes a {@link ProviderUnavailableException} whose message says the disk is full and names the
 * directory; the space can come back, so the caller may retry. Everything else stays a {@link WalStorageException}.
 * Stateless and thread-safe.
 */
final class StorageErrors {

    private StorageErrors() {
    }

    /**
     * Whether a failure (or one of its causes) is the file system being out of space.
     *
     * @param t the failure
     * @return true for "No space left on device" (ENOSPC) and "Disk quota exceeded" (EDQUOT)
     */
    static boolean isDiskFull(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            String m = c.getMessage();
            if (c instanceof IOException && m != null
                    && (m.contains("No space left on device") || m.contains("Disk quota exceeded")
                    || m.contains("ENOSPC") || m.contains("EDQUOT"))) {
                return true;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return false;
    }

    /**
     * The typed disk-full error.
     *
     * @param log the log, or null
     * @param dir the directory that is out of space
     * @param what what could not be written
     * @param cause the underlying failure, or null
     * @return a {@link ProviderUnavailableException} saying the disk is full, naming {@code dir} and its usable bytes
     */
    static ProviderUnavailableException diskFull(LogId log, Path dir, String what, Throwable cause) {
        return new ProviderUnavailableException(log, "the disk is full: " + what + " (directory " + dir + ", "
                + usableText(dir) + "); nothing of this call was acknowledged, free space and retry", cause);
    }

    /**
     * Maps an I/O failure: disk full to {@link #diskFull}, anything else to a plain {@link WalStorageException}.
     *
     * @param log the log, or null
     * @param dir the directory written to
     * @param what what failed, e.g. "cannot write /x/epoch durably"
     * @param e the failure
     * @return the exception to throw
     */
    static WalStorageException io(LogId log, Path dir, String what, IOException e) {
        return isDiskFull(e) ? diskFull(log, dir, what, e) : new WalStorageException(log, what, e);
    }

    /**
     * Bytes usable on the file system holding a path (its nearest existing ancestor), or -1 when it cannot be told.
     *
     * @param dir the path
     * @return usable bytes, or -1
     */
    static long usable(Path dir) {
        Path p = dir;
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        if (p == null) {
            return -1;
        }
        try {
            FileStore fs = Files.getFileStore(p);
            return fs.getUsableSpace();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static String usableText(Path dir) {
        long u = usable(dir);
        return u < 0 ? "usable space unknown" : u + " bytes usable";
    }
}
