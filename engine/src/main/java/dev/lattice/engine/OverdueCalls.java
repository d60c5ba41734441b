package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One log's provider calls under the call deadline ({@link CallWatchdog}), and what a call past its deadline does.
 * An answering call (stage, commit, reconcile) that is overdue has the pipeline answer the writes in flight and
 * queued at once, and counts as overdue until it returns (the pipeline refuses new writes meanwhile); any other
 * call that is overdue is only logged and counted as trouble.
 *
 * <p>Thread-safety: the count of overdue answering calls and the name of the last one are guarded by the
 * pipeline's lock, which the watchdog thread and a returning overdue call take; read them under it.
 */
final class OverdueCalls {

    /** What an overdue call does to its pipeline. */
    interface Host {
        /** Watchdog thread, without the lock: a call passed its deadline (a meter and the trouble time). */
        void noteOverdue();

        /** Under the lock: an answering call passed its deadline; answer the writes in flight and queued. */
        void answerWrites(ProviderUnavailableException cause);

        /** Under the lock: an overdue answering call returned; writes may be admitted again. */
        void overdueReturned();
    }

    // the category the pipeline always logged under
    private static final Logger LOG = LoggerFactory.getLogger(LogPipeline.class);

    private final LogId log;
    private final CallWatchdog watchdog;
    private final ReentrantLock lock;
    private final Host host;
    // the overdue actions as objects made once (no capturing lambda per call)
    private final Consumer<CallWatchdog.Watch> answering = w -> overdue(w, true);
    private final Consumer<CallWatchdog.Watch> quiet = w -> overdue(w, false);
    // answering calls past their deadline that have not returned yet, and the last one's name (under lock)
    private int overdueCalls;
    private String overdueWhat;

    /**
     * @param lock the pipeline's lock, which guards the overdue count
     */
    OverdueCalls(LogId log, CallWatchdog watchdog, ReentrantLock lock, Host host) {
        this.log = log;
        this.watchdog = watchdog;
        this.lock = lock;
        this.host = host;
    }

    /**
     * A stage or commit attempt under the call deadline (answering the writes in flight when it is overdue).
     *
     * @param op the call's name, for messages
     * @param call the attempt, given {@code arg}
     */
    void write(String op, Consumer<Object> call, Object arg) {
        CallWatchdog.Watch w = watchdog.watch(op, log, answering);
        try {
            call.accept(arg);
        } finally {
            unwatch(w);
        }
    }

    /**
     * Runs one provider call under the watchdog. When it is still running at its deadline and {@code answers} is
     * set, the writes in flight are answered as uncertain and new writes are refused until it returns.
     *
     * @param op the call's name, for messages
     */
    <T> T call(String op, boolean answers, Supplier<T> call) {
        CallWatchdog.Watch w = watchdog.watch(op, log, answers ? answering : quiet);
        try {
            return call.get();
        } finally {
            unwatch(w);
        }
    }

    /** @return the number of answering calls past their deadline that have not returned (read under the lock) */
    int overdueCount() {
        return overdueCalls;
    }

    /** @return the name of the last answering call that passed its deadline (read under the lock) */
    String overdueWhat() {
        return overdueWhat;
    }

    /** The call returned: closes its watch; when it was overdue, writes are admitted again. */
    private void unwatch(CallWatchdog.Watch w) {
        w.close();
        if (!w.fired) {
            return;
        }
        lock.lock();
        try {
            w.returned = true;
            if (w.counted) {
                overdueCalls--;
                host.overdueReturned();
            }
        } finally {
            lock.unlock();
        }
        LOG.info("log {}: {} returned {} ms after its deadline", log, w.what(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - w.deadlineNanos));
    }

    /** Watchdog thread: a call passed its deadline. */
    private void overdue(CallWatchdog.Watch w, boolean answers) {
        host.noteOverdue();
        LOG.warn("log {}: {} did not return within {} ms (LatticeConfig providerCallTimeout)", log, w.what(),
                watchdog.timeoutMillis());
        if (!answers) {
            return;
        }
        lock.lock();
        try {
            if (w.returned) {
                return;
            }
            w.counted = true;
            overdueCalls++;
            overdueWhat = w.what();
            host.answerWrites(new ProviderUnavailableException(log, w.what()
                    + " did not return within " + watchdog.timeoutMillis()
                    + " ms (LatticeConfig providerCallTimeout)", null));
        } finally {
            lock.unlock();
        }
    }
}
