package dev.lattice.provider.chronicle;

import dev.lattice.spi.LogId;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.UUID;

/**
 * Drop part of the protocol (docs/providers/chronicle.md "Drop"): a dropped log's directory is first renamed out of
 * {@code <root>/logs} into {@code <root>/dropped} (one atomic rename, after which the log no longer exists for any
 * call), then deleted file by file. A crash during the deletion leaves only a directory under {@code dropped}, which
 * the next drop or the next open of the provider deletes. Stateless; callers hold the log's lock.
 */
final class LogDrop {

    /** Directory under the root holding dropped logs until their files are deleted. */
    static final String DROPPED_DIR = "dropped";

    private LogDrop() {
    }

    /**
     * Moves a log's directory out of the logs directory, durably, then deletes it and any earlier leftover.
     *
     * @param log the log
     * @param root the provider's root directory
     * @param dir the log's directory
     * @throws dev.lattice.spi.WalStorageException if the rename fails (the log is unchanged) or the deletion fails
     *     (the log is gone; the leftover is deleted later)
     */
    static void drop(LogId log, Path root, Path dir) {
        Path dropped = root.resolve(DROPPED_DIR);
        try {
            Files.createDirectories(dropped);
            Path target = dropped.resolve(dir.getFileName() + "-" + UUID.randomUUID());
            SmallFiles.moveAtomically(dir, target);
            SmallFiles.forceDirectory(dir.getParent());
        } catch (IOException e) {
            throw StorageErrors.io(log, root, "cannot move the dropped log's directory " + dir + " away", e);
        }
        try {
            deleteLeftovers(root);
        } catch (IOException e) {
            throw StorageErrors.io(log, dropped, "the log is dropped but its files under " + dropped
                    + " could not all be deleted (they are deleted at the next drop or open)", e);
        }
    }

    /**
     * Deletes everything under {@code <root>/dropped}.
     *
     * @param root the provider's root directory
     * @throws IOException if a file cannot be deleted
     */
    static void deleteLeftovers(Path root) throws IOException {
        Path dropped = root.resolve(DROPPED_DIR);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dropped)) {
            for (Path p : ds) {
                deleteTree(p);
            }
        } catch (NoSuchFileException e) {
            // nothing was ever dropped
        }
    }

    private static void deleteTree(Path top) throws IOException {
        Files.walkFileTree(top, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.deleteIfExists(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
