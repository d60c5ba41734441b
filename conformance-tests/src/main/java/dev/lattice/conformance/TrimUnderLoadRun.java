package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static dev.lattice.conformance.WalTestSupport.batch;

/**
 * One writer and one trimmer on one log, same fence, same provider instance: the writer stages and commits small
 * batches without pause; the trimmer repeatedly trims through the tail the writer last committed. Used by the
 * suite's {@code TrimUnderLoad} group; public so that a provider's own tests can run it and check the provider's
 * internals (e.g. request counters) around it.
 *
 * <p>The two threads are coupled by progress, never by time: a trim starts once the writer has committed at least
 * {@value #MIN_BATCHES_BETWEEN_TRIMS} batches since the previous trim's target (so every trim overlaps commits), and
 * the writer waits only while it is {@value #MAX_BATCHES_AHEAD} batches beyond the last trim that completed (so
 * the retained range has a bound, {@link #MAX_RETAINED_RANGE}, that a provider honouring its trims always meets,
 * and a fast local writer cannot fill the memory while the trimmer thread is not scheduled). Every
 * wait is bounded by a hang guard, which only turns a deadlock into a failure.
 *
 * <p>Checked during the run, after each trim: the trim returned within {@value #MAX_ATTEMPTS_PER_TRIM} call(s)
 * (only {@link ProviderUnavailableException} is retried, up to that bound; anything else fails the run); {@code
 * state} then shows a watermark at or above the target, {@code lowestOffset = watermark + 1}, {@code
 * retainedEntries = tail - watermark} (the retained range is dense) and a retained range within
 * {@link #MAX_RETAINED_RANGE}. The caller checks the log's entries afterwards with {@link Result#retained()}.
 *
 * <p>Not thread-safe: {@link #run()} once per instance; it starts and stops its own two threads.
 */
public final class TrimUnderLoadRun {

    /** Trims per run. */
    public static final int TRIMS = 12;
    /** Entries per appended batch. */
    public static final int ENTRIES_PER_BATCH = 5;
    /** Batches the writer commits at least between two trims. */
    public static final int MIN_BATCHES_BETWEEN_TRIMS = 2;
    /**
     * Batches the writer may be beyond the target of the last completed trim before it waits: far more than a
     * working trim lets pass on a remote provider (a trim costs a few requests, an append two), so a trim that keeps
     * losing to commits runs out of attempts long before the writer would slow down for it; on a local provider,
     * whose writer outruns any thread scheduling, it bounds the run's memory.
     */
    public static final int MAX_BATCHES_AHEAD = 200;
    /**
     * Calls per trim at most: 1, every trim call must succeed at once. A {@link ProviderUnavailableException} from a
     * trim fails the run: the suite runs against a healthy backend, where the writer's calls are not retried either,
     * so such an exception under write load means the trim lost to commits (a livelock, as the DynamoDB provider had
     * until commit 832d22b: "the head changed under 16 trim attempts in a row"). Raise it only with a reason.
     */
    public static final int MAX_ATTEMPTS_PER_TRIM = 1;
    /** Largest {@code committedTail - trimWatermark} allowed right after a trim, in entries. */
    public static final long MAX_RETAINED_RANGE = (long) MAX_BATCHES_AHEAD * ENTRIES_PER_BATCH;

    /**
     * What a run did.
     *
     * @param trims trims that completed
     * @param attempts trim calls made (a retried trim counts each call)
     * @param maxAttempts most calls one trim needed
     * @param maxRetainedRange largest {@code committedTail - trimWatermark} seen right after a trim, in entries
     * @param batches batches the writer committed
     * @param writerWaits times the writer waited because it was {@value #MAX_BATCHES_AHEAD} batches ahead
     * @param lastWatermark the watermark of the last trim
     * @param retained the committed batches holding offsets above {@code lastWatermark} (the first one may
     *     straddle it)
     * @param millis wall-clock duration of the run, in ms
     */
    public record Result(int trims, int attempts, int maxAttempts, long maxRetainedRange, int batches, int writerWaits,
                  long lastWatermark, List<EncodedBatch> retained, long millis) {

        @Override
        public String toString() {
            return trims + " trims, " + attempts + " trim calls (at most " + maxAttempts + " per trim), max retained "
                    + "range " + maxRetainedRange + " entries, " + batches + " batches of " + ENTRIES_PER_BATCH
                    + " entries appended (the writer waited " + writerWaits + " times for a trim), " + millis + " ms";
        }
    }

    private final WalStorageProvider provider;
    private final LogId log;
    private final Fence fence;
    private final long seed;
    private final long hangGuardMillis;
    private final Object progress = new Object();
    /** Guarded by {@link #progress}. */
    private final List<EncodedBatch> committed = new ArrayList<>();
    /** Batches committed when the last completed trim took its target; guarded by {@link #progress}. */
    private int batchesAtLastTrim;
    /** Guarded by {@link #progress}. */
    private boolean stop;
    /** Guarded by {@link #progress}. */
    private int writerWaits;

    /**
     * @param provider the provider under test
     * @param fence the writer's fence (claimed and reconciled, log empty)
     * @param seed payload seed
     * @param hangGuardSeconds bound on every wait for the other thread, in seconds
     */
    public TrimUnderLoadRun(WalStorageProvider provider, Fence fence, long seed, long hangGuardSeconds) {
        this.provider = provider;
        this.log = fence.log();
        this.fence = fence;
        this.seed = seed;
        this.hangGuardMillis = TimeUnit.SECONDS.toMillis(hangGuardSeconds);
    }

