package dev.lattice.provider.chronicle;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Scheduler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * The open read channels of run files (docs/providers/chronicle.md "Runs"), so a block read is one {@code pread}
 * instead of open, size, read and close. Bounded in count (file descriptors, {@link #MAX_OPEN}) and closed after
 * {@link #IDLE} without a read, so a deleted run's disk space is given back soon even when another process
 * (a read-only follower) deleted it; a channel is closed at once when this process deletes its run or drops its log.
 * A reader that finds its channel closed under it (evicted meanwhile) asks again.
 *
 * <p>Thread-safe.
 */
final class RunChannels implements AutoCloseable {

    /** Most run files kept open at once. */
    static final int MAX_OPEN = 512;
    /** A channel not read for this long is closed. */
    static final Duration IDLE = Duration.ofSeconds(10);

    /**
     * An open run file.
     *
     * @param channel the channel, positional reads only
     * @param fileBytes the file's size in bytes (runs are immutable)
     */
    record Open(FileChannel channel, long fileBytes) {
    }

    private final Cache<Path, Open> open = Caffeine.newBuilder()
            .maximumSize(MAX_OPEN)
            .expireAfterAccess(IDLE)
            .scheduler(Scheduler.systemScheduler())
            .executor(Runnable::run)
            .removalListener((Path p, Open o, RemovalCause c) -> closeQuietly(o))
            .build();

    /**
     * The open channel of a run file, opening it on first use.
     *
     * @param file the run file
     * @return its channel and size
     * @throws IOException if it cannot be opened ({@link java.nio.file.NoSuchFileException} when it does not exist)
     */
    Open get(Path file) throws IOException {
        try {
            return open.get(file, p -> {
                try {
                    FileChannel ch = FileChannel.open(p, StandardOpenOption.READ);
                    try {
                        return new Open(ch, ch.size());
                    } catch (IOException e) {
                        ch.close();
                        throw e;
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Forgets a channel that was found closed (evicted, or closed by an interrupted reader), if it is still the one
     * cached.
     *
     * @param file the run file
     * @param stale the channel found closed
     */
    void forget(Path file, Open stale) {
        open.asMap().remove(file, stale);
    }

    /**
     * Closes the channel of a file (its run was deleted).
     *
     * @param file the run file
     */
    void close(Path file) {
        open.invalidate(file);
    }

    /**
     * Closes every channel of files under a directory (its log was dropped).
     *
     * @param dir the directory
     */
    void closeUnder(Path dir) {
        open.asMap().keySet().removeIf(p -> p.startsWith(dir));
    }

    /** Closes every channel. */
    @Override
    public void close() {
        open.invalidateAll();
        open.cleanUp();
    }

    private static void closeQuietly(Open o) {
        if (o != null) {
            try {
                o.channel().close();
            } catch (IOException ignored) {
                // a read channel has nothing to flush
            }
        }
    }
}
