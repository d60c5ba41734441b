package dev.lattice.testkit;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;

import static dev.lattice.testkit.TestData.batch;
import static dev.lattice.testkit.TestData.readFully;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The intercepting base: every SPI call reaches {@code intercept} once with its operation and log. */
class ForwardingProviderTest {

    private final LogId log = new LogId("t", 0);

    /** Records what reaches the interception point. */
    private static final class Recording extends ForwardingProvider {
        final List<String> seen = new ArrayList<>();

        Recording(WalStorageProvider delegate) {
            super(delegate);
        }

        @Override
        protected <T> T intercept(SpiOperation op, LogId log, Supplier<T> call) {
            seen.add(op + "@" + log);
            return call.get();
        }
    }

    @Test
    void everyBackendCallGoesThroughTheInterceptionPointOnce() {
        Recording p = new Recording(InMemoryWalStorageProvider.fresh());
        p.describe();
        assertThat(p.seen).as("describe is local").isEmpty();
        Fence f = p.claim(log);
        p.reconcile(log, f);
        p.append(log, f, batch(1, 0, 3, 10));
        StagedBatch s = p.stage(log, f, batch(1, 3, 1, 10));
        p.abort(log, f, s);
        p.checkFence(log, f);
        p.read(log, -1, 10, 1 << 20);
        p.state(log);
        p.trim(log, f, 0);
        CheckpointInfo info = p.checkpoints().publish(log, f, 2, 0, new ByteArrayInputStream(new byte[10]));
        p.checkpoints().latest(log);
        assertThat(readFully(p.checkpoints().open(log, info))).hasSize(10);
        p.checkpoints().deleteBefore(log, 0);
        RunStore runs = p.runs();
        assertThat(p.runs()).isSameAs(runs);
        runs.limits();
        RunId run = new RunId("r1");
        runs.write(log, f, run, new ByteArrayInputStream(new byte[20]), 20);
        assertThat(runs.read(log, run, 0, new byte[32], 0, 32)).isEqualTo(20);
        assertThat(runs.list(log)).hasSize(1);
        runs.delete(log, f, run);
        p.logs("t");
        p.trees();
        try {
            p.repair(log, f);
        } catch (UnsupportedOperationException notOffered) {
            // the in-memory provider may not offer repair; the call still went through the interception point
        }
        p.drop(log, p.claim(log));
        int before = p.seen.size();
        p.close();
        assertThat(p.seen).hasSize(before).as("close is local");
        String at = "@" + log;
        assertThat(p.seen).containsExactly("CLAIM" + at, "RECONCILE" + at, "STAGE" + at, "COMMIT" + at,
                "STAGE" + at, "ABORT" + at, "CHECK_FENCE" + at, "READ" + at, "STATE" + at, "TRIM" + at,
                "CHECKPOINT_PUBLISH" + at, "CHECKPOINT_LATEST" + at, "CHECKPOINT_OPEN" + at,
                "CHECKPOINT_DELETE_BEFORE" + at, "RUN_WRITE" + at, "RUN_READ" + at, "RUN_LIST" + at,
                "RUN_DELETE" + at, "LOGS@null", "TREES@null", "REPAIR" + at,
                "CLAIM" + at, "DROP" + at);
        Set<SpiOperation> covered = EnumSet.noneOf(SpiOperation.class);
        for (String e : p.seen) {
            covered.add(SpiOperation.valueOf(e.substring(0, e.indexOf('@'))));
        }
        assertThat(covered).as("every operation is intercepted somewhere").containsExactlyInAnyOrder(
                SpiOperation.values());
        assertThat(p.checkpoints()).isSameAs(p.checkpoints());
    }

    @Test
    void faultsAndCountsApplyToRunStoreCalls() {
        FaultInjectingProvider faulty = new FaultInjectingProvider(InMemoryWalStorageProvider.fresh());
        CountingProvider p = new CountingProvider(faulty);
        Fence f = p.claim(log);
        RunId run = new RunId("r2");
        faulty.inject(FaultInjectingProvider.FaultRule.failAfter(SpiOperation.RUN_WRITE));
        assertThatThrownBy(() -> p.runs().write(log, f, run, new ByteArrayInputStream(new byte[8]), 8))
                .isInstanceOf(InjectedFaultException.class);
        assertThat(p.runs().list(log)).as("the write landed, its response was lost").hasSize(1);
        faulty.inject(FaultInjectingProvider.FaultRule.failBefore(SpiOperation.RUN_DELETE));
        assertThatThrownBy(() -> p.runs().delete(log, f, run)).isInstanceOf(InjectedFaultException.class);
        assertThat(p.runs().list(log)).as("the delete never reached the store").hasSize(1);
        assertThat(p.snapshot().calls(SpiOperation.RUN_WRITE)).isEqualTo(1);
        assertThat(p.snapshot().failures(SpiOperation.RUN_WRITE)).isEqualTo(1);
        assertThat(p.snapshot().calls(SpiOperation.RUN_LIST)).isEqualTo(2);
        assertThat(p.snapshot().failures(SpiOperation.RUN_DELETE)).isEqualTo(1);
        assertThat(SpiOperation.RUN_WRITE.isWrite()).isTrue();
        assertThat(SpiOperation.RUN_READ.isWrite()).isFalse();
    }

