package dev.lattice.cluster;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A partition's prepare gate on its own (no cluster): without a hold a prepare runs at once on the caller's thread;
 * under a hold it waits until the release, or the hold's own expiry (nobody releases it), or its own bound (holds
 * renewed without end); a hold is capped at the bound; closing lets waiters go; a bound of zero grants nothing.
 */
class PrepareGateTest {

    private static final Duration BOUND = Duration.ofMillis(150);
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final ExecutorService runner = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        timer.shutdownNow();
        runner.shutdownNow();
    }

    private PrepareGate gate(Duration bound) {
        return new PrepareGate(bound, timer, runner);
    }

    /** A prepare that records when (System.nanoTime) and whether it started. */
    private static final class Probe {
        final AtomicLong startedAt = new AtomicLong();
        final AtomicBoolean started = new AtomicBoolean();
        volatile Thread thread;

        CompletableFuture<Long> run() {
            startedAt.set(System.nanoTime());
            thread = Thread.currentThread();
            started.set(true);
            return CompletableFuture.completedFuture(7L);
        }
    }

    @Test
    void withoutAHoldAPrepareRunsAtOnceOnTheCallersThread() throws Exception {
        PrepareGate g = gate(BOUND);
        Probe p = new Probe();
        CompletableFuture<Long> f = g.admit(p::run);
        assertThat(f).isCompletedWithValue(7L);
        assertThat(p.thread).isSameAs(Thread.currentThread());
        assertThat(g.heldPrepares()).isZero();
        // a hold released, or another hold id released, does not leave the gate held
        assertThat(g.place(1, 10_000)).isEqualTo(BOUND.toMillis());
        assertThat(g.release(2)).isFalse();
        assertThat(g.held()).isTrue();
        assertThat(g.release(1)).isTrue();
        assertThat(g.held()).isFalse();
        assertThat(g.admit(new Probe()::run)).isCompletedWithValue(7L);
    }

    @Test
    void aHeldPrepareGoesOnWhenTheHoldIsReleased() throws Exception {
        PrepareGate g = gate(Duration.ofSeconds(5));
        assertThat(g.place(42, 5_000)).isEqualTo(5_000);
        Probe p = new Probe();
        CompletableFuture<Long> f = g.admit(p::run);
        Thread.sleep(100);
        assertThat(p.started).as("held while the hold is in force").isFalse();
        assertThat(f).isNotDone();
        long released = System.nanoTime();
        assertThat(g.release(42)).isTrue();
        assertThat(f.get(2, TimeUnit.SECONDS)).isEqualTo(7L);
        assertThat(p.startedAt.get()).isGreaterThanOrEqualTo(released);
        assertThat(g.heldPrepares()).isEqualTo(1);
    }

    @Test
    void aHoldNobodyReleasesEndsByItselfAtTheBound() throws Exception {
        PrepareGate g = gate(BOUND);
        long placed = System.nanoTime();
        assertThat(g.place(5, 60_000)).as("capped at the bound").isEqualTo(BOUND.toMillis());
        Probe p = new Probe();
        CompletableFuture<Long> f = g.admit(p::run);
        assertThat(f.get(5, TimeUnit.SECONDS)).isEqualTo(7L);
        assertThat(p.startedAt.get() - placed).as("waited for the expiry").isGreaterThanOrEqualTo(BOUND.toNanos());
        assertThat(g.held()).isFalse();
        assertThat(g.release(5)).as("expired, not in force any more").isFalse();
    }

    @Test
    void holdsRenewedWithoutEndDelayAPrepareByTheBoundAtMost() throws Exception {
        PrepareGate g = gate(BOUND);
        AtomicBoolean renewing = new AtomicBoolean(true);
        Thread renewer = new Thread(() -> {
            while (renewing.get()) {
                g.place(9, 60_000);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        g.place(9, 60_000);
        renewer.start();
        try {
            long t0 = System.nanoTime();
            Probe p = new Probe();
            CompletableFuture<Long> f = g.admit(p::run);
            assertThat(f.get(5, TimeUnit.SECONDS)).isEqualTo(7L);
            long waited = p.startedAt.get() - t0;
            assertThat(waited).as("waited its bound").isGreaterThanOrEqualTo(BOUND.toNanos());
            assertThat(waited).as("not much past it").isLessThan(BOUND.toNanos() + TimeUnit.SECONDS.toNanos(2));
            assertThat(g.held()).as("the holds were still renewed when it went on").isTrue();
        } finally {
            renewing.set(false);
            renewer.join();
        }
    }

    @Test
    void closingLetsWaitersGoAndGrantsNoMoreHolds() throws Exception {
        PrepareGate g = gate(Duration.ofSeconds(5));
        g.place(1, 5_000);
        CompletableFuture<Long> f = g.admit(() -> {
            throw new IllegalStateException("partition released");
        });
        assertThat(f).isNotDone();
        g.close();
        assertThatThrownBy(() -> f.get(2, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
        assertThat(g.place(2, 1_000)).isZero();
        assertThat(g.admit(new Probe()::run)).isCompletedWithValue(7L);
    }

    @Test
    void aBoundOfZeroGrantsNoHold() {
        PrepareGate g = gate(Duration.ZERO);
        assertThat(g.place(1, 1_000)).isZero();
        assertThat(g.held()).isFalse();
        assertThat(g.admit(new Probe()::run)).isCompletedWithValue(7L);
        assertThat(gate(BOUND).place(1, 0)).as("a hold of 0 ms holds nothing").isZero();
    }
}
