package dev.lattice.provider.chronicle;

import dev.lattice.spi.ProviderUnavailableException;

import java.nio.file.Path;

/**
 * The provider's directory is locked by another provider instance, in another process or in this JVM. Thrown when
 * opening a provider; nothing was read or written. It stays unavailable until the other instance closes (or its
 * process ends, which releases the lock).
 */
public class DirectoryLockedException extends ProviderUnavailableException {

    private static final long serialVersionUID = 1L;

    private final transient Path lockFile;

    /**
     * @param lockFile the lock file that could not be locked
     * @param holder who holds it, as far as known (e.g. "process 1234" or "another provider instance in this JVM")
     * @param cause the file system's failure, or null
     */
    public DirectoryLockedException(Path lockFile, String holder, Throwable cause) {
        super(null, "chronicle directory " + lockFile.getParent() + " is locked by " + holder + " (lock file "
                + lockFile + "); only one provider instance may use a directory at a time", cause);
        this.lockFile = lockFile;
    }

    /** @return the lock file */
    public Path lockFile() {
        return lockFile;
    }
}
