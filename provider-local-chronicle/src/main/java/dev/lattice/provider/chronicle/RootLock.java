package dev.lattice.provider.chronicle;

import dev.lattice.spi.WalStorageException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The exclusive lock a provider instance holds on its root directory for its whole life: an OS file lock on
 * {@code <root>/lattice.lock} (released by the OS when the process dies), plus a JVM-wide registry, because two
 * channels of one process on one file share POSIX locks (closing either would drop both). The lock file holds the
 * owner's process id, for the error message a contender gets. Thread-safe.
 */
final class RootLock implements AutoCloseable {

    /** Name of the lock file in the root directory. */
    static final String LOCK_FILE = "lattice.lock";

    private static final Set<Path> HELD_IN_THIS_JVM = ConcurrentHashMap.newKeySet();

    private final Path root;
    private final FileChannel channel;
    private final FileLock lock;
    private boolean released;

    private RootLock(Path root, FileChannel channel, FileLock lock) {
        this.root = root;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Takes the lock.
     *
     * @param root the root directory, existing; its real path is locked
     * @return the held lock
     * @throws DirectoryLockedException if another provider instance (this JVM or another process) holds it
     * @throws WalStorageException if the lock file cannot be created or locked for another reason
     */
    static RootLock acquire(Path root) {
        Path real;
        try {
            real = root.toRealPath();
        } catch (IOException e) {
            throw new WalStorageException(null, "cannot resolve the chronicle directory " + root, e);
        }
        Path lockFile = real.resolve(LOCK_FILE);
        if (!HELD_IN_THIS_JVM.add(real)) {
            throw new DirectoryLockedException(lockFile, "another provider instance in this JVM", null);
        }
        FileChannel ch = null;
        try {
            ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                throw new DirectoryLockedException(lockFile, "another provider instance in this JVM", e);
            }
            if (lock == null) {
                String holder = readHolder(ch);
                throw new DirectoryLockedException(lockFile, "another process"
                        + (holder.isEmpty() ? "" : " (" + holder + ")"), null);
            }
            ch.truncate(0);
            ch.write(ByteBuffer.wrap(("pid " + ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)),
                    0);
            return new RootLock(real, ch, lock);
        } catch (IOException e) {
            closeQuietly(ch);
            HELD_IN_THIS_JVM.remove(real);
            throw new WalStorageException(null, "cannot lock the chronicle directory " + real + " (lock file "
                    + lockFile + ")", e);
        } catch (RuntimeException e) {
            closeQuietly(ch);
            HELD_IN_THIS_JVM.remove(real);
            throw e;
        }
    }

    private static String readHolder(FileChannel ch) {
        try {
            ByteBuffer b = ByteBuffer.allocate(64);
            int n = ch.read(b, 0);
            return n <= 0 ? "" : new String(b.array(), 0, n, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "";
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing more to release
            }
        }
    }

    /** @return the locked root directory (its real path) */
    Path root() {
        return root;
    }

    /** Releases the lock. Idempotent. */
    @Override
    public synchronized void close() {
        if (released) {
            return;
        }
        released = true;
        try {
            lock.release();
        } catch (IOException ignored) {
            // closing the channel below releases it too
        }
        closeQuietly(channel);
        HELD_IN_THIS_JVM.remove(root);
    }
}
