package dev.lattice.engine;

import dev.lattice.engine.feed.Change;
import dev.lattice.engine.feed.ChangeCursor;
import dev.lattice.engine.feed.ChangePosition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@link ChangeCursor} of a tree: one {@link PartitionFeed} per partition, polled round robin. Waits by
 * re-reading the logs with a short back-off (1 ms doubling to 50 ms) while nothing is new. A registered consumer's
 * cursor stores its position through {@link FeedConsumers}; an unregistered one never writes anything.
 */
final class ChangeFeedCursor implements ChangeCursor {

    private static final long MAX_BACKOFF_NANOS = 50_000_000L;

    private final String tree;
    private final PartitionFeed[] feeds;
    private final FeedConsumers consumers;
    private final String consumer;
    private volatile boolean closed;
    private int next;

    ChangeFeedCursor(String tree, PartitionFeed[] feeds, FeedConsumers consumers, String consumer) {
        this.tree = tree;
        this.feeds = feeds;
        this.consumers = consumers;
        this.consumer = consumer;
    }

    @Override
    public List<Change> poll(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        long backoff = 1_000_000L;
        while (true) {
            List<Change> out = pollOnce();
            if (!out.isEmpty()) {
                return out;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return List.of();
            }
            LockSupport.parkNanos(Math.min(left, backoff));
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new LatticeException("interrupted while waiting for changes of tree '" + tree + "'");
            }
            backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
        }
    }

    @Override
    public List<Change> next() {
        while (true) {
            List<Change> out = poll(Duration.ofSeconds(1));
            if (!out.isEmpty()) {
                return out;
            }
        }
    }

    /** One pass over the partitions, starting after the one that delivered last. */
    private List<Change> pollOnce() {
        if (closed) {
            throw new IllegalStateException("change cursor of tree '" + tree + "' is closed");
        }
        for (int i = 0; i < feeds.length; i++) {
            int p = (next + i) % feeds.length;
            List<Change> out = feeds[p].next();
            if (!out.isEmpty()) {
                next = p + 1;
                return new ArrayList<>(out);
            }
        }
        return List.of();
    }

    @Override
    public ChangePosition position() {
        long[] o = new long[feeds.length];
        for (int p = 0; p < o.length; p++) {
            o[p] = feeds[p].position();
        }
        return ChangePosition.of(o);
    }

    @Override
    public Optional<String> consumer() {
        return Optional.ofNullable(consumer);
    }

    @Override
    public void commit() {
        if (consumer == null) {
            throw new IllegalStateException("an unregistered change cursor has no stored position; open it with a "
                    + "consumer name (Tree.changes(consumer, initial)) to commit");
        }
        if (closed) {
            throw new IllegalStateException("change cursor of tree '" + tree + "' is closed");
        }
        consumers.store(tree, consumer, position());
    }

    @Override
    public void close() {
        closed = true;
    }
}
