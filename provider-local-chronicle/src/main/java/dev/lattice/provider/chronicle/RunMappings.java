package dev.lattice.provider.chronicle;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Scheduler;

import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The memory mappings of run files (docs/providers/chronicle.md "Runs"), so a block read is a copy from the page
 * cache that takes no lock: no open, size and close per read, and none of the monitor a {@link FileChannel}'s
 * positional read enters on every call (64 readers on one channel waited ~345 ms each on it, docs/benchmarks.md
 * "B at 64 threads at a larger scale"). Runs are immutable and never truncated, so a mapping stays valid until it
 * is released. The file's descriptor is closed once it is mapped.
 *
 * <p>Bounded in count ({@link #MAX_OPEN} mappings) and released after {@link #IDLE} without a read, so a deleted
 * run's disk space is given back soon even when another process (a read-only follower) deleted it; a mapping is
 * released at once when this process deletes its run or drops its log. A released mapping is unmapped when its last
 * reader ends ({@link Mapped#acquire}/{@link Mapped#release} count them), never under a reader.
 *
 * <p>Thread-safe.
 */
final class RunMappings implements AutoCloseable {

    /** Most run files kept mapped at once. */
    static final int MAX_OPEN = 512;
    /** A mapping not read for this long is released. */
    static final Duration IDLE = Duration.ofSeconds(10);

    /** How often a mapping in steady use refreshes its recency in the cache (a lookup that does is not free). */
    static final long TOUCH_NANOS = 1_000_000_000L;

    /**
     * A mapped run file: the whole file (header included) read-only, its size in bytes, and the count of its
     * readers. Reads use absolute gets only, so the one buffer is shared by every thread.
     */
    static final class Mapped {
        /** Set in {@link #readers} once released; the low bits count the readers in progress. */
        private static final int RELEASED = 1 << 30;

        private final MappedByteBuffer buffer;
        private final long fileBytes;
        private final AtomicInteger readers = new AtomicInteger();
        /** When this mapping last refreshed its recency ({@link System#nanoTime}). */
        private volatile long touched = System.nanoTime();

        Mapped(MappedByteBuffer buffer, long fileBytes) {
            this.buffer = buffer;
            this.fileBytes = fileBytes;
        }

        /** @return the file's size in bytes */
        long fileBytes() {
            return fileBytes;
        }

        /**
         * Copies bytes of the file; only between a successful {@link #acquire} and its {@link #release}.
         *
         * @param filePosition offset in the file, in bytes (header included)
         * @param dst where to copy
         * @param off offset in {@code dst}
         * @param len bytes to copy, all within the file
         */
        void copy(long filePosition, byte[] dst, int off, int len) {
            buffer.get((int) filePosition, dst, off, len);
        }

        /** @return true if this mapping may be read until {@link #release}; false once it was released */
        boolean acquire() {
            for (;;) {
                int r = readers.get();
                if ((r & RELEASED) != 0) {
                    return false;
                }
                if (readers.compareAndSet(r, r + 1)) {
                    return true;
                }
            }
        }

        /** Ends a read begun by a successful {@link #acquire}; the last reader of a released mapping unmaps it. */
        void release() {
            if (readers.decrementAndGet() == RELEASED) {
                Unmapper.unmap(buffer);
            }
        }

        /** Releases this mapping: unmapped now if no read is in progress, else when the last one ends. */
        void retire() {
            int before = readers.getAndUpdate(r -> r | RELEASED);
            if (before == 0) {
                Unmapper.unmap(buffer);
            }
        }

        /** @return true once released (test hook) */
        boolean released() {
            return (readers.get() & RELEASED) != 0;
        }
    }

    /**
     * Names a run file without building its path (a path costs a format and three resolves per read).
     */
    static final class RunFile {
        private final LogId log;
        private final RunId id;
        private final int hash;

        /**
         * Names the file of run {@code id} of {@code log}.
         *
         * @param log the run's log
         * @param id the run
         */
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
    private final Cache<RunFile, Mapped> open = Caffeine.newBuilder()
            .maximumSize(MAX_OPEN)
            .expireAfterAccess(IDLE)
            .scheduler(Scheduler.systemScheduler())
            .executor(Runnable::run)
            .removalListener((RunFile f, Mapped m, RemovalCause c) -> {
                if (m != null) {
                    m.retire();
                }
            })
            .build();

    /**
     * @param paths the path of a run file
     */
    RunMappings(Function<RunFile, Path> paths) {
        this.paths = paths;
    }

    /**
     * Acquires the mapping of a run file for one read, mapping the file on first use. The caller reads it and then
     * calls {@link Mapped#release} exactly once. A mapping this call creates is acquired before it is cached, so an
     * eviction racing the miss cannot take it from under the read; a cached mapping found released is forgotten and
     * the file asked for again, so the loop ends at the latest when this thread maps the file itself.
     *
     * @param file the run file
     * @return its mapping, acquired
     * @throws IOException if it cannot be opened or mapped ({@link java.nio.file.NoSuchFileException} when it does
     *                     not exist)
     */
    Mapped acquire(RunFile file) throws IOException {
        for (;;) {
            Mapped m = open.policy().getIfPresentQuietly(file); // a map read: no recency or expiry bookkeeping
            if (m != null) {
                long now = System.nanoTime();
                if (now - m.touched > TOUCH_NANOS) { // at most once a second, far inside IDLE
                    m.touched = now;
                    open.getIfPresent(file);
                }
            } else {
                Mapped[] created = new Mapped[1];
                try {
                    m = open.get(file, f -> created[0] = map(f));
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
                // Caffeine evicts when its maintenance wins a try-lock, so concurrent misses can leave it over the
                // bound; a miss (already an open and a map) waits for the eviction, so MAX_OPEN holds once it ends.
                open.cleanUp();
                if (m == created[0]) {
                    return m;
                }
            }
            if (m.acquire()) {
                return m;
            }
            open.asMap().remove(file, m); // released (evicted, or its run deleted) since it was found
        }
    }

    private Mapped map(RunFile f) {
        try (FileChannel ch = FileChannel.open(paths.apply(f), StandardOpenOption.READ)) {
            long size = ch.size();
            Mapped m = new Mapped(ch.map(FileChannel.MapMode.READ_ONLY, 0, size), size);
            m.acquire(); // for the read that maps it
            return m;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Releases the mapping of a file (its run was deleted).
     *
     * @param file the run file
     */
    void close(RunFile file) {
        open.invalidate(file);
    }

    /**
     * Releases every mapping of a log's runs (the log was dropped).
     *
     * @param log the log
     */
    void closeLog(LogId log) {
        open.asMap().keySet().removeIf(f -> f.log().equals(log));
    }

    /** Releases every mapping. */
    @Override
    public void close() {
        open.invalidateAll();
        open.cleanUp();
    }
}
