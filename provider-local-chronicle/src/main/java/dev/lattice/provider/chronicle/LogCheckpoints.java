package dev.lattice.provider.chronicle;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.WalStorageException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The published checkpoints of one log (checkpoint part of the protocol, docs/providers/chronicle.md
 * "Checkpoints"): the in-memory list of {@code checkpoints/checkpoint-<through>.ckpt} files and their bytes,
 * publishing (atomic rename), reading back, and deleting old or (at repair) too new ones. The file format is
 * {@link CheckpointFiles}'.
 *
 * <p>Not thread-safe: used under the owning {@link LogStore}'s lock.
 */
final class LogCheckpoints {

    private final LogId id;
    private final Path dir;
    private TreeMap<Long, Path> files = new TreeMap<>();
    private long bytes;

    /**
     * @param id the log
     * @param dir the log's checkpoints directory
     */
    LogCheckpoints(LogId id, Path dir) {
        this.id = id;
        this.dir = dir;
    }

    /** @return the checkpoints directory */
    Path dir() {
        return dir;
    }

    /**
     * Re-lists the checkpoint files from disk.
     *
     * @throws WalStorageException if the directory cannot be listed
     */
    void reload() {
        files = CheckpointFiles.list(id, dir);
        bytes = 0;
        for (Path p : files.values()) {
            bytes += sizeOf(p);
        }
    }

    /** @return the bytes of all checkpoint files */
    long bytes() {
        return bytes;
    }

    /**
     * Checks that a checkpoint through {@code through} is not below the latest one.
     *
     * @param through the new checkpoint's through-offset
     * @throws OffsetConflictException if it is below the latest checkpoint's
     */
    void checkOrder(long through) {
        if (!files.isEmpty() && through < files.lastKey()) {
            throw new OffsetConflictException(id, "checkpoint through " + through
                    + " is below the latest checkpoint's " + files.lastKey());
        }
    }

    /**
     * Makes a written checkpoint the latest: atomic rename over any with the same through-offset, directory forced.
     *
     * @param written the temporary file
     * @return its description
     * @throws WalStorageException if the rename or force fails
     */
    CheckpointInfo publish(CheckpointFiles.Written written) {
        long through = written.info().throughOffset();
        Path target = CheckpointFiles.fileFor(dir, through);
        long old = files.containsKey(through) ? sizeOf(target) : 0;
        try {
            SmallFiles.moveAtomically(written.tmp(), target);
            SmallFiles.forceDirectory(dir);
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot publish checkpoint " + target, e);
        }
        files.put(through, target);
        bytes += sizeOf(target) - old;
        return written.info();
    }

    /**
     * @return the latest checkpoint, empty when none
     * @throws dev.lattice.spi.CorruptLogException if its header is damaged
     */
    Optional<CheckpointInfo> latest() {
        if (files.isEmpty()) {
            return Optional.empty();
        }
        Map.Entry<Long, Path> e = files.lastEntry();
        return Optional.of(CheckpointFiles.readInfo(id, e.getValue(), e.getKey()));
    }

    /**
     * Opens a checkpoint's data.
     *
     * @param info the checkpoint, as {@link #latest} returned it
     * @return a stream that verifies the data before handing out any byte; the caller closes it
     * @throws WalStorageException if the checkpoint no longer exists or was replaced
     */
    InputStream open(CheckpointInfo info) {
        Path p = files.get(info.throughOffset());
        if (p == null) {
            throw new WalStorageException(id, "checkpoint through " + info.throughOffset() + " no longer exists");
        }
        CheckpointInfo onDisk = CheckpointFiles.readInfo(id, p, info.throughOffset());
        if (!onDisk.equals(info)) {
            throw new WalStorageException(id, "checkpoint through " + info.throughOffset()
                    + " no longer exists (replaced by " + onDisk + ")");
        }
        return CheckpointFiles.open(id, p, info);
    }

    /**
     * Deletes checkpoints through offsets below {@code throughExclusive}, always keeping the latest.
     *
     * @param throughExclusive the bound, exclusive
     * @throws WalStorageException if a delete fails
     */
    void deleteBefore(long throughExclusive) {
        if (files.isEmpty()) {
            return;
        }
        long keep = Math.min(throughExclusive, files.lastKey());
        Iterator<Map.Entry<Long, Path>> it = files.headMap(keep, false).entrySet().iterator();
        boolean deleted = false;
        try {
            while (it.hasNext()) {
                Path p = it.next().getValue();
                bytes -= sizeOf(p);
                Files.deleteIfExists(p);
                it.remove();
                deleted = true;
            }
            if (deleted) {
                SmallFiles.forceDirectory(dir);
            }
        } catch (IOException e) {
            throw new WalStorageException(id, "cannot delete old checkpoints in " + dir, e);
        }
    }

    /**
     * Deletes the checkpoint files through offsets above {@code offset} (repair; the caller reloads afterwards).
     *
     * @param offset the new committed tail
     * @return the through-offsets deleted
     * @throws WalStorageException if a delete fails
     */
    List<Long> deleteFilesAbove(long offset) {
        List<Long> dropped = new ArrayList<>(files.tailMap(offset, false).keySet());
        try {
            for (long through : dropped) {
                Files.deleteIfExists(files.get(through));
            }
            if (!dropped.isEmpty()) {
                SmallFiles.forceDirectory(dir);
            }
        } catch (IOException e) {
            throw StorageErrors.io(id, dir, "repair could not delete checkpoints above offset " + offset, e);
        }
        return dropped;
    }

    private static long sizeOf(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return 0;
        }
    }
}
