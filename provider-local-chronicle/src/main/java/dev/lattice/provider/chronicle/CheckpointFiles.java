package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.VerifyingChunkStream;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.TreeMap;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * Checkpoint files: {@code checkpoint-<throughOffset>.ckpt} in a log's {@code checkpoints} directory.
 *
 * <pre>
 * header (48 bytes): int magic "LCK1", int version 1, long throughOffset, int formatVersion, int 0, long epoch,
 *                    long sizeBytes, int 0, int CRC32C of bytes 0..43
 * data:              sizeBytes bytes, verbatim
 * footer (16 bytes): int magic "LCKE", int CRC32C of the data, long sizeBytes
 * </pre>
 *
 * A checkpoint is written to a temporary name, forced, then atomically renamed to its final name and the directory
 * forced, so a crash leaves the previous checkpoint or the new one, never a partial one (a temporary leftover is
 * deleted when the log is next opened). Stateless and thread-safe.
 */
final class CheckpointFiles {

    static final String PREFIX = "checkpoint-";
    static final String SUFFIX = ".ckpt";
    static final int HEADER_BYTES = 48;
    static final int FOOTER_BYTES = 16;
    private static final int MAGIC = 0x4C434B31;
    private static final int FOOTER_MAGIC = 0x4C434B45;
    private static final int VERSION = 1;
    /** Bytes per chunk handed to {@link VerifyingChunkStream}. */
    private static final int READ_CHUNK_BYTES = 64 * 1024;

    private CheckpointFiles() {
    }

    /** @return the final file name of a checkpoint through an offset */
    static Path fileFor(Path dir, long throughOffset) {
        return dir.resolve(PREFIX + throughOffset + SUFFIX);
    }