    @Test
    void runsIsRefusedWhenTheDelegateHasNoRunStore() {
        WalStorageProvider noRuns = new ForwardingProvider(InMemoryWalStorageProvider.fresh()) {
            @Override
            public RunStore runs() {
                throw new UnsupportedOperationException("no run store here");
            }
        };
        ForwardingProvider p = new InFlightTrackingProvider(noRuns);
        assertThatThrownBy(p::runs).isInstanceOf(UnsupportedOperationException.class)
                .hasMessage("no run store here");
    }

    @Test
    void anInterceptorCanRefuseACallWithoutReachingTheDelegate() {
        InMemoryWalStorageProvider raw = InMemoryWalStorageProvider.fresh();
        ForwardingProvider refuseTrees = new ForwardingProvider(raw) {
            @Override
            protected <T> T intercept(SpiOperation op, LogId l, Supplier<T> call) {
                if (op == SpiOperation.STAGE) {
                    throw new IllegalStateException("refused " + op);
                }
                return call.get();
            }
        };
        Fence f = refuseTrees.claim(log);
        assertThatThrownBy(() -> refuseTrees.append(log, f, batch(1, 0, 1, 1)))
                .isInstanceOf(IllegalStateException.class).hasMessage("refused STAGE");
        assertThat(raw.state(log).committedTail()).isEqualTo(-1);
        assertThat(refuseTrees.delegate()).isSameAs(raw);
    }

    @Test
    void inFlightTrackingSeesARunningCallAndAwaitsQuiet() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ForwardingProvider blockingRead = new ForwardingProvider(InMemoryWalStorageProvider.fresh()) {
            @Override
            protected <T> T intercept(SpiOperation op, LogId l, Supplier<T> call) {
                if (op == SpiOperation.CHECKPOINT_LATEST) {
                    entered.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return call.get();
            }
        };
        InFlightTrackingProvider p = new InFlightTrackingProvider(blockingRead);
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try {
            Future<?> latest = ex.submit(() -> p.checkpoints().latest(log));
            entered.await();
            assertThat(p.inFlight()).isEqualTo(1);
            assertThat(p.awaitQuiet(Duration.ofMillis(10), Duration.ofMillis(50))).isFalse();
            release.countDown();
            latest.get();
            assertThat(p.inFlight()).isZero();
            assertThat(p.awaitQuiet(Duration.ofMillis(10), Duration.ofSeconds(30))).isTrue();
        } finally {
            release.countDown();
            ex.shutdownNow();
        }
    }

    @Test
    void latencyDelaysEveryCallByAtLeastTheLatency() {
        LatencyProvider p = new LatencyProvider(InMemoryWalStorageProvider.fresh()).setLatency(Duration.ofMillis(30));
        long t0 = System.nanoTime();
        p.checkpoints().latest(log);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(Duration.ofMillis(30).toNanos());
        p.setLatency(Duration.ZERO, Duration.ofMillis(1));
        assertThatThrownBy(() -> p.setLatency(Duration.ofMillis(2), Duration.ofMillis(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> p.setLatency(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void throttleCountsRequestsAndBytesOfStageCommitAndRead() {
        ThrottledProvider t = new ThrottledProvider(InMemoryWalStorageProvider.fresh(), 1000, 1 << 20);
        Fence f = t.claim(log);
        t.append(log, f, batch(1, 0, 2, 15));
        t.read(log, -1, 10, 1000);
        t.state(log);
        assertThat(t.requestCount()).isEqualTo(3); // stage, commit, read
        assertThat(t.byteCount()).isEqualTo(60);   // 30 written, 30 read
        assertThatThrownBy(() -> new ThrottledProvider(InMemoryWalStorageProvider.fresh(), 0, 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
