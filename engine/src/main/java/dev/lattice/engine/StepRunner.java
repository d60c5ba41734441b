package dev.lattice.engine;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The per-thread runner of log pipeline steps (stage, commit, recovery): how a write runs on its caller's thread.
 *
 * <p>A thread takes steps only while it waits for its own blocking write ({@link #begin}, {@link #await(boolean)})
 * or while it runs a step on the engine's pool ({@link #runPooled}). Steps that the thread hands itself go to a local queue and
 * run in order once the current step returns; a step that another thread offers goes to {@link #slot} and wakes the
 * waiter: that is how the first writer of the next batch becomes its leader. A waiting writer spins briefly, then
 * yields, then parks until its write is answered or it is offered a step. A thread whose own write is answered takes
 * no further steps (the next batch is led by one of its own writers).
 *
 * <p>Thread-safety: {@link #offer} may be called from any thread; everything else only from the runner's own thread
 * ({@link #current()}).
 */
final class StepRunner {

    private static final Logger LOG = LoggerFactory.getLogger(StepRunner.class);
    /** In {@link #slot}: the runner takes no offers (not waiting, or running caller code). */
    private static final Object CLOSED = new Object();
    private static final int SPINS = 64;
    private static final int YIELDS = 8;
    private static final long PARK_NANOS = 50_000_000L;
    private static final ThreadLocal<StepRunner> CURRENT = ThreadLocal.withInitial(StepRunner::new);

    private final Thread thread = Thread.currentThread();
    /** null: open for an offer; a Runnable: an offered step; {@link #CLOSED}: no offers. */
    private final AtomicReference<Object> slot = new AtomicReference<>(CLOSED);
    private final ArrayDeque<Runnable> local = new ArrayDeque<>();
    /** The write (or writes) a blocking caller waits for; null in pool mode. Own thread only. */
    private CompletableFuture<?> waitingFor;
    /** True while the thread takes steps it hands itself. Own thread only. */
    private boolean accepting;

    private StepRunner() {
    }

    /** @return the calling thread's runner */
    static StepRunner current() {
        return CURRENT.get();
    }

    /** @return the thread this runner belongs to */
    Thread thread() {
        return thread;
    }

    /** @return the future waited for before {@link #begin} (to hand back to {@link #end}) */
    CompletableFuture<?> outerWait() {
        return waitingFor;
    }

    /** @return whether the runner accepted steps before {@link #begin} (to hand back to {@link #end}) */
    boolean outerAccepting() {
        return accepting;
    }

    /**
     * Own thread: from now on takes the steps it dispatches itself, until {@code done} completes. Call before
     * submitting the write, then {@link #await(boolean)}, then {@link #end}.
     *
     * @param takeOffers also take steps other threads offer from now on (a single write: it can be offered steps
     *     only once it is queued, after any wait for room); otherwise only from {@link #await} on
     * @return whether offers were closed before (hand it to {@link #await(boolean)})
     */
    boolean begin(CompletableFuture<?> done, boolean takeOffers) {
        waitingFor = done;
        accepting = true;
        boolean closed = slot.get() == CLOSED;
        if (takeOffers && closed) {
            slot.compareAndSet(CLOSED, null);
        }
        return closed;
    }

    /** Own thread: restores the state saved before {@link #begin} (a blocking write inside a step or callback). */
    void end(CompletableFuture<?> outer, boolean outerAccepting) {
        waitingFor = outer;
        accepting = outerAccepting;
    }

    /** Own thread: whether {@link #offerLocal} would take a step now. */
    boolean takesSteps() {
        return accepting && (waitingFor == null || !waitingFor.isDone());
    }

    /**
     * Own thread: a step for this thread to run after the current one, if it takes steps now (waiting for a write
     * that is not answered yet, or running a pooled step).
     *
     * @return false if the thread does not take it (the caller then offers it elsewhere)
     */
    boolean offerLocal(Runnable step) {
        if (!takesSteps()) {
            return false;
        }
        local.add(step);
        return true;
    }

    /**
     * Any thread: hands a step to this runner's thread while it waits for its write, and wakes it.
     *
     * @return false if the runner takes no step now (not waiting, or already holding an offered step)
     */
    boolean offer(Runnable step) {
        if (slot.compareAndSet(null, step)) {
            LockSupport.unpark(thread);
            return true;
        }
        return false;
    }

    /** Any thread: wakes the runner's thread if it is parked waiting (its write was answered). */
    void wake() {
        if (thread != Thread.currentThread()) {
            LockSupport.unpark(thread);
        }
    }

    /** Own thread: runs the steps this thread handed itself (before it blocks on something else). */
    void runLocal() {
        Runnable r;
        while ((r = local.poll()) != null) {
            run(r);
        }
    }

    /**
     * Own thread, after {@link #begin}: runs the steps it is handed and offered until the awaited write is answered
     * (spinning, then yielding, then parking while there is nothing to run).
     */
    void await(boolean wasClosed) {
        CompletableFuture<?> done = waitingFor;
        slot.compareAndSet(CLOSED, null);
        int idle = 0;
        while (true) {
            Runnable r = local.poll();
            if (r == null) {
                Object s = slot.get();
                if (s instanceof Runnable offered && slot.compareAndSet(s, null)) {
                    r = offered;
                }
            }
            if (r != null) {
                run(r);
                idle = 0;
                continue;
            }
            if (done.isDone()) {
                if (slot.compareAndSet(null, CLOSED)) {
                    break;
                }
                continue; // a step was offered meanwhile: run it first
            }
            if (idle < SPINS) {
                Thread.onSpinWait();
            } else if (idle < SPINS + YIELDS) {
                Thread.yield();
            } else {
                // woken by an offer or by the answer; the timeout is only a safety net
                LockSupport.parkNanos(this, PARK_NANOS);
            }
            if (Thread.currentThread().isInterrupted() && local.isEmpty() && slot.compareAndSet(null, CLOSED)) {
                // interrupted while holding no step: stop waiting (the write goes on; the caller reports the
                // interrupt, flag set); steps of the write's batch now go to other writers or the pool
                break;
            }
            idle++;
        }
        if (!wasClosed) {
            slot.set(null); // an outer wait (this was nested in a step it ran) still takes offers
        }
    }

    /** Pool thread: runs {@code step} and the steps it hands this thread, in order. */
    void runPooled(Runnable step) {
        CompletableFuture<?> outerWait = waitingFor;
        boolean outerAccepting = accepting;
        waitingFor = null;
        accepting = true;
        try {
            run(step);
            runLocal();
        } finally {
            waitingFor = outerWait;
            accepting = outerAccepting;
        }
    }

    /**
     * Own thread: runs code of the engine's callers (the continuations of answered writes) here if this thread
     * holds no pipeline step, taking no steps while it runs.
     *
     * @return false when the thread holds a step (the log waits for it): the caller runs the code elsewhere
     */
    boolean runForeign(Runnable callerCode) {
        if (!local.isEmpty()) {
            return false;
        }
        Object s = slot.get();
        if (s != null && s != CLOSED) {
            return false;
        }
        if (s == null && !slot.compareAndSet(null, CLOSED)) {
            return false;
        }
        boolean wasAccepting = accepting;
        accepting = false;
        try {
            callerCode.run();
        } finally {
            accepting = wasAccepting;
            if (s == null) {
                slot.set(null);
            }
        }
        return true;
    }

    private static void run(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException | Error e) {
            // steps handle their own failures; one that escapes must not take the waiting caller down
            LOG.error("log pipeline step failed", e);
        }
    }
}