    /**
     * Lists a directory's checkpoint files by through-offset (temporary files are ignored).
     *
     * @param log the log, for errors
     * @param dir the checkpoints directory (may be missing)
     * @return through-offset to file, ascending
     * @throws WalStorageException if the directory cannot be listed
     */
    static TreeMap<Long, Path> list(LogId log, Path dir) {
        TreeMap<Long, Path> out = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.startsWith(PREFIX) && n.endsWith(SUFFIX)) {
                    try {
                        out.put(Long.parseLong(n.substring(PREFIX.length(), n.length() - SUFFIX.length())), p);
                    } catch (NumberFormatException ignored) {
                        // not ours
                    }
                }
            }
        } catch (IOException e) {
            throw new WalStorageException(log, "cannot list checkpoints in " + dir, e);
        }
        return out;
    }

    /**
     * Writes a checkpoint to a temporary file next to its final name, forced to disk.
     *
     * @param log the log
     * @param dir the checkpoints directory (existing)
     * @param throughOffset the through-offset
     * @param formatVersion the engine's format version
     * @param epoch the publisher's epoch
     * @param data the bytes; read to the end, not closed
     * @param limit the largest allowed size, in bytes
     * @return the temporary file and the description
     * @throws CheckpointTooLargeException if {@code data} is longer than {@code limit} (the temporary file is gone)
     * @throws dev.lattice.spi.ProviderUnavailableException if the disk is full (the temporary file is gone)
     * @throws WalStorageException if reading {@code data} or writing fails (the temporary file is gone)
     */
    static Written writeTemp(LogId log, Path dir, long throughOffset, int formatVersion, long epoch, InputStream data,
                             long limit) {
        Path tmp = dir.resolve(PREFIX + throughOffset + SUFFIX + "." + UUID.randomUUID() + SmallFiles.TMP_SUFFIX);
        boolean ok = false;
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.position(HEADER_BYTES);
            CRC32C crc = new CRC32C();
            byte[] chunk = new byte[64 * 1024];
            long size = 0;
            int n;
            while (true) {
                try {
                    n = data.read(chunk);
                } catch (IOException e) {
                    throw new WalStorageException(log, "reading the checkpoint stream failed; nothing was published",
                            e);
                }
                if (n < 0) {
                    break;
                }
                if (size + n > limit) {
                    throw new CheckpointTooLargeException(log, limit);
                }
                crc.update(chunk, 0, n);
                writeFully(ch, ByteBuffer.wrap(chunk, 0, n));
                size += n;
            }
            ByteBuffer footer = ByteBuffer.allocate(FOOTER_BYTES);
            footer.putInt(FOOTER_MAGIC).putInt((int) crc.getValue()).putLong(size).flip();
            writeFully(ch, footer);
            ch.position(0);
            writeFully(ch, header(throughOffset, formatVersion, epoch, size));
            ch.force(true);
            ok = true;
            return new Written(tmp, new CheckpointInfo(throughOffset, formatVersion, size, epoch));
        } catch (IOException e) {
            throw StorageErrors.io(log, dir, "cannot write checkpoint file " + tmp + " (the previous checkpoint "
                    + "stays the latest)", e);
        } finally {
            if (!ok) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // deleted on the next open of the log
                }
            }
        }
    }

    /**
     * A checkpoint written to a temporary file, not yet published.
     *
     * @param tmp the temporary file
     * @param info its description
     */
    record Written(Path tmp, CheckpointInfo info) {
    }

    private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    private static ByteBuffer header(long throughOffset, int formatVersion, long epoch, long size) {
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
        h.putInt(MAGIC).putInt(VERSION).putLong(throughOffset).putInt(formatVersion).putInt(0).putLong(epoch)
                .putLong(size).putInt(0);
        CRC32C crc = new CRC32C();
        crc.update(h.array(), 0, HEADER_BYTES - 4);
        h.putInt((int) crc.getValue());
        return h.flip();
    }

    /**
     * Reads and checks a checkpoint file's header and length.
     *
     * @param log the log
     * @param file the file
     * @param throughOffset the through-offset its name claims
     * @return its description
     * @throws CorruptLogException if the header fails its checksum, disagrees with the name, or the file has the
     *     wrong length
     * @throws WalStorageException if the file cannot be read (e.g. deleted meanwhile)
     */
    static CheckpointInfo readInfo(LogId log, Path file, long throughOffset) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
            while (h.hasRemaining() && ch.read(h) >= 0) {
                // fill
            }
            CRC32C crc = new CRC32C();
            crc.update(h.array(), 0, HEADER_BYTES - 4);
            if (h.position() < HEADER_BYTES || h.getInt(0) != MAGIC || h.getInt(4) != VERSION
                    || h.getInt(HEADER_BYTES - 4) != (int) crc.getValue()) {
                throw new CorruptLogException(log, throughOffset, "checkpoint file " + file
                        + " has a damaged header");
            }
            long through = h.getLong(8);
            int format = h.getInt(16);
            long epoch = h.getLong(24);
            long size = h.getLong(32);
            if (through != throughOffset || size < 0 || format < 0 || epoch < 1
                    || ch.size() != HEADER_BYTES + size + FOOTER_BYTES) {
                throw new CorruptLogException(log, throughOffset, "checkpoint file " + file
                        + " disagrees with its header (length " + ch.size() + ", header size " + size + ")");
            }
            return new CheckpointInfo(through, format, size, epoch);
        } catch (NoSuchFileException e) {
            throw new WalStorageException(log, "checkpoint through " + throughOffset + " no longer exists", e);
        } catch (IOException e) {
            throw new WalStorageException(log, "cannot read checkpoint file " + file, e);
        }
    }

    /**
     * Opens a checkpoint's data as a stream that checks the CRC32C of the whole data on the first read, before it
     * hands out any byte, and throws {@link CorruptLogException} from {@code read} when it fails.
     *
     * @param log the log
     * @param file the file, already checked with {@link #readInfo}
     * @param info its description
     * @return the stream; the caller closes it
     * @throws WalStorageException if the file cannot be opened
     */
    static InputStream open(LogId log, Path file, CheckpointInfo info) {
        FileChannel ch;
        try {
            ch = FileChannel.open(file, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw new WalStorageException(log, "checkpoint through " + info.throughOffset() + " no longer exists", e);
        } catch (IOException e) {
            throw new WalStorageException(log, "cannot open checkpoint file " + file, e);
        }
        FileChunks chunks = new FileChunks(log, ch, info);
        int count = (int) Math.max(1, (info.sizeBytes() + READ_CHUNK_BYTES - 1) / READ_CHUNK_BYTES);
        return new FilterInputStream(VerifyingChunkStream.checkpoint(log, info, count, chunks)) {
            @Override
            public void close() throws IOException {
                try {
                    super.close();
                } finally {
                    ch.close();
                }
            }
        };
    }

    /**
     * The chunks of a checkpoint file's data for {@link VerifyingChunkStream}, read with positional reads. Before the
     * first chunk is handed out the whole file is checked (data CRC32C and footer), so a reader never sees bytes of a
     * damaged checkpoint. Not thread-safe.
     */
    private static final class FileChunks implements VerifyingChunkStream.ChunkSource {
        private final LogId log;
        private final FileChannel ch;
        private final CheckpointInfo info;
        private boolean verified;

        FileChunks(LogId log, FileChannel ch, CheckpointInfo info) {
            this.log = log;
            this.ch = ch;
            this.info = info;
        }

        @Override
        public byte[] chunk(int index) throws IOException {
            if (!verified) {
                verify();
                verified = true;
            }
            long start = (long) index * READ_CHUNK_BYTES;
            int n = (int) Math.max(0, Math.min(READ_CHUNK_BYTES, info.sizeBytes() - start));
            ByteBuffer b = ByteBuffer.allocate(n);
            while (b.hasRemaining()) {
                if (ch.read(b, HEADER_BYTES + start + b.position()) < 0) {
                    throw corrupt("file is shorter than its header says");
                }
            }
            return b.array();
        }

        private void verify() throws IOException {
            CRC32C crc = new CRC32C();
            ByteBuffer b = ByteBuffer.allocate(READ_CHUNK_BYTES);
            long pos = HEADER_BYTES;
            long left = info.sizeBytes();
            while (left > 0) {
                b.clear();
                if (left < b.capacity()) {
                    b.limit((int) left);
                }
                int n = ch.read(b, pos);
                if (n < 0) {
                    throw corrupt("file is shorter than its header says");
                }
                crc.update(b.array(), 0, n);
                pos += n;
                left -= n;
            }
            ByteBuffer f = ByteBuffer.allocate(FOOTER_BYTES);
            while (f.hasRemaining()) {
                if (ch.read(f, pos + f.position()) < 0) {
                    throw corrupt("footer is missing");
                }
            }
            if (f.getInt(0) != FOOTER_MAGIC || f.getLong(8) != info.sizeBytes()) {
                throw corrupt("footer is damaged");
            }
            if (f.getInt(4) != (int) crc.getValue()) {
                throw corrupt("data fails its CRC32C checksum");
            }
        }

        private CorruptLogException corrupt(String what) {
            return new CorruptLogException(log, info.throughOffset(), "checkpoint through " + info.throughOffset()
                    + ": " + what);
        }
    }
}
