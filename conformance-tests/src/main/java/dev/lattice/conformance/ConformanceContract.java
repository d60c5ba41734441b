package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Assumptions;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.payload;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The base of every contract group of the conformance suite: the constants, the {@link ConformanceFixture} of the
 * running test, and the assertions the groups share. Each {@code *Contract} subclass holds the tests of one part of
 * the SPI contract; {@link WalStorageProviderConformanceTest} runs them all as {@code @Nested} groups against one
 * provider.
 *
 * <p>Not thread-safe (JUnit creates one instance per test).
 */
public abstract class ConformanceContract {

    /** The tree most tests write to. */
    public static final String TREE = "conformance";
    /** Seed of the deterministic payloads. */
    public static final long SEED = 20261130L;
    /** Payload size, in bytes, of the entries most tests append. */
    public static final int SMALL = 48;
    /** Largest declared {@link ProviderLimits#maxEntryBytes()} the suite allocates an entry of: 64 MiB. */
    public static final int MAX_TESTABLE_ENTRY_BYTES = 64 << 20;
    /** Largest declared {@link ProviderLimits#maxBatchBytes()} the suite builds a batch of: 256 MiB. */
    public static final long MAX_TESTABLE_BATCH_BYTES = 256L << 20;
    /** Largest declared {@link ProviderLimits#maxEntriesPerBatch()} the suite builds a batch of. */
    public static final int MAX_TESTABLE_ENTRIES_PER_BATCH = 1_000_000;
    /** Largest declared {@link ProviderLimits#maxCheckpointBytes()} the suite publishes a checkpoint of: 64 MiB. */
    public static final long MAX_TESTABLE_CHECKPOINT_BYTES = 64L << 20;
    /** Size of the checkpoint the round-trip test publishes: 5 MiB. */
    public static final int BIG_CHECKPOINT_BYTES = 5 << 20;
    /** Smallest maxEntryBytes the suite's ordinary tests need: 16 KiB. */
    public static final int MIN_ENTRY_BYTES = 16 << 10;
    /** Smallest maxBatchBytes the suite's ordinary tests need: 128 KiB. */
    public static final long MIN_BATCH_BYTES = 128 << 10;
    /** Smallest maxEntriesPerBatch the suite's ordinary tests need. */
    public static final int MIN_ENTRIES_PER_BATCH = 24;
    /** Smallest maxCheckpointBytes the suite's ordinary tests need: 1 MiB. */
    public static final long MIN_CHECKPOINT_BYTES = 1 << 20;
    /** Upper bound on any wait for another thread, in seconds; only turns a deadlock into a failure. */
    public static final long HANG_GUARD_SECONDS = 300;
    /** Threads used by the concurrency tests. */
    public static final int THREADS = 4;

    private final ConformanceFixture fixture;

    /**
     * A contract group working through the given fixture.
     *
     * @param fixture the fixture of the running test
     * @throws NullPointerException if fixture is null
     */
    protected ConformanceContract(ConformanceFixture fixture) {
        this.fixture = Objects.requireNonNull(fixture, "fixture");
    }

    // ---- the fixture --------------------------------------------------------------------------------------------

    /** @return the fixture of the running test */
    protected final ConformanceFixture fixture() {
        return fixture;
    }

    /** @return the provider instance the test currently uses; replaced by {@link #reopen()} */
    protected final WalStorageProvider provider() {
        return fixture.provider();
    }

    /** @return the storage of the running test */
    protected final ProviderUnderTest storage() {
        return fixture.storage();
    }

    /** @return the limits the provider under test declares */
    protected final ProviderLimits limits() {
        return fixture.limits();
    }

    /**
     * Closes {@link #provider()} and opens a new instance over the same storage.
     *
     * @return the new instance
     * @throws Exception when opening fails
     */
    protected final WalStorageProvider reopen() throws Exception {
        return fixture.reopen();
    }

    /**
     * Reopens the provider, then claims and reconciles a log.
     *
     * @param log the log
     * @return the new writer's fence
     * @throws Exception when opening fails
     */
    protected final Fence reopenAndRecover(LogId log) throws Exception {
        return fixture.reopenAndRecover(log);
    }

