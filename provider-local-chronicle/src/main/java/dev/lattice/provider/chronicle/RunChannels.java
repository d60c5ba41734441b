package dev.lattice.provider.chronicle;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Scheduler;

import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.function.Function;

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

    /** How often a channel in steady use refreshes its recency in the cache (a lookup that does is not free). */
    static final long TOUCH_NANOS = 1_000_000_000L;

    /** An open run file: its channel (positional reads only) and its size in bytes (runs are immutable). */
    static final class Open {
        private final FileChannel channel;
        private final long fileBytes;
        /** When this channel last refreshed its recency ({@link System#nanoTime}). */
        private volatile long touched = System.nanoTime();

        Open(FileChannel channel, long fileBytes) {
            this.channel = channel;
            this.fileBytes = fileBytes;
        }

        FileChannel channel() {
            return channel;
        }

        long fileBytes() {
            return fileBytes;
        }
    }

    /**
     * Names a run file without building its path (a path costs a format and three resolves per read).
     *
     * @param log the run's log
     * @param id the run
     */
    static final class RunFile {
        private final LogId log;
        private final RunId id;
        private final int hash;

        RunFile(LogId log, RunId id) {
            this.log = log;
            this.id = id;
            this.hash = log.hashCode() * 31 + id.hashCode(); // computed once: a read looks its file up by it
        }

        LogId log() {
            return log;
        }

        RunId id() {
            return id;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof RunFile f && f.hash == hash && f.id.equals(id) && f.log.equals(log);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public String toString() {
            return log + "/" + id;
        }
    }

    private final Function<RunFile, Path> paths;
    private final Cache<RunFile, Open> open = Caffeine.newBuilder()
            .maximumSize(MAX_OPEN)
            .expireAfterAccess(IDLE)
            .scheduler(Scheduler.systemScheduler())
            .executor(Runnable::run)
            .removalListener((RunFile f, Open o, RemovalCause c) -> closeQuietly(o))
            .build();

    /**
     * @param paths the path of a run file
     */
    RunChannels(Function<RunFile, Path> paths) {
        this.paths = paths;
    }

    /**
     * The open channel of a run file, opening it on first use.
     *
     * @param file the run file
     * @return its channel and size
     * @throws IOException if it cannot be opened ({@link java.nio.file.NoSuchFileException} when it does not exist)
     */
    Open get(RunFile file) throws IOException {
        Open o = open.policy().getIfPresentQuietly(file); // a map read: no recency or expiry bookkeeping
        if (o != null) {
            long now = System.nanoTime();
            if (now - o.touched > TOUCH_NANOS) { // at most once a second, far inside IDLE
                o.touched = now;
                open.getIfPresent(file);
            }
            return o;
        }
        try {
            return open.get(file, f -> {
                try {
                    FileChannel ch = FileChannel.open(paths.apply(f), StandardOpenOption.READ);
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
    void forget(RunFile file, Open stale) {
        open.asMap().remove(file, stale);
    }

    /**
     * Closes the channel of a file (its run was deleted).
     *
     * @param file the run file
     */
    void close(RunFile file) {
        open.invalidate(file);
    }

    /**
     * Closes every channel of a log's runs (the log was dropped).
     *
     * @param log the log
     */
    void closeLog(LogId log) {
        open.asMap().keySet().removeIf(f -> f.log().equals(log));
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