    /**
     * Runs the writer and the trimmer to completion.
     *
     * @return what they did
     * @throws Exception the first failure of either thread (an {@link AssertionError} for a broken check)
     */
    public Result run() throws Exception {
        long started = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> writer = pool.submit(() -> {
                try {
                    write();
                } finally {
                    halt();
                }
                return null;
            });
            Future<Result> trimmer = pool.submit(() -> {
                try {
                    return trimRepeatedly();
                } finally {
                    halt();
                }
            });
            Result partial = trimmer.get(hangGuardMillis, TimeUnit.MILLISECONDS);
            writer.get(hangGuardMillis, TimeUnit.MILLISECONDS);
            List<EncodedBatch> retained = new ArrayList<>();
            int batches;
            int waits;
            synchronized (progress) {
                batches = committed.size();
                waits = writerWaits;
                for (EncodedBatch b : committed) {
                    if (b.lastOffset() > partial.lastWatermark()) {
                        retained.add(b);
                    }
                }
            }
            return new Result(partial.trims(), partial.attempts(), partial.maxAttempts(), partial.maxRetainedRange(),
                    batches, waits, partial.lastWatermark(), retained,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            throw (Error) cause;
        } finally {
            halt();
            pool.shutdownNow();
            if (!pool.awaitTermination(hangGuardMillis, TimeUnit.MILLISECONDS)) {
                throw new AssertionError("the writer or the trimmer did not stop");
            }
        }
    }

    private void halt() {
        synchronized (progress) {
            stop = true;
            progress.notifyAll();
        }
    }

    private void write() throws InterruptedException, TimeoutException {
        long next = provider.state(log).nextOffset();
        for (int i = 0; ; i++) {
            synchronized (progress) {
                long deadline = System.currentTimeMillis() + hangGuardMillis;
                if (!stop && committed.size() - batchesAtLastTrim >= MAX_BATCHES_AHEAD) {
                    writerWaits++;
                }
                while (!stop && committed.size() - batchesAtLastTrim >= MAX_BATCHES_AHEAD) {
                    waitUntil(deadline, "the writer waited for a trim");
                }
                if (stop) {
                    return;
                }
            }
            EncodedBatch b = batch(seed, next, ENTRIES_PER_BATCH, 16 + i % 32);
            provider.stage(log, fence, b);
            provider.commit(log, fence, b.lastOffset());
            next = b.lastOffset() + 1;
            synchronized (progress) {
                committed.add(b);
                progress.notifyAll();
            }
        }
    }

    /** @return the trim figures; batches, retained and millis are filled in by {@link #run()} */
    private Result trimRepeatedly() throws InterruptedException, TimeoutException {
        int attempts = 0;
        int maxAttempts = 0;
        long maxRange = 0;
        long target = -1;
        for (int t = 0; t < TRIMS; t++) {
            int batchesAtTarget;
            synchronized (progress) {
                long deadline = System.currentTimeMillis() + hangGuardMillis;
                while (!stop && committed.size() < batchesAtLastTrim + MIN_BATCHES_BETWEEN_TRIMS) {
                    waitUntil(deadline, "the trimmer waited for commits");
                }
                if (stop) {
                    throw new AssertionError("the writer stopped before trim #" + t);
                }
                batchesAtTarget = committed.size();
                target = committed.get(batchesAtTarget - 1).lastOffset();
            }
            int calls = 0;
            while (true) {
                calls++;
                try {
                    provider.trim(log, fence, target);
                    break;
                } catch (ProviderUnavailableException e) {
                    if (calls >= MAX_ATTEMPTS_PER_TRIM) {
                        throw new AssertionError("trim #" + t + " through " + target + " threw "
                                + "ProviderUnavailableException on call " + calls + " of at most "
                                + MAX_ATTEMPTS_PER_TRIM + " while the log was written: it lost to commits", e);
                    }
                }
            }
            attempts += calls;
            maxAttempts = Math.max(maxAttempts, calls);
            synchronized (progress) {
                batchesAtLastTrim = batchesAtTarget;
                progress.notifyAll();
            }
            LogState s = provider.state(log);
            long range = s.committedTail() - s.trimWatermark();
            if (s.trimWatermark() < target) {
                throw new AssertionError("trim #" + t + " through " + target + " returned, but the watermark is "
                        + s.trimWatermark() + " (" + s + ")");
            }
            if (s.lowestOffset() != s.trimWatermark() + 1 || s.retainedEntries() != range) {
                throw new AssertionError("after trim #" + t + " through " + target + " the state is not dense: "
                        + s + " (expected lowestOffset = watermark + 1 and retainedEntries = tail - watermark)");
            }
            if (range > MAX_RETAINED_RANGE) {
                throw new AssertionError("after trim #" + t + " through " + target + " the log retains " + range
                        + " entries, more than " + MAX_RETAINED_RANGE + " (" + s + ")");
            }
            maxRange = Math.max(maxRange, range);
        }
        return new Result(TRIMS, attempts, maxAttempts, maxRange, 0, 0, target, List.of(), 0);
    }

    /** Waits on {@link #progress} (held by the caller) until notified or the deadline passes. */
    private void waitUntil(long deadline, String what) throws InterruptedException, TimeoutException {
        long left = deadline - System.currentTimeMillis();
        if (left <= 0) {
            throw new TimeoutException(what + " longer than " + hangGuardMillis + " ms");
        }
        progress.wait(left);
    }
}