    /**
     * Asserts a check, reopens + claims + reconciles {@code log}, asserts it again ({@link
     * ConformanceFixture#assertDurable}).
     *
     * @param log the log to recover
     * @param check the check
     * @return the recovered writer's fence
     * @throws Exception what the check or the reopen throws
     */
    protected final Fence assertDurable(LogId log, ConformanceFixture.Check check) throws Exception {
        return fixture.assertDurable(log, check);
    }

    /**
     * Asserts a check, reopens (no claim), asserts it again ({@link ConformanceFixture#assertDurableAcrossReopen}).
     *
     * @param check the check
     * @throws Exception what the check or the reopen throws
     */
    protected final void assertDurableAcrossReopen(ConformanceFixture.Check check) throws Exception {
        fixture.assertDurableAcrossReopen(check);
    }

    /**
     * Whether the provider under test declares a feature.
     *
     * @param feature the feature
     * @return true when {@code describe().features()} contains it
     */
    protected final boolean declares(ProviderFeature feature) {
        return provider().describe().has(feature);
    }

    /**
     * Skips the running variant (reported as skipped, with the reason) unless the provider declares a feature.
     *
     * @param feature the feature the variant is about
     * @param otherwise what the skip report says the provider does instead
     */
    protected final void assumeDeclared(ProviderFeature feature, String otherwise) {
        Assumptions.assumeTrue(declares(feature), () -> "variant for providers that declare " + feature + "; "
                + provider().describe().name() + " does not: " + otherwise);
    }

    /**
     * Skips the running variant (reported as skipped, with the reason) when the provider declares a feature.
     *
     * @param feature the feature that rules the variant out
     * @param instead what the skip report says the provider does instead
     */
    protected final void assumeNotDeclared(ProviderFeature feature, String instead) {
        Assumptions.assumeFalse(declares(feature), () -> "variant for providers without " + feature + "; "
                + provider().describe().name() + " declares it: " + instead);
    }

    // ---- logs, batches, recovery ----------------------------------------------------------------------------------

    /**
     * A log of {@link #TREE}.
     *
     * @param partition the partition
     * @return the log id
     */
    protected static LogId log(int partition) {
        return new LogId(TREE, partition);
    }

    /**
     * The engine's recovery step: claim the log, then reconcile it.
     *
     * @param p the provider
     * @param log the log
     * @return the fence
     */
    protected static Fence claimAndReconcile(WalStorageProvider p, LogId log) {
        return ConformanceFixture.claimAndReconcile(p, log);
    }

    /**
     * Appends {@code count} batches of {@code entries} entries of {@code size} bytes after the log's tail.
     *
     * @param p the provider
     * @param fence the writer's fence
     * @param count number of batches
     * @param entries entries per batch
     * @param size payload bytes per entry
     * @return the batches appended, in order
     */
    protected static List<EncodedBatch> appendBatches(WalStorageProvider p, Fence fence, int count, int entries,
                                                      int size) {
        List<EncodedBatch> out = new ArrayList<>();
        long next = p.state(fence.log()).nextOffset();
        for (int i = 0; i < count; i++) {
            EncodedBatch b = batch(SEED + fence.log().partition(), next, entries, size);
            p.append(fence.log(), fence, b);
            out.add(b);
            next = b.lastOffset() + 1;
        }
        return out;
    }

