package dev.lattice.testkit;

import dev.lattice.testkit.FaultInjectingProvider.Fault;
import dev.lattice.testkit.FaultInjectingProvider.FaultRule;
import dev.lattice.testkit.FaultInjectingProvider.Timing;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.lattice.testkit.TestData.batch;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The fault injector does what its rules say: before/after, counts, skips, probabilities, logs, timeouts. */
class FaultInjectingProviderTest {

    private final InMemoryWalStorageProvider real = InMemoryWalStorageProvider.fresh();
    private final FaultInjectingProvider p = new FaultInjectingProvider(real, 7);
    private final LogId log = new LogId("t", 0);

    @AfterEach
    void close() {
        p.close();
    }

    @Test
    void failBeforeDoesNotReachTheProvider() {
        Fence f = p.claim(log);
        p.inject(FaultRule.failBefore(SpiOperation.STAGE));
        EncodedBatch b = batch(1, 0, 3, 8);
        Throwable t = catchThrowable(() -> p.stage(log, f, b));
        assertThat(t).isInstanceOf(InjectedFaultException.class).isInstanceOf(ProviderUnavailableException.class);
        InjectedFaultException e = (InjectedFaultException) t;
        assertThat(e.operation()).isEqualTo(SpiOperation.STAGE);
        assertThat(e.timing()).isEqualTo(Timing.BEFORE);
        assertThat(e.landed()).isFalse();
        assertThat(e.log()).isEqualTo(log);
        assertThatThrownBy(() -> real.commit(log, f, 2)).isInstanceOf(OffsetConflictException.class);
        p.stage(log, f, b); // the rule fired once: the next call passes
        p.commit(log, f, 2);
        assertThat(real.state(log).committedTail()).isEqualTo(2);
    }

    @Test
    void failAfterLandsButLosesTheResponse() {
        Fence f = p.claim(log);
        p.inject(FaultRule.failAfter(SpiOperation.COMMIT));
        EncodedBatch b = batch(1, 0, 3, 8);
        p.stage(log, f, b);
        Throwable t = catchThrowable(() -> p.commit(log, f, 2));
        assertThat(t).isInstanceOf(InjectedFaultException.class);
        assertThat(((InjectedFaultException) t).landed()).isTrue();
        assertThat(real.state(log).committedTail()).isEqualTo(2);
    }

    @Test
    void failAfterCommitThroughAppendStillCommits() {
        Fence f = p.claim(log);
        p.inject(FaultRule.failAfter(SpiOperation.COMMIT));
        assertThatThrownBy(() -> p.append(log, f, batch(1, 0, 2, 8))).isInstanceOf(InjectedFaultException.class);
        assertThat(real.state(log).committedTail()).isEqualTo(1);
    }

