package dev.lattice.conformance;

import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.SpiOperation;
import dev.lattice.testkit.InjectedFaultException;
import dev.lattice.testkit.FaultInjectingProvider.FaultRule;
import dev.lattice.testkit.FaultInjectingProvider.Timing;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.randomStream;
import static dev.lattice.conformance.WalTestSupport.readFully;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The checkpoint store's spec ({@link CheckpointStore}, reached through {@link WalStorageProvider#checkpoints()}):
 * byte-exact, atomic, replaceable, deletable, fenced, bounded by the tail and by {@link WalStorageProvider#MAX_OFFSET},
 * within the declared size limit, durable, and all-or-nothing when the publish's response is lost. (Null arguments
 * and calls after close are checked with the provider's other methods, in {@link ArgumentValidationContract} and
 * {@link ClosedProviderContract}.)
 */
public abstract class CheckpointStoreContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected CheckpointStoreContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** A multi-megabyte checkpoint round-trips byte-exact, also after reopen; latest describes it. */
    @Test
    void multiMegabyteCheckpointRoundTrips() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 2, 5, SMALL);
        assertThat(provider().checkpoints().latest(log)).as("latest checkpoint of a log never checkpointed").isEmpty();
        int size = (int) Math.min(BIG_CHECKPOINT_BYTES, limits().maxCheckpointBytes());
        CheckpointInfo info = provider().checkpoints().publish(log, f, 9, 3, randomStream(SEED, size));
        assertThat(info).as("CheckpointInfo returned by publish(through 9, format 3, %d bytes)", size)
                .isEqualTo(new CheckpointInfo(9, 3, size, f.epoch()));
        byte[] expected = randomBytes(SEED, size);
        ConformanceFixture.Check holds = () -> {
            assertThat(provider().checkpoints().latest(log)).as("latest checkpoint after publish through 9")
                    .contains(info);
            assertSameBytes("checkpoint of " + size + " bytes read back", readFully(provider().checkpoints().open(log,
                    info)), expected);
        };
        assertDurableAcrossReopen(holds);
        claimAndReconcile(provider(), log);
        holds.run();
    }

    /** An empty checkpoint through -1 on a claimed, never-written log is valid. */
    @Test
    void emptyCheckpointOfAnEmptyLog() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        CheckpointInfo info = provider().checkpoints().publish(log, f, -1, 0, bytes(new byte[0]));
        assertThat(info).as("CheckpointInfo of an empty checkpoint through -1")
                .isEqualTo(new CheckpointInfo(-1, 0, 0, f.epoch()));
        assertThat(provider().checkpoints().latest(log)).as("latest after an empty checkpoint through -1")
                .contains(info);
        assertThat(readFully(provider().checkpoints().open(log, info))).as("bytes of an empty checkpoint").isEmpty();
    }

    /** A publish whose stream fails half-way leaves the previous checkpoint latest and readable. */
    @Test
    void publishIsAtomicWhenTheStreamFails() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 2, 5, SMALL);
        byte[] first = randomBytes(SEED, 200_000);
        CheckpointInfo info = provider().checkpoints().publish(log, f, 4, 1, bytes(first));
        IOException boom = new IOException("disk went away (injected by the conformance suite)");
        InputStream failing = new InputStream() {
            private final InputStream data = randomStream(SEED + 1, 2_000_000);
            private long served;

            @Override
            public int read() throws IOException {
                if (served++ >= 1_000_000) {
                    throw boom;
                }
                return data.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (served >= 1_000_000) {
                    throw boom;
                }
                int n = data.read(b, off, (int) Math.min(len, 1_000_000 - served));
                served += Math.max(n, 0);
                return n;
            }
        };
        Throwable t = catchThrowable(() -> provider().checkpoints().publish(log, f, 9, 1, failing));
        assertThat(t).as("a publish whose stream throws IOException after 1,000,000 bytes")
                .isInstanceOf(WalStorageException.class);
        assertThat(t.getCause()).as("the stream's IOException must be the WalStorageException's cause").isSameAs(boom);
        assertDurable(log, () -> {
            assertThat(provider().checkpoints().latest(log))
                    .as("latest checkpoint after a failed publish through 9 must still be the one through 4")
                    .contains(info);
            assertSameBytes("checkpoint through 4 after a failed publish", readFully(provider().checkpoints().open(log,
                    info)), first);
        });
    }

    /** Publishing at the latest through-offset replaces it. */
    @Test
    void publishAtTheSameOffsetReplaces() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 5, SMALL);
        provider().checkpoints().publish(log, f, 3, 1, bytes(randomBytes(SEED, 500)));
        byte[] second = randomBytes(SEED + 1, 700);
        CheckpointInfo info = provider().checkpoints().publish(log, f, 3, 2, bytes(second));
        assertThat(provider().checkpoints().latest(log)).as("latest after a second publish through 3").contains(info);
        assertThat(info.formatVersion()).as("format version of the replacing checkpoint").isEqualTo(2);
        assertSameBytes("replacing checkpoint through 3", readFully(provider().checkpoints().open(log, info)), second);
    }

    /** deleteBefore deletes older checkpoints but never the latest; idempotent. */
    @Test
    void deleteBeforeNeverDeletesTheLatest() throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 2, 5, SMALL);
        byte[] b2 = randomBytes(SEED + 2, 300);
        byte[] b5 = randomBytes(SEED + 5, 300);
        byte[] b8 = randomBytes(SEED + 8, 300);
        CheckpointInfo i2 = provider().checkpoints().publish(log, f, 2, 1, bytes(b2));
        CheckpointInfo i5 = provider().checkpoints().publish(log, f, 5, 1, bytes(b5));
        CheckpointInfo i8 = provider().checkpoints().publish(log, f, 8, 1, bytes(b8));
        assertSameBytes("older checkpoint through 2", readFully(provider().checkpoints().open(log, i2)), b2);
        provider().checkpoints().deleteBefore(log, 5);
        assertThatThrownBy(() -> readFully(provider().checkpoints().open(log, i2)))
                .as("opening checkpoint through 2 after deleteBefore(5) must throw WalStorageException")
                .isInstanceOf(WalStorageException.class);
        assertSameBytes("checkpoint through 5 after deleteBefore(5)", readFully(provider().checkpoints().open(log, i5)),
                b5);
        provider().checkpoints().deleteBefore(log, 100);
        provider().checkpoints().deleteBefore(log, 100);
        assertThatThrownBy(() -> readFully(provider().checkpoints().open(log, i5)))
                .as("opening checkpoint through 5 after deleteBefore(100) must throw WalStorageException")
                .isInstanceOf(WalStorageException.class);
        assertDurableAcrossReopen(() -> {
            assertThat(provider().checkpoints().latest(log)).as("latest after deleteBefore(100): never deleted")
                    .contains(i8);
            assertSameBytes("latest checkpoint through 8 after deleteBefore(100)",
                    readFully(provider().checkpoints().open(log, i8)), b8);
        });
        assertThatThrownBy(() -> readFully(provider().checkpoints().open(log, i2)))
                .as("a deleted checkpoint stays deleted after reopen").isInstanceOf(WalStorageException.class);
        provider().checkpoints().deleteBefore(log(3), 10); // a log without checkpoints: no-op
        assertThat(provider().checkpoints().latest(log(3))).as("latest of a log without checkpoints after"
                + " deleteBefore").isEmpty();
    }

    /** A publish with a stale fence is refused and the previous checkpoint stays latest. */
    @Test
    void fencedPublishIsRefused() {
        LogId log = log(0);
        Fence old = claimAndReconcile(provider(), log);
        appendBatches(provider(), old, 1, 5, SMALL);
        byte[] data = randomBytes(SEED, 400);
        CheckpointInfo info = provider().checkpoints().publish(log, old, 2, 1, bytes(data));
        Fence current = provider().claim(log);
        assertFenced("checkpoint publish through 4 with a stale fence",
                () -> provider().checkpoints().publish(log, old, 4, 1, bytes(randomBytes(SEED + 1, 400))));
        assertThat(provider().checkpoints().latest(log)).as("latest after a refused stale publish").contains(info);
        assertSameBytes("checkpoint through 2 after a refused stale publish",
                readFully(provider().checkpoints().open(log, info)), data);
        CheckpointInfo next = provider().checkpoints().publish(log, current, 4, 1, bytes(data));
        assertThat(next.epoch()).as("epoch of the current writer's checkpoint").isEqualTo(current.epoch());
    }

    /** A publish above the committed tail, or below the latest checkpoint, is an offset conflict. */
    @Test
    void publishAboveTailOrBelowLatestIsRefused() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        assertConflict("checkpoint through 0 of an empty log (tail -1)",
                () -> provider().checkpoints().publish(log, f, 0, 1, bytes(new byte[5])));
        appendBatches(provider(), f, 1, 5, SMALL);
        provider().stage(log, f, batch(SEED + 1, 5, 2, SMALL)); // staged, not committed: still above the tail
        assertConflict("checkpoint through 5 (staged, not committed) above tail 4",
                () -> provider().checkpoints().publish(log, f, 5, 1, bytes(new byte[5])));
        CheckpointInfo info = provider().checkpoints().publish(log, f, 3, 1, bytes(new byte[5]));
        assertConflict("checkpoint through 2 below the latest through 3",
                () -> provider().checkpoints().publish(log, f, 2, 1, bytes(new byte[5])));
        assertConflict("checkpoint through -1 below the latest through 3",
                () -> provider().checkpoints().publish(log, f, -1, 1, bytes(new byte[5])));
        assertThat(provider().checkpoints().latest(log)).as("latest after refused publishes").contains(info);
    }

    /** A checkpoint may cover offsets a trim beyond the tail added. */
    @Test
    void publishUpToATrimBeyondTheTail() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        provider().trim(log, f, 9);
        CheckpointInfo info = provider().checkpoints().publish(log, f, 9, 1, bytes(new byte[1]));
        assertThat(provider().checkpoints().latest(log)).as("latest after a checkpoint through trim point 9")
                .contains(info);
    }

    /** A checkpoint through an offset above MAX_OFFSET is refused; the latest checkpoint stays. */
    @Test
    void checkpointThroughAboveMaxOffsetIsRefused() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 3, SMALL);
        provider().checkpoints().publish(log, f, 1, 0, bytes(new byte[] {1, 2, 3}));
        LogSnapshot before = snapshot(provider(), log);
        for (long through : new long[] {WalStorageProvider.MAX_OFFSET + 1, Long.MAX_VALUE}) {
            assertThatThrownBy(() -> provider().checkpoints().publish(log, f, through, 0, bytes(new byte[] {4})))
                    .as("checkpoint through %d must throw IllegalArgumentException naming the maximum offset",
                            through)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maximum offset");
        }
        assertUnchanged("after refused checkpoints above MAX_OFFSET", before, snapshot(provider(), log));
        provider().checkpoints().publish(log, f, 2, 0, bytes(new byte[] {5}));
        assertThat(provider().checkpoints().latest(log).orElseThrow().throughOffset())
                .as("latest checkpoint's offset after a publish through 2").isEqualTo(2);
    }

    /** A checkpoint of up to 1 MiB (less when the declared limit is smaller) publishes and reads back byte-exact. */
    @Test
    void checkpointBelowTheLimitRoundTrips() {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 3, SMALL);
        long size = Math.min(limits().maxCheckpointBytes(), 1 << 20);
        CheckpointInfo info = provider().checkpoints().publish(log, f, 1, 1, randomStream(SEED, size));
        assertThat(info.sizeBytes()).as("sizeBytes of a checkpoint of %d bytes", size).isEqualTo(size);
        assertSameBytes("checkpoint of " + size + " bytes", readFully(provider().checkpoints().open(log, info)),
                readFully(randomStream(SEED, size)));
    }

    /**
     * Variant for a declared checkpoint limit the suite can allocate (at most {@link #MAX_TESTABLE_CHECKPOINT_BYTES}):
     * a stream of exactly the limit publishes and one byte more is refused with {@link CheckpointTooLargeException}
     * naming the limit, leaving the previous checkpoint latest.
     */
    @Test
    void checkpointLimitHolds() {
        long limit = limits().maxCheckpointBytes();
        Assumptions.assumeTrue(limit <= MAX_TESTABLE_CHECKPOINT_BYTES, () -> "variant for a declared"
                + " maxCheckpointBytes of at most " + MAX_TESTABLE_CHECKPOINT_BYTES + " bytes; "
                + provider().describe().name() + " declares " + limit + ", too large to publish in a test (a 1 MiB"
                + " checkpoint round-trips in checkpointBelowTheLimitRoundTrips)");
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 1, 3, SMALL);
        long size = Math.min(limit, 1 << 20);
        CheckpointInfo info = provider().checkpoints().publish(log, f, 1, 1, randomStream(SEED, size));
        assertThat(info.sizeBytes()).as("sizeBytes of a checkpoint of %d bytes", size).isEqualTo(size);
        Throwable t = catchThrowable(() ->
                provider().checkpoints().publish(log, f, 2, 1, randomStream(SEED + 1, limit + 1)));
        assertThat(t).as("publish of maxCheckpointBytes + 1 = %d bytes must throw CheckpointTooLargeException naming"
                + " %d", limit + 1, limit).isInstanceOf(CheckpointTooLargeException.class)
                .hasMessageContaining(String.valueOf(limit));
        assertThat(provider().checkpoints().latest(log)).as("latest after a refused oversized checkpoint")
                .contains(info);
        CheckpointInfo atLimit = provider().checkpoints().publish(log, f, 2, 1, randomStream(SEED + 2, limit));
        assertThat(atLimit.sizeBytes()).as("sizeBytes of a checkpoint of exactly maxCheckpointBytes").isEqualTo(limit);
        assertSameBytes("checkpoint of exactly maxCheckpointBytes = " + limit + " bytes",
                readFully(provider().checkpoints().open(log, atLimit)), readFully(randomStream(SEED + 2, limit)));
    }

    /** A publish that fails before or after landing leaves the previous or the new checkpoint, whole. */
    @ParameterizedTest
    @EnumSource(Timing.class)
    void faultOnCheckpointPublish(Timing timing) throws Exception {
        LogId log = log(0);
        Fence f = claimAndReconcile(provider(), log);
        appendBatches(provider(), f, 2, 3, SMALL);
        byte[] first = randomBytes(SEED, 10_000);
        byte[] second = randomBytes(SEED + 1, 20_000);
        CheckpointInfo i1 = provider().checkpoints().publish(log, f, 2, 1, bytes(first));
        FaultInjectingProvider faulty = new FaultInjectingProvider(provider(), SEED);
        faulty.inject(new FaultRule(SpiOperation.CHECKPOINT_PUBLISH, timing, Duration.ZERO, 1, 0, 1.0, null));
        assertThatThrownBy(() -> faulty.checkpoints().publish(log, f, 5, 1, bytes(second)))
                .as("publish with an injected fault %s", timing).isInstanceOf(InjectedFaultException.class);
        reopenAndRecover(log);
        CheckpointInfo latest = provider().checkpoints().latest(log).orElseThrow();
        if (timing == Timing.BEFORE) {
            assertThat(latest).as("latest after a publish lost before landing must be the previous one").isEqualTo(i1);
            assertSameBytes("previous checkpoint after a publish lost before landing",
                    readFully(provider().checkpoints().open(log, latest)), first);
        } else {
            assertThat(latest).as("latest after a publish whose response was lost must be the new one")
                    .isEqualTo(new CheckpointInfo(5, 1, second.length, f.epoch()));
            assertSameBytes("new checkpoint after its publish's response was lost",
                    readFully(provider().checkpoints().open(log, latest)), second);
        }
    }
}