    /**
     * A batch whose entries have sizes {@code 0, 1, 2, ...} bytes times {@code step}, so empty payloads and varied
     * lengths are covered.
     *
     * @param seed payload seed
     * @param first first offset
     * @param count entries
     * @param step size step in bytes
     * @return the batch
     */
    protected static EncodedBatch variedBatch(long seed, long first, int count, int step) {
        List<byte[]> ps = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ps.add(payload(seed, first + i, i * step));
        }
        return EncodedBatch.of(first, WalTestSupport.batchId(seed, first, count, step, 7), ps);
    }

    /**
     * A stale writer's stage: either refused at once with {@link FencedException} or {@link OffsetConflictException}
     * (when it overlaps committed data), or accepted without any visible effect (checked by the caller).
     *
     * @param p the provider
     * @param log the log
     * @param stale the stale fence
     * @param b the batch
     */
    protected static void staleStage(WalStorageProvider p, LogId log, Fence stale, EncodedBatch b) {
        try {
            p.stage(log, stale, b);
        } catch (FencedException | OffsetConflictException expected) {
            // allowed: refused at once
        }
    }

    /**
     * @param b bytes
     * @return a stream over them
     */
    protected static InputStream bytes(byte[] b) {
        return new ByteArrayInputStream(b);
    }

    /**
     * Waits for another thread's result, at most {@link #HANG_GUARD_SECONDS}.
     *
     * @param f the future
     * @param <T> the result type
     * @return its result
     * @throws Exception its failure, or a timeout when it hangs
     */
    protected static <T> T await(Future<T> f) throws Exception {
        return f.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * A call of the SPI with the text that names it in failure messages.
     *
     * @param what the call as written, e.g. {@code "stage(null, f, b)"}
     * @param call the call
     */
    protected record NamedCall(String what, Runnable call) {
    }

    /**
     * Names a call for a failure message.
     *
     * @param what the call as written
     * @param call the call
     * @return the named call
     */
    protected static NamedCall call(String what, Runnable call) {
        return new NamedCall(what, call);
    }

    // ---- snapshots and assertions -----------------------------------------------------------------------------

    /**
     * Takes a {@link LogSnapshot}.
     *
     * @param p the provider
     * @param log the log
     * @return the snapshot
     */
    protected static LogSnapshot snapshot(WalStorageProvider p, LogId log) {
        return LogSnapshot.of(p, log);
    }

    /**
     * Asserts that nothing observable changed, epoch included.
     *
     * @param after what happened between the snapshots, for the failure message ("after a refused append")
     * @param before the earlier snapshot
     * @param now the later snapshot
     */
    protected static void assertUnchanged(String after, LogSnapshot before, LogSnapshot now) {
        assertSameData(after, before, now);
        assertThat(now.epoch()).as("%s: epoch must be unchanged", after).isEqualTo(before.epoch());
    }

    /**
     * Asserts that the log's data did not change (state, entries, latest checkpoint), ignoring the epoch, which a
     * claim after reopen raises.
     *
     * @param after what happened between the snapshots, for the failure message
     * @param before the earlier snapshot
     * @param now the later snapshot
     */
    protected static void assertSameData(String after, LogSnapshot before, LogSnapshot now) {
        assertEntries(after + ": entries must be unchanged", now.entries(), before.entries());
        assertThat(now.committedTail()).as("%s: committed tail must be unchanged", after)
                .isEqualTo(before.committedTail());
        assertThat(now.lowestOffset()).as("%s: lowest offset must be unchanged", after)
                .isEqualTo(before.lowestOffset());
        assertThat(now.trimWatermark()).as("%s: trim watermark must be unchanged", after)
                .isEqualTo(before.trimWatermark());
        assertThat(now.retainedEntries()).as("%s: retained entries must be unchanged", after)
                .isEqualTo(before.retainedEntries());
        assertThat(now.retainedPayloadBytes()).as("%s: retained payload bytes must be unchanged", after)
                .isEqualTo(before.retainedPayloadBytes());
        assertThat(now.checkpoint()).as("%s: latest checkpoint must be unchanged", after)
                .isEqualTo(before.checkpoint());
    }

    /**
     * {@link WalTestSupport#assertSameEntries} with the rule in the failure message.
     *
     * @param rule the contract rule, for the message
     * @param actual what the provider returned
     * @param expected what it must return
     */
    protected static void assertEntries(String rule, List<LogEntry> actual, List<LogEntry> expected) {
        try {
            assertSameEntries(actual, expected);
        } catch (AssertionError e) {
            throw new AssertionError(rule + ": " + e.getMessage(), e);
        }
    }

    /**
     * Asserts that two byte arrays are equal, naming the length or the first differing index instead of dumping
     * them.
     *
     * @param rule the contract rule, for the message
     * @param actual the bytes the provider returned
     * @param expected the bytes it must return
     */
    protected static void assertSameBytes(String rule, byte[] actual, byte[] expected) {
        assertThat(actual).as("%s: bytes must not be null", rule).isNotNull();
        int diff = Arrays.mismatch(actual, expected);
        if (diff >= 0) {
            throw new AssertionError(rule + ": " + actual.length + " bytes, expected " + expected.length
                    + (diff < Math.min(actual.length, expected.length)
                    ? "; first difference at byte " + diff + " (" + actual[diff] + ", expected " + expected[diff] + ")"
                    : "; equal up to the shorter length"));
        }
    }

    /**
     * Asserts that a log holds exactly these entries (byte-exact) and that its state agrees: tail, lowest offset,
     * retained entries and payload bytes.
     *
     * @param p the provider
     * @param log the log
     * @param expected the entries, ascending
     * @param expectedTail the committed tail
     */
    protected static void assertLogHolds(WalStorageProvider p, LogId log, List<LogEntry> expected,
                                         long expectedTail) {
        assertEntries("entries read from " + log + " (tail " + expectedTail + " expected)", readAll(p, log), expected);
        LogState s = p.state(log);
        assertThat(s.committedTail()).as("committed tail of %s", log).isEqualTo(expectedTail);
        assertThat(s.retainedEntries()).as("retained entries of %s", log).isEqualTo(expected.size());
        assertThat(s.retainedPayloadBytes()).as("retained payload bytes of %s", log)
                .isEqualTo(expected.stream().mapToLong(e -> e.payload().length).sum());
        assertThat(s.lowestOffset()).as("lowest offset of %s", log)
                .isEqualTo(expected.isEmpty() ? expectedTail + 1 : expected.get(0).offset());
    }

    /**
     * Asserts that a log holds {@code base} followed by a whole-batch prefix of {@code candidates} (none, the
     * first, the first two, ...), never part of a batch and never a later batch without the earlier ones.
     *
     * @param p the provider
     * @param log the log
     * @param base the entries that must be there
     * @param candidates batches that may each be there or not, in order
     * @return how many of the candidates are there
     */
    protected static int assertBasePlusWholeBatchPrefix(WalStorageProvider p, LogId log, List<LogEntry> base,
                                                        List<EncodedBatch> candidates) {
        List<LogEntry> actual = readAll(p, log);
        List<LogEntry> expected = new ArrayList<>(base);
        String rule = log + " must hold the committed entries plus a whole-batch prefix of the uncommitted batches";
        if (actual.size() == expected.size()) {
            assertEntries(rule + " (none kept)", actual, expected);
            return 0;
        }
        for (int k = 0; k < candidates.size(); k++) {
            expected.addAll(entriesOf(candidates.get(k)));
            if (actual.size() == expected.size()) {
                assertEntries(rule + " (" + (k + 1) + " kept)", actual, expected);
                return k + 1;
            }
        }
        throw new AssertionError(log + " holds " + actual.size() + " entries: neither the " + base.size()
                + " committed before nor those plus whole uncommitted batches (" + candidates
                + "); a batch is partly visible");
    }

    /**
     * Asserts that a call is refused with {@link FencedException}.
     *
     * @param what the call and why it is stale, for the failure message
     * @param call the call
     */
    protected static void assertFenced(String what, Runnable call) {
        assertThatThrownBy(call::run).as("%s must throw FencedException", what).isInstanceOf(FencedException.class);
    }

    /**
     * Asserts that a call is refused with {@link OffsetConflictException}.
     *
     * @param what the call and the offsets it breaks, for the failure message
     * @param call the call
     */
    protected static void assertConflict(String what, Runnable call) {
        assertThatThrownBy(call::run).as("%s must throw OffsetConflictException", what)
                .isInstanceOf(OffsetConflictException.class);
    }
}