    @Test
    void timesAndSkipCountMatchingCalls() {
        Fault f = p.inject(FaultRule.failBefore(SpiOperation.STATE).afterSkipping(2).times(3));
        List<Boolean> failed = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            failed.add(catchThrowable(() -> p.state(log)) instanceof InjectedFaultException);
        }
        assertThat(failed).containsExactly(false, false, true, true, true, false, false, false);
        assertThat(f.firedCount()).isEqualTo(3);
        assertThat(f.isExhausted()).isTrue();
        assertThat(p.injectedFaultCount()).isEqualTo(3);
    }

    @Test
    void probabilityIsDeterministicForASeed() {
        List<Integer> a = failingCalls(new FaultInjectingProvider(InMemoryWalStorageProvider.fresh(), 42));
        List<Integer> b = failingCalls(new FaultInjectingProvider(InMemoryWalStorageProvider.fresh(), 42));
        List<Integer> c = failingCalls(new FaultInjectingProvider(InMemoryWalStorageProvider.fresh(), 43));
        assertThat(a).isEqualTo(b).isNotEqualTo(c);
        assertThat(a.size()).isBetween(200, 400); // 1,000 calls at p = 0.3, fixed seed
    }

    private List<Integer> failingCalls(FaultInjectingProvider fp) {
        fp.inject(FaultRule.failBefore(SpiOperation.READ).always().withProbability(0.3));
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            if (catchThrowable(() -> fp.read(log, -1, 1, 1)) != null) {
                out.add(i);
            }
        }
        return out;
    }

    @Test
    void onLogRestrictsTheRule() {
        LogId other = new LogId("t", 1);
        p.inject(FaultRule.failBefore(SpiOperation.CLAIM).always().onLog(other));
        for (int i = 0; i < 3; i++) {
            p.claim(log);
            assertThatThrownBy(() -> p.claim(other)).isInstanceOf(InjectedFaultException.class);
        }
        assertThat(real.state(other).epoch()).isZero();
        assertThat(real.state(log).epoch()).isEqualTo(3);
    }

    @Test
    void cancelledAndClearedRulesStopFiring() {
        Fault f = p.inject(FaultRule.failBefore(SpiOperation.TREES).always());
        assertThatThrownBy(p::trees).isInstanceOf(InjectedFaultException.class);
        f.cancel();
        assertThat(p.trees()).isEmpty();
        p.inject(FaultRule.failBefore(SpiOperation.LOGS).always());
        p.clearFaults();
        assertThat(p.logs("t")).isEmpty();
    }

    @Test
    void timeoutBlocksThenFails() {
        p.inject(FaultRule.timeoutBefore(SpiOperation.CLAIM, Duration.ofMillis(50)));
        long start = System.nanoTime();
        Throwable t = catchThrowable(() -> p.claim(log));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(t).isInstanceOf(InjectedFaultException.class).hasMessageContaining("timed out after 50 ms");
        assertThat(tookMs).as("blocked at least the timeout").isGreaterThanOrEqualTo(50);
        assertThat(real.state(log).epoch()).isZero();
        p.inject(FaultRule.timeoutAfter(SpiOperation.CLAIM, Duration.ofMillis(1)));
        assertThatThrownBy(() -> p.claim(log)).isInstanceOf(InjectedFaultException.class);
        assertThat(real.state(log).epoch()).isEqualTo(1);
    }

    @Test
    void latencyDelaysEveryCall() {
        p.setLatency(Duration.ofMillis(5));
        long start = System.nanoTime();
        for (int i = 0; i < 4; i++) {
            p.state(log);
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(20);
        p.setLatency(Duration.ofMillis(1), Duration.ofMillis(3));
        start = System.nanoTime();
        p.state(log);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(1));
        assertThatThrownBy(() -> p.setLatency(Duration.ofMillis(3), Duration.ofMillis(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void checkpointCallsAreFaultable() {
        Fence f = p.claim(log);
        p.inject(FaultRule.failBefore(SpiOperation.CHECKPOINT_PUBLISH));
        assertThatThrownBy(() -> p.checkpoints().publish(log, f, -1, 0, new ByteArrayInputStream(new byte[3])))
                .isInstanceOf(InjectedFaultException.class);
        assertThat(real.checkpoints().latest(log)).isEmpty();
        p.inject(FaultRule.failAfter(SpiOperation.CHECKPOINT_PUBLISH));
        assertThatThrownBy(() -> p.checkpoints().publish(log, f, -1, 0, new ByteArrayInputStream(new byte[3])))
                .isInstanceOf(InjectedFaultException.class);
        assertThat(real.checkpoints().latest(log)).isPresent();
        p.inject(FaultRule.failBefore(SpiOperation.CHECKPOINT_LATEST));
        assertThatThrownBy(() -> p.checkpoints().latest(log)).isInstanceOf(InjectedFaultException.class);
        p.inject(FaultRule.failAfter(SpiOperation.CHECKPOINT_OPEN));
        assertThatThrownBy(() -> p.checkpoints().open(log, real.checkpoints().latest(log).orElseThrow()))
                .isInstanceOf(InjectedFaultException.class);
        p.inject(FaultRule.failBefore(SpiOperation.CHECKPOINT_DELETE_BEFORE));
        assertThatThrownBy(() -> p.checkpoints().deleteBefore(log, 0)).isInstanceOf(InjectedFaultException.class);
        assertThat(p.checkpoints()).isSameAs(p.checkpoints());
    }

    @Test
    void aRuleFiresExactlyItsCountUnderConcurrency() throws Exception {
        p.inject(FaultRule.failBefore(SpiOperation.STATE).times(100));
        AtomicInteger failures = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < 250; i++) {
                        if (catchThrowable(() -> p.state(log)) != null) {
                            failures.incrementAndGet();
                        }
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(failures.get()).isEqualTo(100);
        assertThat(p.injectedFaultCount()).isEqualTo(100);
    }

    @Test
    void badRulesAreRefused() {
        assertThatThrownBy(() -> FaultRule.failBefore(SpiOperation.STAGE).withProbability(0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FaultRule.failBefore(SpiOperation.STAGE).withProbability(1.5))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FaultRule.failBefore(SpiOperation.STAGE).times(0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FaultRule.failBefore(SpiOperation.STAGE).afterSkipping(-1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FaultRule.timeoutBefore(SpiOperation.STAGE, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FaultInjectingProvider(null)).isInstanceOf(NullPointerException.class);
    }
}
