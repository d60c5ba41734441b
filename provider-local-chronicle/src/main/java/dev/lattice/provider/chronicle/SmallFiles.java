package dev.lattice.provider.chronicle;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Durable small files: the epoch file and the trim file of a log. A record is a magic number, a count, that many
 * {@code long}s and a CRC32C of everything before it, written to a temporary name, forced to disk, atomically
 * renamed over the target, and the directory forced, so a reader sees the old record or the new one, never a mix.
 * Stateless and thread-safe (callers serialise writes to one file).
 */
final class SmallFiles {

    /** Suffix of the temporary file an atomic write goes through; leftovers of a crash are deleted on load. */
    static final String TMP_SUFFIX = ".tmp";

    private SmallFiles() {
    }

    /**
     * Writes a record atomically and durably (fsync of the file and of its directory).
     *
     * @param log the log, for errors
     * @param target the file to replace
     * @param magic the record type's magic number
     * @param values the values
     * @throws dev.lattice.spi.ProviderUnavailableException if the disk is full (the old record stays in place)
     * @throws WalStorageException if any other I/O step fails (the old record stays in place)
     */
    static void writeRecord(LogId log, Path target, int magic, long... values) {
        ByteBuffer buf = ByteBuffer.allocate(8 + 8 * values.length + 4);
        buf.putInt(magic).putInt(values.length);
        for (long v : values) {
            buf.putLong(v);
        }
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        writeAtomically(log, target, buf.array());
    }

    /**
     * Reads a record written by {@link #writeRecord}.
     *
     * @param log the log, for errors
     * @param file the file
     * @param magic the expected magic number
     * @param count the expected number of values
     * @return the values, or null when the file does not exist
     * @throws CorruptLogException if the file is not a valid record of that type
     * @throws WalStorageException if reading fails
     */
    static long[] readRecord(LogId log, Path file, int magic, int count) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new WalStorageException(log, "cannot read " + file, e);
        }
        if (bytes.length != 8 + 8 * count + 4) {
            throw new CorruptLogException(log, -1, "file " + file + " has " + bytes.length + " bytes, expected "
                    + (8 + 8 * count + 4));
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        if (buf.getInt(bytes.length - 4) != (int) crc.getValue()) {
            throw new CorruptLogException(log, -1, "file " + file + " fails its CRC32C checksum");
        }
        if (buf.getInt() != magic || buf.getInt() != count) {
            throw new CorruptLogException(log, -1, "file " + file + " has an unexpected header");
        }
        long[] out = new long[count];
        for (int i = 0; i < count; i++) {
            out[i] = buf.getLong();
        }
        return out;
    }

    /**
     * Replaces a file's content atomically and durably: temp file, force, atomic rename, force of the directory.
     *
     * @param log the log, for errors (may be null)
     * @param target the file to replace
     * @param content the new content
     * @throws dev.lattice.spi.ProviderUnavailableException if the disk is full (the old content stays in place)
     * @throws WalStorageException if any other step fails (the old content stays in place)
     */
    static void writeAtomically(LogId log, Path target, byte[] content) {
        Path tmp = target.resolveSibling(target.getFileName() + TMP_SUFFIX);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer b = ByteBuffer.wrap(content);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            moveAtomically(tmp, target);
            forceDirectory(target.getParent());
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp); // give the space back; the old record is untouched
            } catch (IOException ignored) {
                // deleted on the next load of the log
            }
            throw StorageErrors.io(log, target.getParent(), "cannot write " + target + " durably (the previous "
                    + "record stays in place)", e);
        }
    }

    /**
     * Renames a file over another atomically.
     *
     * @param from the source
     * @param to the target, replaced if it exists
     * @throws IOException if the file system cannot do it atomically or the rename fails
     */
    static void moveAtomically(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("the file system cannot rename " + from + " atomically", e);
        }
    }

    /**
     * Forces a directory's entries to disk (fsync on the directory), so a created, renamed or deleted entry
     * survives an OS crash.
     *
     * @param dir the directory
     * @throws IOException if the directory cannot be opened or forced
     */
    static void forceDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /**
     * Deletes the temporary leftovers ({@code *.tmp}) of crashed atomic writes in a directory; best effort.
     *
     * @param dir the directory (may be missing)
     */
    static void deleteTempFiles(Path dir) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + SmallFiles.TMP_SUFFIX)) {
            for (Path p : ds) {
                Files.deleteIfExists(p);
            }
        } catch (IOException ignored) {
            // harmless: a leftover temp file is never read
        }
    }
}
