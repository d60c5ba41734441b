package dev.lattice.conformance;

import dev.lattice.testkit.FaultInjectingProvider.FaultRule;
import dev.lattice.testkit.FaultInjectingProvider.Timing;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.BatchTooLargeException;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.EntryTooLargeException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testkit.FaultInjectingProvider;
import dev.lattice.testkit.InjectedFaultException;
import dev.lattice.testkit.LimitEnforcingProvider;
import dev.lattice.testkit.SpiOperation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.checkPage;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.payload;
import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static dev.lattice.conformance.WalTestSupport.randomStream;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static dev.lattice.conformance.WalTestSupport.readFully;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.fail;

/**
 * The Lattice provider conformance suite (TCK). A provider's test extends this class and supplies
 * {@link #newStorage()}; every test then runs against a fresh, isolated storage of that provider:
 *
 * <pre>{@code
 * class MyProviderConformanceTest extends WalStorageProviderConformanceTest {
 *     protected ProviderUnderTest newStorage() { return new MyStorage(tempDir()); }
 * }
 * }</pre>
 *
 * <p>The tests are grouped in {@link Nested} classes, one per part of the contract of {@link WalStorageProvider}
 * and {@link CheckpointStore}. Each test opens a provider with {@link ProviderUnderTest#open()}, may reopen it
 * (close, then open again over the same storage) to check durability, and closes everything at the end. No test
 * depends on timing; waits on other threads are bounded by {@link #HANG_GUARD_SECONDS} only to turn a deadlock into
 * a failure.
 *
 * <p>Where the SPI Javadoc allows two behaviours (a stale stage refused at once or at commit; a staged batch lost on
 * close under {@link ProviderFeature#DEFERRED_STAGE}; an uncommitted batch rolled back or rolled forward), the suite
 * accepts exactly those and nothing else (never a part of a batch). Where the Javadoc is ambiguous the suite takes the
 * strict reading; docs/conformance.md lists those choices.
 *
 * <p>Sizes are bounded so the whole suite takes seconds on the in-memory provider and a few minutes on a remote one;
 * limit tests use the provider's declared limits as long as they are within {@link #MAX_TESTABLE_ENTRY_BYTES},
 * {@link #MAX_TESTABLE_BATCH_BYTES} and {@link #MAX_TESTABLE_ENTRIES_PER_BATCH}, and fail with a clear message
 * above them (declare the real limits).
 *
 * <p>Not thread-safe (JUnit creates one instance per test).
 */
public abstract class WalStorageProviderConformanceTest {

    /** The tree most tests write to. */
    protected static final String TREE = "conformance";
    /** Seed of the deterministic payloads. */
    protected static final long SEED = 20261130L;
    /** Payload size, in bytes, of the entries most tests append. */
    protected static final int SMALL = 48;
    /** Largest declared {@link ProviderLimits#maxEntryBytes()} the suite allocates an entry of: 64 MiB. */
    protected static final int MAX_TESTABLE_ENTRY_BYTES = 64 << 20;
    /** Largest declared {@link ProviderLimits#maxBatchBytes()} the suite builds a batch of: 256 MiB. */
    protected static final long MAX_TESTABLE_BATCH_BYTES = 256L << 20;
    /** Largest declared {@link ProviderLimits#maxEntriesPerBatch()} the suite builds a batch of. */
    protected static final int MAX_TESTABLE_ENTRIES_PER_BATCH = 1_000_000;
    /** Size of the checkpoint the round-trip test publishes: 5 MiB. */
    protected static final int BIG_CHECKPOINT_BYTES = 5 << 20;
    /** Smallest maxEntryBytes the suite's ordinary tests need: 16 KiB. */
    protected static final int MIN_ENTRY_BYTES = 16 << 10;
    /** Smallest maxBatchBytes the suite's ordinary tests need: 128 KiB. */
    protected static final long MIN_BATCH_BYTES = 128 << 10;
    /** Smallest maxEntriesPerBatch the suite's ordinary tests need. */
    protected static final int MIN_ENTRIES_PER_BATCH = 24;
    /** Smallest maxCheckpointBytes the suite's ordinary tests need: 1 MiB. */
    protected static final long MIN_CHECKPOINT_BYTES = 1 << 20;
    /** Upper bound on any wait for another thread; only turns a deadlock into a failure. */
    protected static final long HANG_GUARD_SECONDS = 300;
    /** Threads used by the concurrency tests. */
    protected static final int THREADS = 4;

    private ProviderUnderTest storage;
    private final List<WalStorageProvider> opened = new ArrayList<>();
    /** The provider instance tests currently use; replaced by {@link #reopen()}. */
    protected WalStorageProvider provider;

    /**
     * Creates a fresh, empty, isolated storage for the provider under test. Called once per test, before it runs;
     * the suite closes it after the test.
     *
     * @return the storage
     * @throws Exception when it cannot be created (the test fails)
     */
    protected abstract ProviderUnderTest newStorage() throws Exception;

    /**
     * The limits of the real service behind the provider, when they are stricter than what the test backend (an
     * emulator) enforces. When present, every provider instance the suite opens is wrapped in a
     * {@link LimitEnforcingProvider} with these limits, so a call the real service would refuse fails the test
     * instead of passing on a lenient emulator, and {@code Describe.declaredLimitsAreTestable} also checks that the
     * declared limits do not exceed them.
     *
     * @return the service limits; empty (the default) to run the provider undecorated
     */
    protected Optional<ProviderLimits> serviceLimits() {
        return Optional.empty();
    }

    @BeforeEach
    void openStorageAndProvider() throws Exception {
        storage = newStorage();
        assertThat(storage).as("newStorage() returned null").isNotNull();
        provider = track(storage.open());
    }

    @AfterEach
    void closeProvidersAndStorage() throws Exception {
        Exception failure = null;
        for (WalStorageProvider p : opened) {
            try {
                p.close();
            } catch (Exception e) {
                failure = e;
            }
        }
        opened.clear();
        if (storage != null) {
            storage.close();
        }
        if (failure != null) {
            throw failure;
        }
    }

    private WalStorageProvider track(WalStorageProvider p) {
        assertThat(p).as("ProviderUnderTest.open() returned null").isNotNull();
        Optional<ProviderLimits> service = serviceLimits();
        WalStorageProvider wrapped = service.isPresent() ? new LimitEnforcingProvider(p, service.get()) : p;
        opened.add(wrapped);
        return wrapped;
    }

    /**
     * The storage of the running test.
     *
     * @return the storage {@link #newStorage()} returned for this test
     */
    protected final ProviderUnderTest storage() {
        return storage;
    }

    /**
     * Closes {@link #provider} and opens a new instance over the same storage, which becomes {@link #provider}.
     *
     * @return the new instance
     * @throws Exception when opening fails
     */
    protected final WalStorageProvider reopen() throws Exception {
        provider.close();
        provider = track(storage.open());
        return provider;
    }

    /**
     * Reopens the provider and runs the engine's recovery on a log: {@code claim}, then {@code reconcile}.
     *
     * @param log the log
     * @return the new writer's fence
     * @throws Exception when opening fails
     */
    protected final Fence reopenAndRecover(LogId log) throws Exception {
        reopen();
        return claimAndReconcile(provider, log);
    }

    /**
     * Opens another provider instance over the same storage while {@link #provider} stays open. Only valid when
     * {@link ProviderUnderTest#supportsConcurrentInstances()}.
     *
     * @return the second instance, closed by the suite after the test
     * @throws Exception when opening fails
     * @throws IllegalStateException when the provider does not support concurrent instances
     */
    protected final WalStorageProvider openSecondInstance() throws Exception {
        if (!storage.supportsConcurrentInstances()) {
            throw new IllegalStateException("the provider under test does not support concurrent instances");
        }
        return track(storage.open());
    }

    /**
     * A log of {@link #TREE}.
     *
     * @param partition the partition
     * @return the log id
     */
    protected static LogId log(int partition) {
        return new LogId(TREE, partition);
    }

    /** @return the limits the provider under test declares */
    protected final ProviderLimits limits() {
        return provider.describe().limits();
    }

    /**
     * The engine's recovery step: claim the log, then reconcile it.
     *
     * @param p the provider
     * @param log the log
     * @return the fence
     */
    protected static Fence claimAndReconcile(WalStorageProvider p, LogId log) {
        Fence f = p.claim(log);
        ReconcileResult r = p.reconcile(log, f);
        assertThat(r.committedTail()).as("reconcile's committed tail").isEqualTo(p.state(log).committedTail());
        return f;
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
     * What a log looks like from outside: its committed state (without {@code physicalBytes}, which may move for
     * housekeeping), its entries and its latest checkpoint.
     *
     * @param lowestOffset {@link LogState#lowestOffset()}
     * @param committedTail {@link LogState#committedTail()}
     * @param trimWatermark {@link LogState#trimWatermark()}
     * @param epoch {@link LogState#epoch()}
     * @param retainedEntries {@link LogState#retainedEntries()}
     * @param retainedPayloadBytes {@link LogState#retainedPayloadBytes()}
     * @param entries every readable entry
     * @param checkpoint the latest checkpoint
     */
    protected record LogSnapshot(long lowestOffset, long committedTail, long trimWatermark, long epoch,
                                 long retainedEntries, long retainedPayloadBytes, List<LogEntry> entries,
                                 Optional<CheckpointInfo> checkpoint) {
    }

    /**
     * Takes a {@link LogSnapshot}.
     *
     * @param p the provider
     * @param log the log
     * @return the snapshot
     */
    protected static LogSnapshot snapshot(WalStorageProvider p, LogId log) {
        LogState s = p.state(log);
        return new LogSnapshot(s.lowestOffset(), s.committedTail(), s.trimWatermark(), s.epoch(),
                s.retainedEntries(), s.retainedPayloadBytes(), readAll(p, log), p.checkpoints().latest(log));
    }

    /**
     * Asserts that nothing observable changed, epoch included.
     *
     * @param before the earlier snapshot
     * @param after the later snapshot
     */
    protected static void assertUnchanged(LogSnapshot before, LogSnapshot after) {
        assertSameData(before, after);
        assertThat(after.epoch()).as("epoch").isEqualTo(before.epoch());
    }

    /**
     * Asserts that the log's data did not change (state, entries, latest checkpoint), ignoring the epoch, which a
     * claim after reopen raises.
     *
     * @param before the earlier snapshot
     * @param after the later snapshot
     */
    protected static void assertSameData(LogSnapshot before, LogSnapshot after) {
        assertSameEntries(after.entries(), before.entries());
        assertThat(after.committedTail()).as("committed tail").isEqualTo(before.committedTail());
        assertThat(after.lowestOffset()).as("lowest offset").isEqualTo(before.lowestOffset());
        assertThat(after.trimWatermark()).as("trim watermark").isEqualTo(before.trimWatermark());
        assertThat(after.retainedEntries()).as("retained entries").isEqualTo(before.retainedEntries());
        assertThat(after.retainedPayloadBytes()).as("retained payload bytes").isEqualTo(before.retainedPayloadBytes());
        assertThat(after.checkpoint()).as("latest checkpoint").isEqualTo(before.checkpoint());
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
        assertSameEntries(readAll(p, log), expected);
        LogState s = p.state(log);
        assertThat(s.committedTail()).as("committed tail of " + log).isEqualTo(expectedTail);
        assertThat(s.retainedEntries()).as("retained entries of " + log).isEqualTo(expected.size());
        assertThat(s.retainedPayloadBytes()).as("retained payload bytes of " + log)
                .isEqualTo(expected.stream().mapToLong(e -> e.payload().length).sum());
        assertThat(s.lowestOffset()).as("lowest offset of " + log)
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
        if (actual.size() == expected.size()) {
            assertSameEntries(actual, expected);
            return 0;
        }
        for (int k = 0; k < candidates.size(); k++) {
            expected.addAll(entriesOf(candidates.get(k)));
            if (actual.size() == expected.size()) {
                assertSameEntries(actual, expected);
                return k + 1;
            }
        }
        throw new AssertionError(log + " holds " + actual.size() + " entries: neither the " + base.size()
                + " committed before nor those plus whole uncommitted batches (" + candidates
                + "); a batch is partly visible");
    }

    private static void assertFenced(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOf(FencedException.class);
    }

    private static void assertConflict(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOf(OffsetConflictException.class);
    }

    /**
     * A stale writer's stage: either refused at once with {@link FencedException} or {@link OffsetConflictException}
     * (when it overlaps committed data), or accepted without any visible effect.
     */
    private static void staleStage(WalStorageProvider p, LogId log, Fence stale, EncodedBatch b) {
        try {
            p.stage(log, stale, b);
        } catch (FencedException | OffsetConflictException expected) {
            return;
        }
    }

    private static InputStream bytes(byte[] b) {
        return new ByteArrayInputStream(b);
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
    }

    // =================================================================================================================

    /** The descriptor: present, constant, sane, available after close. */
    @Nested
    class Describe {

        /** describe() returns a complete descriptor, the same on every call, also after close. */
        @Test
        void descriptorIsCompleteAndConstant() {
            ProviderDescriptor d = provider.describe();
            assertThat(d.name()).isNotBlank();
            assertThat(d.version()).isNotBlank();
            assertThat(d.limits().maxBatchBytes()).isGreaterThanOrEqualTo(d.limits().maxEntryBytes());
            assertThat(provider.describe()).isEqualTo(d);
            provider.close();
            assertThat(provider.describe()).isEqualTo(d);
        }

        /**
         * The declared limits leave room for the suite's ordinary tests (entries up to {@link #MIN_ENTRY_BYTES} bytes,
         * batches up to {@link #MIN_ENTRIES_PER_BATCH} entries and {@link #MIN_BATCH_BYTES} bytes, checkpoints up
         * to {@link #MIN_CHECKPOINT_BYTES} bytes).
         */
        @Test
        void declaredLimitsFitTheSuite() {
            ProviderLimits l = limits();
            assertThat(l.maxEntryBytes()).as("maxEntryBytes").isGreaterThanOrEqualTo(MIN_ENTRY_BYTES);
            assertThat(l.maxBatchBytes()).as("maxBatchBytes").isGreaterThanOrEqualTo(MIN_BATCH_BYTES);
            assertThat(l.maxEntriesPerBatch()).as("maxEntriesPerBatch").isGreaterThanOrEqualTo(MIN_ENTRIES_PER_BATCH);
            assertThat(l.maxCheckpointBytes()).as("maxCheckpointBytes").isGreaterThanOrEqualTo(MIN_CHECKPOINT_BYTES);
        }

        /** The declared limits are within what the suite can test, so every boundary below is really exercised. */
        @Test
        void declaredLimitsAreTestable() {
            ProviderLimits l = limits();
            assertThat(l.maxEntryBytes()).as("declared maxEntryBytes (declare the real limit)")
                    .isLessThanOrEqualTo(MAX_TESTABLE_ENTRY_BYTES);
            assertThat(Math.min(l.maxBatchBytes(), (long) l.maxEntryBytes() * l.maxEntriesPerBatch()))
                    .as("largest batch that fits the declared limits (declare the real limit)")
                    .isLessThanOrEqualTo(MAX_TESTABLE_BATCH_BYTES);
            assertThat(l.maxEntriesPerBatch()).as("declared maxEntriesPerBatch (declare the real limit)")
                    .isLessThanOrEqualTo(MAX_TESTABLE_ENTRIES_PER_BATCH);
            serviceLimits().ifPresent(service -> LimitEnforcingProvider.assertWithin(l, service));
        }
    }

    // =================================================================================================================

    /** Append and read back, byte-exact, up to the declared limits; one byte or one entry more is refused. */
    @Nested
    class RoundTrip {

        /** Batches appended one after another read back byte-exact, with the state's counters matching. */
        @Test
        void appendedBatchesReadBackByteExact() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> batches = appendBatches(provider, f, 3, 5, 100);
            EncodedBatch varied = variedBatch(SEED, 15, 12, 37);
            provider.append(log, f, varied);
            batches.add(varied);
            List<LogEntry> expected = entriesOf(batches);
            assertLogHolds(provider, log, expected, 26);
            assertThat(provider.state(log).trimWatermark()).isEqualTo(-1);
            reopenAndRecover(log);
            assertLogHolds(provider, log, expected, 26);
        }

        /** Empty payloads are entries like any other: stored, counted, read back empty. */
        @Test
        void emptyPayloadsRoundTrip() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch empties = EncodedBatch.of(0, BatchId.random(), List.of(new byte[0], new byte[0], new byte[0]));
            EncodedBatch mixed = EncodedBatch.of(3, BatchId.random(), List.of(new byte[0], payload(SEED, 4, 5),
                    new byte[0]));
            provider.append(log, f, empties);
            provider.append(log, f, mixed);
            assertLogHolds(provider, log, entriesOf(empties, mixed), 5);
            assertThat(provider.state(log).retainedPayloadBytes()).isEqualTo(5);
            ReadPage one = provider.read(log, 0, 1, 1);
            assertThat(one.entries()).hasSize(1);
            assertThat(one.entries().get(0).offset()).isEqualTo(1);
            assertThat(one.entries().get(0).payload()).isEmpty();
            reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(empties, mixed), 5);
        }

        /** An entry of exactly maxEntryBytes round-trips; one byte more is refused before any I/O. */
        @Test
        void entryAtMaxEntryBytesRoundTripsAndOneMoreByteIsRefused() throws Exception {
            ProviderLimits l = limits();
            assertThat(l.maxEntryBytes()).isLessThanOrEqualTo(MAX_TESTABLE_ENTRY_BYTES);
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            provider.append(log, f, batch(SEED, 0, 2, SMALL));
            LogSnapshot before = snapshot(provider, log);

            EncodedBatch tooBig = EncodedBatch.of(2, BatchId.random(), List.of(randomBytes(SEED, l.maxEntryBytes() + 1)));
            Throwable t = catchThrowable(() -> provider.append(log, f, tooBig));
            assertThat(t).isInstanceOf(EntryTooLargeException.class);
            EntryTooLargeException e = (EntryTooLargeException) t;
            assertThat(e.limitBytes()).isEqualTo(l.maxEntryBytes());
            assertThat(e.sizeBytes()).isEqualTo(l.maxEntryBytes() + 1L);
            assertThat(e).hasMessageContaining(String.valueOf(l.maxEntryBytes()));
            assertUnchanged(before, snapshot(provider, log));

            EncodedBatch atMax = EncodedBatch.of(2, BatchId.random(), List.of(randomBytes(SEED + 1, l.maxEntryBytes())));
            provider.append(log, f, atMax);
            List<LogEntry> expected = new ArrayList<>(before.entries());
            expected.addAll(entriesOf(atMax));
            assertLogHolds(provider, log, expected, 2);
            reopenAndRecover(log);
            assertLogHolds(provider, log, expected, 2);
        }

        /** A batch of exactly maxEntriesPerBatch entries round-trips; one entry more is refused before any I/O. */
        @Test
        void batchAtMaxEntriesRoundTripsAndOneMoreEntryIsRefused() throws Exception {
            ProviderLimits l = limits();
            assertThat(l.maxEntriesPerBatch()).isLessThanOrEqualTo(MAX_TESTABLE_ENTRIES_PER_BATCH);
            int n = l.maxEntriesPerBatch();
            int size = (int) Math.min(8, Math.min(l.maxEntryBytes(), l.maxBatchBytes() / (n + 1L)));
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            LogSnapshot before = snapshot(provider, log);

            EncodedBatch tooMany = batch(SEED, 0, n + 1, size);
            assertThatThrownBy(() -> provider.append(log, f, tooMany)).isInstanceOf(BatchTooLargeException.class)
                    .hasMessageContaining(String.valueOf(n));
            assertUnchanged(before, snapshot(provider, log));

            EncodedBatch full = batch(SEED + 1, 0, n, size);
            provider.append(log, f, full);
            assertLogHolds(provider, log, entriesOf(full), n - 1);
        }

        /** A batch of exactly maxBatchBytes round-trips; one byte more is refused before any I/O. */
        @Test
        void batchAtMaxBatchBytesRoundTripsAndOneMoreByteIsRefused() throws Exception {
            ProviderLimits l = limits();
            long reachable = Math.min(l.maxBatchBytes(), (long) l.maxEntryBytes() * l.maxEntriesPerBatch());
            assertThat(reachable).isLessThanOrEqualTo(MAX_TESTABLE_BATCH_BYTES);
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            LogSnapshot before = snapshot(provider, log);

            List<byte[]> atMax = new ArrayList<>();
            long left = reachable;
            int piece = 0;
            while (left > 0) {
                int len = (int) Math.min(left, l.maxEntryBytes());
                atMax.add(randomBytes(SEED + ++piece, len));
                left -= len;
            }
            if (reachable == l.maxBatchBytes()) {
                // One byte more, in a batch that breaks no other limit.
                List<byte[]> over = new ArrayList<>(atMax);
                int lastIndex = over.size() - 1;
                if (over.get(lastIndex).length < l.maxEntryBytes()) {
                    over.set(lastIndex, randomBytes(SEED + 99, over.get(lastIndex).length + 1));
                } else {
                    over.add(new byte[] {1});
                }
                if (over.size() <= l.maxEntriesPerBatch()) {
                    EncodedBatch tooBig = EncodedBatch.of(0, BatchId.random(), over);
                    assertThat(tooBig.payloadBytes()).isEqualTo(l.maxBatchBytes() + 1);
                    assertThatThrownBy(() -> provider.append(log, f, tooBig))
                            .isInstanceOf(BatchTooLargeException.class)
                            .hasMessageContaining(String.valueOf(l.maxBatchBytes()));
                    assertUnchanged(before, snapshot(provider, log));
                }
            }
            EncodedBatch b = EncodedBatch.of(0, BatchId.random(), atMax);
            assertThat(b.payloadBytes()).isEqualTo(reachable);
            provider.append(log, f, b);
            assertLogHolds(provider, log, entriesOf(b), b.lastOffset());
        }

        /**
         * Limits are checked before any I/O: an oversized batch is refused with the size exception even with a stale
         * fence or at an offset that would conflict, and a refused stage leaves nothing to commit.
         */
        @Test
        void limitsAreCheckedBeforeFenceAndOffsets() {
            ProviderLimits l = limits();
            assertThat(l.maxEntryBytes()).isLessThanOrEqualTo(MAX_TESTABLE_ENTRY_BYTES);
            LogId log = log(0);
            Fence stale = claimAndReconcile(provider, log);
            Fence f = claimAndReconcile(provider, log);
            provider.append(log, f, batch(SEED, 0, 3, SMALL));
            LogSnapshot before = snapshot(provider, log);
            EncodedBatch tooBig = EncodedBatch.of(3, BatchId.random(), List.of(new byte[l.maxEntryBytes() + 1]));
            EncodedBatch tooBigWithGap = EncodedBatch.of(10, BatchId.random(), List.of(new byte[l.maxEntryBytes() + 1]));
            EncodedBatch tooBigOverlap = EncodedBatch.of(1, BatchId.random(), List.of(new byte[l.maxEntryBytes() + 1]));
            assertThatThrownBy(() -> provider.stage(log, stale, tooBig)).isInstanceOf(EntryTooLargeException.class);
            assertThatThrownBy(() -> provider.stage(log, f, tooBigWithGap)).isInstanceOf(EntryTooLargeException.class);
            assertThatThrownBy(() -> provider.stage(log, f, tooBigOverlap)).isInstanceOf(EntryTooLargeException.class);
            assertThatThrownBy(() -> provider.stage(log, f, tooBig)).isInstanceOf(EntryTooLargeException.class);
            assertConflict(() -> provider.commit(log, f, 3));
            assertUnchanged(before, snapshot(provider, log));
        }
    }

    // =================================================================================================================

    /** Offsets stay dense: gaps and overlaps are refused and leave the log unchanged, also after reopen. */
    @Nested
    class Density {

        /** An append that leaves a gap after the tail is refused; the log is unchanged, also after reopen. */
        @Test
        void appendWithGapAfterTailIsRefused() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 2, 3, SMALL);
            LogSnapshot before = snapshot(provider, log);
            assertConflict(() -> provider.append(log, f, batch(SEED, 7, 2, SMALL)));
            assertUnchanged(before, snapshot(provider, log));
            assertConflict(() -> provider.append(log, f, batch(SEED, 1000, 1, SMALL)));
            assertUnchanged(before, snapshot(provider, log));
            Fence f2 = reopenAndRecover(log);
            assertSameData(before, snapshot(provider, log));
            EncodedBatch next = batch(SEED, 6, 2, SMALL);
            provider.append(log, f2, next);
            List<LogEntry> expected = new ArrayList<>(before.entries());
            expected.addAll(entriesOf(next));
            assertLogHolds(provider, log, expected, 7);
        }

        /** A gap on a never-written log (first offset above 0) is refused too. */
        @Test
        void appendWithGapOnEmptyLogIsRefused() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            LogSnapshot before = snapshot(provider, log);
            assertConflict(() -> provider.append(log, f, batch(SEED, 1, 2, SMALL)));
            assertUnchanged(before, snapshot(provider, log));
            reopenAndRecover(log);
            assertSameData(before, snapshot(provider, log));
            assertThat(provider.state(log).committedTail()).isEqualTo(-1);
        }

        /** A batch overlapping committed offsets is refused unless it is that very batch (same id and range). */
        @Test
        void batchOverlappingCommittedOffsetsIsRefused() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> committed = appendBatches(provider, f, 2, 5, SMALL); // 0..9
            LogSnapshot before = snapshot(provider, log);
            assertConflict(() -> provider.stage(log, f, batch(SEED + 5, 8, 5, SMALL)));   // 8..12
            assertConflict(() -> provider.stage(log, f, batch(SEED + 5, 9, 1, SMALL)));   // 9..9
            assertConflict(() -> provider.stage(log, f, batch(SEED + 5, 5, 5, SMALL)));   // same range, other id
            assertConflict(() -> provider.stage(log, f, batch(SEED + 5, 0, 2, SMALL)));   // 0..1
            EncodedBatch sameIdOtherRange = EncodedBatch.of(5, committed.get(1).batchId(),
                    committed.get(1).entries().subList(0, 3));
            assertConflict(() -> provider.stage(log, f, sameIdOtherRange));
            assertConflict(() -> provider.append(log, f, batch(SEED + 5, 9, 3, SMALL)));
            assertUnchanged(before, snapshot(provider, log));
            reopenAndRecover(log);
            assertSameData(before, snapshot(provider, log));
        }

        /** A batch overlapping a staged batch with another id (or another range) is refused; the first survives. */
        @Test
        void batchOverlappingAnotherStagedBatchIsRefused() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> committed = appendBatches(provider, f, 1, 5, SMALL); // 0..4
            EncodedBatch a = batch(SEED + 1, 5, 5, SMALL);                           // 5..9
            provider.stage(log, f, a);
            LogSnapshot before = snapshot(provider, log);
            assertConflict(() -> provider.stage(log, f, batch(SEED + 2, 7, 5, SMALL)));   // 7..11
            assertConflict(() -> provider.stage(log, f, batch(SEED + 2, 5, 5, SMALL)));   // same range, other id
            assertConflict(() -> provider.stage(log, f, batch(SEED + 2, 9, 1, SMALL)));   // 9..9
            assertConflict(() -> provider.stage(log, f, batch(SEED + 2, 3, 3, SMALL)));   // 3..5: committed + staged
            EncodedBatch sameIdShorter = EncodedBatch.of(5, a.batchId(), a.entries().subList(0, 2));
            assertConflict(() -> provider.stage(log, f, sameIdShorter));
            assertUnchanged(before, snapshot(provider, log));
            provider.commit(log, f, 9);
            assertLogHolds(provider, log, entriesOf(committed.get(0), a), 9);
            reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(committed.get(0), a), 9);
        }

        /** Stages of consecutive batches may complete in any order; one commit then covers them all. */
        @Test
        void stagesOfConsecutiveBatchesMayCompleteInAnyOrder() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch b1 = batch(SEED, 0, 3, SMALL);
            EncodedBatch b2 = batch(SEED, 3, 4, SMALL);
            EncodedBatch b3 = batch(SEED, 7, 2, SMALL);
            provider.stage(log, f, b3);
            provider.stage(log, f, b2);
            assertConflict(() -> provider.commit(log, f, 8));
            provider.stage(log, f, b1);
            provider.commit(log, f, 8);
            assertLogHolds(provider, log, entriesOf(b1, b2, b3), 8);
            reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(b1, b2, b3), 8);
        }

        /**
         * A commit through an offset with an unstaged offset at or below it is refused and commits nothing, not even
         * the staged batches below the gap; commit through the last offset before the gap then works.
         */
        @Test
        void commitOverAnUnstagedOffsetIsRefusedAndCommitsNothing() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> committed = appendBatches(provider, f, 1, 2, SMALL); // 0..1
            EncodedBatch a = batch(SEED + 1, 2, 2, SMALL);   // 2..3
            EncodedBatch c = batch(SEED + 1, 6, 2, SMALL);   // 6..7, gap 4..5
            provider.stage(log, f, a);
            provider.stage(log, f, c);
            LogSnapshot before = snapshot(provider, log);
            assertConflict(() -> provider.commit(log, f, 7));
            assertUnchanged(before, snapshot(provider, log));
            assertConflict(() -> provider.commit(log, f, 5));
            assertConflict(() -> provider.commit(log, f, 4));
            assertUnchanged(before, snapshot(provider, log));
            provider.commit(log, f, 3);
            assertLogHolds(provider, log, entriesOf(committed.get(0), a), 3);
            reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(committed.get(0), a), 3);
        }

        /** Commit through an offset inside a staged batch is refused: batches are committed whole. */
        @Test
        void commitInsideAStagedBatchIsRefused() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = batch(SEED, 0, 4, SMALL);
            provider.stage(log, f, a);
            LogSnapshot before = snapshot(provider, log);
            assertConflict(() -> provider.commit(log, f, 0));
            assertConflict(() -> provider.commit(log, f, 2));
            assertUnchanged(before, snapshot(provider, log));
            provider.commit(log, f, 3);
            assertLogHolds(provider, log, entriesOf(a), 3);
        }

        /** Commit above the tail with nothing staged is refused. */
        @Test
        void commitWithNothingStagedIsRefused() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            assertConflict(() -> provider.commit(log, f, 0));
            appendBatches(provider, f, 1, 2, SMALL);
            LogSnapshot before = snapshot(provider, log);
            assertConflict(() -> provider.commit(log, f, 2));
            assertConflict(() -> provider.commit(log, f, 50));
            assertUnchanged(before, snapshot(provider, log));
        }
    }

    // =================================================================================================================

    /** Stage then commit: invisible until committed, committed exactly up to the offset asked, aborts drop. */
    @Nested
    class TwoPhase {

        /** A staged batch is invisible to read and state until committed. */
        @Test
        void stagedBatchesAreInvisible() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> committed = appendBatches(provider, f, 1, 3, SMALL);
            LogSnapshot before = snapshot(provider, log);
            StagedBatch receipt = provider.stage(log, f, batch(SEED + 1, 3, 4, SMALL));
            assertThat(receipt.log()).isEqualTo(log);
            assertThat(receipt.epoch()).isEqualTo(f.epoch());
            assertThat(receipt.firstOffset()).isEqualTo(3);
            assertThat(receipt.lastOffset()).isEqualTo(6);
            assertUnchanged(before, snapshot(provider, log));
            assertThat(provider.read(log, 2, 10, 1 << 20).isEmpty()).isTrue();
            assertThat(provider.read(log, 2, 10, 1 << 20).committedTail()).isEqualTo(2);
            assertLogHolds(provider, log, entriesOf(committed), 2);
        }

        /** commit(through) publishes exactly the staged batches up to through, in order; later ones stay invisible. */
        @Test
        void commitPublishesExactlyUpToThrough() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = batch(SEED, 0, 2, SMALL);
            EncodedBatch b = variedBatch(SEED, 2, 5, 11);
            EncodedBatch c = batch(SEED, 7, 3, SMALL);
            EncodedBatch d = batch(SEED, 10, 1, SMALL);
            provider.stage(log, f, a);
            provider.stage(log, f, b);
            provider.stage(log, f, c);
            provider.stage(log, f, d);
            provider.commit(log, f, 6);
            assertLogHolds(provider, log, entriesOf(a, b), 6);
            assertThat(provider.read(log, 6, 100, 1 << 20).isEmpty()).isTrue();
            provider.commit(log, f, 9);
            assertLogHolds(provider, log, entriesOf(a, b, c), 9);
            provider.commit(log, f, 10);
            assertLogHolds(provider, log, entriesOf(a, b, c, d), 10);
            reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(a, b, c, d), 10);
        }

        /** Committing an offset at or below the tail is a no-op, any number of times. */
        @Test
        void commitIsIdempotent() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            provider.commit(log, f, -1);
            assertThat(provider.state(log).committedTail()).isEqualTo(-1);
            EncodedBatch a = batch(SEED, 0, 3, SMALL);
            provider.stage(log, f, a);
            provider.commit(log, f, 2);
            LogSnapshot after = snapshot(provider, log);
            provider.commit(log, f, 2);
            provider.commit(log, f, 2);
            provider.commit(log, f, 0);
            provider.commit(log, f, -1);
            assertUnchanged(after, snapshot(provider, log));
            assertLogHolds(provider, log, entriesOf(a), 2);
        }

        /** abort drops a staged batch; other content can then be staged and committed at those offsets. */
        @Test
        void abortDropsAStagedBatch() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> committed = appendBatches(provider, f, 1, 2, SMALL);
            EncodedBatch a = batch(SEED + 1, 2, 3, SMALL);
            StagedBatch receipt = provider.stage(log, f, a);
            LogSnapshot before = snapshot(provider, log);
            provider.abort(log, f, receipt);
            assertUnchanged(before, snapshot(provider, log));
            assertConflict(() -> provider.commit(log, f, 4));
            provider.abort(log, f, receipt); // already aborted: ignored
            EncodedBatch other = batch(SEED + 2, 2, 2, SMALL * 2);
            provider.stage(log, f, other);
            provider.commit(log, f, 3);
            assertLogHolds(provider, log, entriesOf(committed.get(0), other), 3);
            provider.abort(log, f, receipt); // now overlaps committed data: still ignored
            assertLogHolds(provider, log, entriesOf(committed.get(0), other), 3);
            reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(committed.get(0), other), 3);
        }

        /** abort of a committed batch's receipt changes nothing. */
        @Test
        void abortOfACommittedBatchIsIgnored() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = batch(SEED, 0, 3, SMALL);
            StagedBatch receipt = provider.stage(log, f, a);
            provider.commit(log, f, 2);
            LogSnapshot before = snapshot(provider, log);
            provider.abort(log, f, receipt);
            assertUnchanged(before, snapshot(provider, log));
        }

        /** abort drops only the batch it names: a neighbouring staged batch still commits. */
        @Test
        void abortLeavesOtherStagedBatches() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = batch(SEED, 0, 2, SMALL);
            EncodedBatch b = batch(SEED, 2, 2, SMALL);
            provider.stage(log, f, a);
            StagedBatch rb = provider.stage(log, f, b);
            provider.abort(log, f, rb);
            provider.commit(log, f, 1);
            assertLogHolds(provider, log, entriesOf(a), 1);
            assertConflict(() -> provider.commit(log, f, 3));
        }

        /**
         * A batch staged and never committed, then close, reopen, claim and reconcile: the log holds nothing of it or
         * all of it (a provider with {@link ProviderFeature#DEFERRED_STAGE} loses it), and the next append continues
         * densely after whatever the tail is.
         */
        @Test
        void stagedBatchAcrossReopenIsAllOrNothing() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> committed = appendBatches(provider, f, 2, 3, SMALL);
            EncodedBatch pending1 = batch(SEED + 1, 6, 4, SMALL);
            EncodedBatch pending2 = batch(SEED + 1, 10, 3, SMALL);
            provider.stage(log, f, pending1);
            provider.stage(log, f, pending2);
            boolean deferred = provider.describe().has(ProviderFeature.DEFERRED_STAGE);
            Fence f2 = reopenAndRecover(log);
            int kept = assertBasePlusWholeBatchPrefix(provider, log, entriesOf(committed), List.of(pending1, pending2));
            if (deferred) {
                assertThat(kept).as("a DEFERRED_STAGE provider keeps staged batches in memory only").isZero();
            }
            LogState s = provider.state(log);
            assertThat(s.committedTail()).isIn(5L, 9L, 12L);
            EncodedBatch next = batch(SEED + 2, s.nextOffset(), 2, SMALL);
            assertConflict(() -> provider.append(log, f2, batch(SEED + 3, s.nextOffset() + 1, 2, SMALL)));
            provider.append(log, f2, next);
            List<EncodedBatch> expected = new ArrayList<>(committed);
            expected.addAll(List.of(pending1, pending2).subList(0, kept));
            expected.add(next);
            assertLogHolds(provider, log, entriesOf(expected), next.lastOffset());
        }

        /**
         * A batch staged by a writer that is then replaced (a new claim, same instance) never becomes visible
         * through the new writer's commit; after reconcile the new writer continues densely.
         */
        @Test
        void stagedBatchOfAReplacedWriterIsNotCommittedByTheNewOne() {
            LogId log = log(0);
            Fence f1 = claimAndReconcile(provider, log);
            List<EncodedBatch> committed = appendBatches(provider, f1, 1, 3, SMALL);
            EncodedBatch pending = batch(SEED + 1, 3, 3, SMALL);
            provider.stage(log, f1, pending);
            Fence f2 = claimAndReconcile(provider, log);
            assertConflict(() -> provider.commit(log, f2, 5));
            assertLogHolds(provider, log, entriesOf(committed), 2);
            EncodedBatch next = batch(SEED + 2, 3, 2, SMALL);
            provider.append(log, f2, next);
            assertLogHolds(provider, log, entriesOf(committed.get(0), next), 4);
        }
    }

    // =================================================================================================================

    /** A retried write that had landed (same batch id) is success and is stored once. */
    @Nested
    class IdempotentRetry {

        /** Staging the same batch twice is success; it is committed and stored once. */
        @Test
        void stagingTheSameBatchTwiceStoresItOnce() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = batch(SEED, 0, 4, SMALL);
            StagedBatch r1 = provider.stage(log, f, a);
            StagedBatch r2 = provider.stage(log, f, batch(SEED, 0, 4, SMALL)); // equal rebuild: same id and bytes
            assertThat(r2).isEqualTo(r1);
            provider.commit(log, f, 3);
            assertLogHolds(provider, log, entriesOf(a), 3);
            reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(a), 3);
        }

        /** Re-staging a batch that was committed meanwhile (same id) is success, and the commit is a no-op. */
        @Test
        void reStagingACommittedBatchIsSuccessAndCommitIsANoOp() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = batch(SEED, 0, 4, SMALL);
            EncodedBatch b = batch(SEED, 4, 2, SMALL);
            provider.append(log, f, a);
            provider.append(log, f, b);
            LogSnapshot before = snapshot(provider, log);
            provider.stage(log, f, a);
            provider.commit(log, f, a.lastOffset());
            provider.stage(log, f, b);
            provider.commit(log, f, b.lastOffset());
            provider.append(log, f, b);   // a whole retried append
            assertUnchanged(before, snapshot(provider, log));
            Fence f2 = reopenAndRecover(log);
            provider.append(log, f2, b);  // a retry by the next writer after recovery
            assertSameData(before, snapshot(provider, log));
        }

        /** The same offsets with another batch id are a conflict, staged or committed. */
        @Test
        void sameOffsetsWithAnotherBatchIdConflict() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = batch(SEED, 0, 3, SMALL);
            provider.append(log, f, a);
            EncodedBatch sameBytesOtherId = EncodedBatch.of(0, BatchId.random(), a.entries());
            assertConflict(() -> provider.stage(log, f, sameBytesOtherId));
            EncodedBatch b = batch(SEED, 3, 3, SMALL);
            provider.stage(log, f, b);
            assertConflict(() -> provider.stage(log, f, EncodedBatch.of(3, BatchId.random(), b.entries())));
            provider.commit(log, f, 5);
            assertLogHolds(provider, log, entriesOf(a, b), 5);
        }

        /** Retrying each step of a two-phase append any number of times gives one copy of the batch. */
        @Test
        void retryingEveryStepGivesOneCopy() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = batch(SEED, 0, 3, SMALL);
            EncodedBatch b = batch(SEED, 3, 3, SMALL);
            for (int i = 0; i < 3; i++) {
                provider.stage(log, f, b);
                provider.stage(log, f, a);
            }
            for (int i = 0; i < 3; i++) {
                provider.commit(log, f, 5);
                provider.stage(log, f, a);
                provider.stage(log, f, b);
            }
            assertLogHolds(provider, log, entriesOf(a, b), 5);
        }
    }

    // =================================================================================================================

    /** Fencing: the newest claim wins, stale writers fail loudly and change nothing. */
    @Nested
    class Fencing {

        /** Epochs strictly increase across claims and across reopen; state reports the current one. */
        @Test
        void epochsStrictlyIncreaseAcrossClaimsAndReopen() throws Exception {
            LogId log = log(0);
            assertThat(provider.state(log).epoch()).isZero();
            long last = 0;
            for (int i = 0; i < 3; i++) {
                Fence f = provider.claim(log);
                assertThat(f.log()).isEqualTo(log);
                assertThat(f.epoch()).isGreaterThan(last);
                assertThat(provider.state(log).epoch()).isEqualTo(f.epoch());
                last = f.epoch();
            }
            Fence g = provider.claim(log);
            appendBatches(provider, g, 1, 2, SMALL);
            last = g.epoch();
            for (int i = 0; i < 2; i++) {
                reopen();
                assertThat(provider.state(log).epoch()).isEqualTo(last);
                Fence f = provider.claim(log);
                assertThat(f.epoch()).isGreaterThan(last);
                last = f.epoch();
            }
            assertThat(provider.state(log(1)).epoch()).as("claims on one log leave others alone").isZero();
        }

        /** A claim changes neither committed data nor checkpoints. */
        @Test
        void claimChangesNoData() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 2, 2, SMALL);
            provider.checkpoints().publish(log, f, 1, 0, bytes(randomBytes(SEED, 100)));
            LogSnapshot before = snapshot(provider, log);
            Fence g = provider.claim(log);
            assertThat(g.epoch()).isGreaterThan(f.epoch());
            assertSameData(before, snapshot(provider, log));
        }

        /** The scenario on one provider instance with two fences. */
        @Test
        void staleWriterChangesNothingOnOneInstance() {
            staleWriterChangesNothing(provider, provider);
        }

        /**
         * The scenario with the stale and the new writer on two provider instances over the same storage, like two
         * processes (on one instance with two fences when the provider cannot open two at once).
         */
        @Test
        void staleWriterChangesNothingAcrossInstances() throws Exception {
            WalStorageProvider second = storage.supportsConcurrentInstances() ? openSecondInstance() : provider;
            staleWriterChangesNothing(provider, second);
        }

        /** A stale fence obtained before a reopen is stale after it too. */
        @Test
        void staleFenceStaysStaleAcrossReopen() throws Exception {
            LogId log = log(0);
            Fence old = claimAndReconcile(provider, log);
            appendBatches(provider, old, 1, 2, SMALL);
            Fence current = reopenAndRecover(log);
            LogSnapshot before = snapshot(provider, log);
            assertFenced(() -> provider.commit(log, old, 1));
            assertFenced(() -> provider.trim(log, old, 0));
            assertFenced(() -> provider.reconcile(log, old));
            assertFenced(() -> provider.checkpoints().publish(log, old, 1, 0, bytes(new byte[3])));
            staleStage(provider, log, old, batch(SEED + 9, 2, 2, SMALL));
            assertFenced(() -> provider.commit(log, old, 3));
            assertUnchanged(before, snapshot(provider, log));
            EncodedBatch next = batch(SEED + 3, 2, 2, SMALL);
            provider.append(log, current, next);
            List<LogEntry> expected = new ArrayList<>(before.entries());
            expected.addAll(entriesOf(next));
            assertLogHolds(provider, log, expected, 3);
        }

        /** The stale writer's exception names the epochs. */
        @Test
        void fencedExceptionNamesTheStaleEpoch() {
            LogId log = log(0);
            Fence old = provider.claim(log);
            Fence current = provider.claim(log);
            Throwable t = catchThrowable(() -> provider.commit(log, old, -1));
            assertThat(t).isInstanceOf(FencedException.class);
            FencedException e = (FencedException) t;
            assertThat(e.staleEpoch()).isEqualTo(old.epoch());
            assertThat(e.currentEpoch()).isIn(-1L, current.epoch());
            assertThat(e.log()).isEqualTo(log);
        }
    }

    /**
     * Writer A (on {@code pa}) is replaced by writer B (on {@code pb}) while A is stalled; A wakes up and tries
     * everything. B's committed data, staged batches, checkpoints and trims must be untouched, and every A call that
     * must be fenced is.
     */
    private void staleWriterChangesNothing(WalStorageProvider pa, WalStorageProvider pb) {
        LogId log = log(0);
        Fence fa = claimAndReconcile(pa, log);
        List<EncodedBatch> base = appendBatches(pa, fa, 2, 3, SMALL);               // 0..5
        pa.checkpoints().publish(log, fa, 2, 1, bytes(randomBytes(SEED, 1000)));
        EncodedBatch aPending = batch(SEED + 11, 6, 3, SMALL);                       // A staged 6..8 before B
        StagedBatch aReceipt = pa.stage(log, fa, aPending);

        Fence fb = claimAndReconcile(pb, log);
        assertThat(fb.epoch()).isGreaterThan(fa.epoch());
        // A stalled in the middle of a stage: its stage lands after B's claim and reconcile.
        staleStage(pa, log, fa, batch(SEED + 12, 6, 4, SMALL));                      // 6..9
        // B stages over the offsets A used: must work (older-epoch leftovers give way).
        EncodedBatch bStaged = batch(SEED + 13, 6, 2, SMALL);                        // 6..7
        pb.stage(log, fb, bStaged);
        LogSnapshot before = snapshot(pb, log);

        // Every fenced call of A fails and changes nothing.
        assertFenced(() -> pa.commit(log, fa, 7));
        assertFenced(() -> pa.commit(log, fa, 8));
        assertFenced(() -> pa.commit(log, fa, 5));
        assertFenced(() -> pa.commit(log, fa, -1));
        assertFenced(() -> pa.trim(log, fa, 3));
        assertFenced(() -> pa.trim(log, fa, 100));
        assertFenced(() -> pa.reconcile(log, fa));
        assertFenced(() -> pa.checkpoints().publish(log, fa, 5, 1, bytes(randomBytes(SEED + 1, 2000))));
        // A's abort and further stages: refused at once or without effect on B's batch.
        try {
            pa.abort(log, fa, aReceipt);
        } catch (FencedException expected) {
            // allowed: the provider can tell
        }
        try {
            pa.abort(log, fa, new StagedBatch(log, fa.epoch(), 6, 7, bStaged.batchId()));
        } catch (FencedException expected) {
            // allowed
        }
        staleStage(pa, log, fa, batch(SEED + 14, 6, 2, SMALL));                      // exactly B's offsets
        staleStage(pa, log, fa, batch(SEED + 15, 8, 3, SMALL));                      // above B's staged batch
        assertFenced(() -> pa.commit(log, fa, 10));
        assertUnchanged(before, snapshot(pb, log));

        // B's staged batch is intact: B commits it and gets exactly its own bytes.
        pb.commit(log, fb, 7);
        List<LogEntry> expected = entriesOf(base.get(0), base.get(1), bStaged);
        assertLogHolds(pb, log, expected, 7);
        // B stages where A's leftovers may lie (8..10) and commits.
        EncodedBatch bNext = batch(SEED + 16, 8, 3, SMALL);
        pb.stage(log, fb, bNext);
        pb.commit(log, fb, 10);
        expected = entriesOf(base.get(0), base.get(1), bStaged, bNext);
        assertLogHolds(pb, log, expected, 10);

        // B checkpoints and trims; A, still stalled, stages at committed and trimmed offsets and publishes.
        byte[] bCheckpoint = randomBytes(SEED + 2, 3000);
        CheckpointInfo bInfo = pb.checkpoints().publish(log, fb, 7, 2, bytes(bCheckpoint));
        assertThat(bInfo.epoch()).isEqualTo(fb.epoch());
        pb.trim(log, fb, 4);
        LogSnapshot afterTrim = snapshot(pb, log);
        staleStage(pa, log, fa, batch(SEED + 17, 2, 3, SMALL));                      // below the watermark
        staleStage(pa, log, fa, batch(SEED + 18, 9, 3, SMALL));                      // over committed 9..10
        staleStage(pa, log, fa, batch(SEED + 19, 11, 3, SMALL));                     // right after the tail
        assertFenced(() -> pa.commit(log, fa, 13));
        assertFenced(() -> pa.checkpoints().publish(log, fa, 10, 1, bytes(new byte[10])));
        assertFenced(() -> pa.trim(log, fa, 10));
        assertUnchanged(afterTrim, snapshot(pb, log));
        assertThat(readFully(pb.checkpoints().open(log, bInfo))).isEqualTo(bCheckpoint);

        // B continues densely right after its tail, over whatever A left.
        EncodedBatch bLast = batch(SEED + 20, 11, 2, SMALL);
        pb.append(log, fb, bLast);
        List<LogEntry> finalEntries = new ArrayList<>(afterTrim.entries());
        finalEntries.addAll(entriesOf(bLast));
        assertLogHolds(pb, log, finalEntries, 12);

        // A stale stage right above B's tail is never committed by B's commit (it is not staged under B's epoch),
        // and B can stage those offsets itself.
        staleStage(pa, log, fa, batch(SEED + 21, 13, 2, SMALL));                     // 13..14
        assertConflict(() -> pb.commit(log, fb, 14));
        assertLogHolds(pb, log, finalEntries, 12);
        EncodedBatch bAfter = batch(SEED + 22, 13, 2, SMALL);
        pb.append(log, fb, bAfter);
        finalEntries.addAll(entriesOf(bAfter));
        assertLogHolds(pb, log, finalEntries, 14);
        assertThat(pa.state(log).epoch()).isEqualTo(fb.epoch());
        assertSameEntries(readAll(pa, log), finalEntries);
    }

    // =================================================================================================================

    /** The committed tail: -1 when empty, never lower, moved up by a trim beyond it. */
    @Nested
    class TailMonotonicity {

        /** A never-written log has tail -1 and reads empty. */
        @Test
        void emptyLogHasTailMinusOne() {
            LogId log = log(0);
            assertThat(provider.state(log).committedTail()).isEqualTo(-1);
            assertThat(provider.state(log).nextOffset()).isZero();
            Fence f = provider.claim(log);
            assertThat(provider.state(log).committedTail()).isEqualTo(-1);
            provider.reconcile(log, f);
            assertThat(provider.state(log).committedTail()).isEqualTo(-1);
            assertThat(provider.read(log, -1, 10, 100).committedTail()).isEqualTo(-1);
        }

        /** The tail never decreases through partial trim, full trim, trim beyond the tail, reopen and reconcile. */
        @Test
        void tailNeverDecreases() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 2, 5, SMALL);                        // 0..9
            assertTail(9, 9, -1);
            provider.trim(log, f, 4);
            assertTail(9, 9, 4);
            provider.reconcile(log, f);
            assertTail(9, 9, 4);
            provider.trim(log, f, 9);                                       // full trim
            assertTail(9, 9, 9);
            assertThat(provider.state(log).lowestOffset()).isEqualTo(10);
            assertThat(provider.state(log).retainedEntries()).isZero();
            f = reopenAndRecover(log);
            assertTail(9, 9, 9);
            provider.trim(log, f, 20);                                      // beyond the tail
            assertTail(20, 20, 20);
            assertThat(provider.state(log).lowestOffset()).isEqualTo(21);
            provider.trim(log, f, 15);                                      // lower: no-op
            assertTail(20, 20, 20);
            f = reopenAndRecover(log);
            assertTail(20, 20, 20);
            provider.reconcile(log, f);
            assertTail(20, 20, 20);
            assertThat(readAll(provider, log)).isEmpty();
        }

        /** A log trimmed empty through N reports tail N, refuses offset N and accepts N + 1. */
        @Test
        void logTrimmedEmptyContinuesAfterTheTrimPoint() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 4, SMALL);                        // 0..3
            provider.trim(log, f, 3);
            assertConflict(() -> provider.append(log, f, batch(SEED, 3, 2, SMALL)));
            assertConflict(() -> provider.append(log, f, batch(SEED, 0, 1, SMALL)));
            assertConflict(() -> provider.append(log, f, batch(SEED, 5, 1, SMALL)));
            assertTail(3, 3, 3);
            EncodedBatch next = batch(SEED + 1, 4, 3, SMALL);
            provider.append(log, f, next);
            assertLogHolds(provider, log, entriesOf(next), 6);
            Fence g = reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(next), 6);
            provider.trim(log, g, 10);                                      // beyond the tail
            assertConflict(() -> provider.append(log, g, batch(SEED, 10, 1, SMALL)));
            EncodedBatch after = batch(SEED + 2, 11, 2, SMALL);
            provider.append(log, g, after);
            assertLogHolds(provider, log, entriesOf(after), 12);
        }

        /** A trim beyond the tail on a never-written log moves the tail to the trim point. */
        @Test
        void trimBeyondTailOfEmptyLog() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            provider.trim(log, f, 7);
            assertTail(7, 7, 7);
            assertThat(provider.read(log, -1, 10, 100).isEmpty()).isTrue();
            Fence g = reopenAndRecover(log);
            assertTail(7, 7, 7);
            EncodedBatch next = batch(SEED, 8, 2, SMALL);
            provider.append(log, g, next);
            assertLogHolds(provider, log, entriesOf(next), 9);
        }

        /** Reconcile with staged batches above the tail never lowers (nor raises) the tail. */
        @Test
        void reconcileKeepsTheTail() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 3, SMALL);
            provider.stage(log, f, batch(SEED + 1, 3, 3, SMALL));
            ReconcileResult r = provider.reconcile(log, f);
            assertThat(r.committedTail()).isIn(2L, 5L);
            assertThat(provider.state(log).committedTail()).isEqualTo(r.committedTail());
            long tail = r.committedTail();
            reopenAndRecover(log);
            assertThat(provider.state(log).committedTail()).isEqualTo(tail);
        }

        private void assertTail(long tail, long readTail, long watermark) {
            LogState s = provider.state(log(0));
            assertThat(s.committedTail()).as("committed tail").isEqualTo(tail);
            assertThat(s.trimWatermark()).as("trim watermark").isEqualTo(watermark);
            assertThat(provider.read(log(0), -1, 1, 1).committedTail()).as("ReadPage.committedTail").isEqualTo(readTail);
        }
    }

    // =================================================================================================================

    /** read: bounds, limits, paging, past the tail, never-written logs, the trim watermark. */
    @Nested
    class ReadSemantics {

        private LogId log;
        private List<LogEntry> all;

        /** 20 entries of 100 bytes (0..19), then one entry of 1,000 bytes (20). */
        @BeforeEach
        void writeLog() {
            log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> bs = appendBatches(provider, f, 4, 5, 100);
            EncodedBatch big = EncodedBatch.of(20, BatchId.random(), List.of(payload(SEED, 20, 1000)));
            provider.append(log, f, big);
            bs.add(big);
            all = entriesOf(bs);
        }

        /** The lower bound is exclusive, from every position. */
        @Test
        void lowerBoundIsExclusive() {
            for (long from = -1; from <= 20; from++) {
                ReadPage p = provider.read(log, from, 1, Long.MAX_VALUE);
                if (from == 20) {
                    assertThat(p.isEmpty()).isTrue();
                } else {
                    assertThat(p.entries()).hasSize(1);
                    assertSameEntries(p.entries(), all.subList((int) from + 1, (int) from + 2));
                }
                assertThat(p.committedTail()).isEqualTo(20);
            }
        }

        /** At most maxEntries entries, at least one, consecutive from the bound. */
        @Test
        void maxEntriesBoundsThePage() {
            for (int max : new int[] {1, 2, 5, 19, 21, 1000}) {
                ReadPage p = provider.read(log, -1, max, Long.MAX_VALUE);
                checkPage(p, -1, max, Long.MAX_VALUE);
                assertThat(p.entries()).isNotEmpty().hasSizeLessThanOrEqualTo(max);
                assertSameEntries(p.entries(), all.subList(0, p.entries().size()));
            }
        }

        /** At most maxBytes payload bytes per page, but always at least one entry, even one larger than maxBytes. */
        @Test
        void maxBytesBoundsThePageButOneEntryAlwaysComes() {
            for (long max : new long[] {1, 99, 100, 250, 300, 2000}) {
                ReadPage p = provider.read(log, -1, 1000, max);
                checkPage(p, -1, 1000, max);
                assertThat(p.entries()).isNotEmpty();
                assertThat(p.entries().size() == 1 || p.payloadBytes() <= max).isTrue();
                assertSameEntries(p.entries(), all.subList(0, p.entries().size()));
            }
            ReadPage big = provider.read(log, 19, 10, 10);
            assertThat(big.entries()).hasSize(1);
            assertSameEntries(big.entries(), all.subList(20, 21));
            ReadPage one = provider.read(log, 4, 10, 1);
            assertThat(one.entries()).hasSize(1);
            assertThat(one.entries().get(0).offset()).isEqualTo(5);
        }

        /** Paging by the last offset read visits every entry exactly once, whatever the page limits. */
        @Test
        void pagingVisitsEveryEntryOnce() {
            int[][] limits = {{1, Integer.MAX_VALUE}, {3, Integer.MAX_VALUE}, {7, 250}, {1000, 1}, {1000, 150},
                    {1000, Integer.MAX_VALUE}};
            for (int[] l : limits) {
                List<LogEntry> read = readAll(provider, log, -1, l[0], l[1]);
                assertSameEntries(read, all);
                Set<Long> offsets = new HashSet<>();
                read.forEach(e -> assertThat(offsets.add(e.offset())).isTrue());
            }
            assertSameEntries(readAll(provider, log, 9, 4, 300), all.subList(10, 21));
        }

        /** Reads at or past the tail are empty and report the tail. */
        @Test
        void readsPastTheTailAreEmpty() {
            for (long from : new long[] {20, 21, 1000, Long.MAX_VALUE - 1, Long.MAX_VALUE}) {
                ReadPage p = provider.read(log, from, 10, 1000);
                assertThat(p.isEmpty()).isTrue();
                assertThat(p.committedTail()).isEqualTo(20);
                assertThat(p.nextFromExclusive(from)).isEqualTo(from);
            }
        }

        /** A log never written reads empty with tail -1, and its state is LogState.EMPTY. */
        @Test
        void neverWrittenLogsAreEmpty() {
            LogId other = log(1);
            ReadPage p = provider.read(other, -1, 10, 1000);
            assertThat(p.isEmpty()).isTrue();
            assertThat(p.committedTail()).isEqualTo(-1);
            assertThat(provider.read(other, 5, 10, 1000).isEmpty()).isTrue();
            assertThat(provider.state(other)).isEqualTo(LogState.EMPTY);
            LogId otherTree = new LogId("never-written", 0);
            assertThat(provider.read(otherTree, -1, 10, 1000).isEmpty()).isTrue();
            assertThat(provider.state(otherTree)).isEqualTo(LogState.EMPTY);
        }

        /** Nothing at or below the trim watermark is returned, from any bound. */
        @Test
        void nothingAtOrBelowTheWatermarkIsReturned() throws Exception {
            Fence f = provider.claim(log);
            provider.trim(log, f, 9);
            for (long from = -1; from <= 9; from++) {
                ReadPage p = provider.read(log, from, 3, Long.MAX_VALUE);
                assertThat(p.entries()).isNotEmpty();
                assertThat(p.entries().get(0).offset()).isEqualTo(10);
            }
            assertSameEntries(readAll(provider, log), all.subList(10, 21));
            reopen();
            assertSameEntries(readAll(provider, log), all.subList(10, 21));
            assertThat(provider.read(log, 5, 1, 1).entries().get(0).offset()).isEqualTo(10);
        }

        /** ReadPage.committedTail is the log's tail, whether the page reaches it or not. */
        @Test
        void pageReportsTheCommittedTail() {
            assertThat(provider.read(log, -1, 1, 1).committedTail()).isEqualTo(20);
            assertThat(provider.read(log, 10, 1000, Long.MAX_VALUE).committedTail()).isEqualTo(20);
            Fence f = provider.claim(log);
            provider.stage(log, f, batch(SEED, 21, 2, SMALL));
            assertThat(provider.read(log, -1, 1, 1).committedTail()).isEqualTo(20);
            provider.commit(log, f, 22);
            assertThat(provider.read(log, -1, 1, 1).committedTail()).isEqualTo(22);
        }

        /** Payload arrays returned by read belong to the caller: changing them changes nothing stored. */
        @Test
        void returnedPayloadsAreTheCallersOwn() {
            ReadPage p = provider.read(log, -1, 2, Long.MAX_VALUE);
            java.util.Arrays.fill(p.entries().get(0).payload(), (byte) 0x55);
            assertSameEntries(readAll(provider, log), all);
        }

        /** Payload arrays passed to stage are not kept: changing them after the call changes nothing stored. */
        @Test
        void stagedPayloadsAreCopied() {
            Fence f = provider.claim(log);
            byte[] mine = payload(SEED, 21, 64);
            byte[] copy = mine.clone();
            provider.append(log, f, EncodedBatch.of(21, BatchId.random(), List.of(mine)));
            java.util.Arrays.fill(mine, (byte) 0x33);
            ReadPage p = provider.read(log, 20, 1, Long.MAX_VALUE);
            assertThat(p.entries().get(0).payload()).isEqualTo(copy);
        }
    }

    // =================================================================================================================

    /** trim: inclusive, idempotent, durable; state's counters follow. */
    @Nested
    class Trim {

        /** trim(k) drops offsets up to and including k; lowestOffset, retainedEntries and bytes follow. */
        @Test
        void trimIsInclusiveAndCountersFollow() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = variedBatch(SEED, 0, 10, 13);
            provider.append(log, f, a);
            List<LogEntry> all = entriesOf(a);
            provider.trim(log, f, 3);
            LogState s = provider.state(log);
            assertThat(s.trimWatermark()).isEqualTo(3);
            assertThat(s.lowestOffset()).isEqualTo(4);
            assertLogHolds(provider, log, all.subList(4, 10), 9);
            provider.trim(log, f, 0);
            assertLogHolds(provider, log, all.subList(4, 10), 9);
            provider.trim(log, f, 8);
            assertLogHolds(provider, log, all.subList(9, 10), 9);
            assertThat(provider.state(log).retainedPayloadBytes()).isEqualTo(9 * 13);
            reopenAndRecover(log);
            assertLogHolds(provider, log, all.subList(9, 10), 9);
            assertThat(provider.state(log).trimWatermark()).isEqualTo(8);
        }

        /** Repeating a trim, or trimming lower than the watermark, changes nothing. */
        @Test
        void trimIsIdempotentAndNeverLowersTheWatermark() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 2, 5, SMALL);
            provider.trim(log, f, 6);
            LogSnapshot after = snapshot(provider, log);
            provider.trim(log, f, 6);
            provider.trim(log, f, 2);
            provider.trim(log, f, 0);
            assertUnchanged(after, snapshot(provider, log));
            assertThat(after.trimWatermark()).isEqualTo(6);
        }

        /** Trims survive reopen: the watermark, the counters and what reads return. */
        @Test
        void trimIsDurableAcrossReopen() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 3, 4, SMALL);
            provider.trim(log, f, 5);
            LogSnapshot before = snapshot(provider, log);
            reopen();
            assertSameData(before, snapshot(provider, log));
            Fence g = claimAndReconcile(provider, log);
            assertSameData(before, snapshot(provider, log));
            provider.trim(log, g, 11);
            LogSnapshot empty = snapshot(provider, log);
            assertThat(empty.entries()).isEmpty();
            reopenAndRecover(log);
            assertSameData(empty, snapshot(provider, log));
        }

        /** A trim beyond the tail drops staged batches at or below it; staged batches above it stay committable. */
        @Test
        void trimBeyondTailDropsStagedBatchesBelowIt() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 3, SMALL);                 // 0..2
            provider.stage(log, f, batch(SEED + 1, 3, 3, SMALL));    // 3..5
            provider.trim(log, f, 5);
            assertThat(provider.state(log).committedTail()).isEqualTo(5);
            provider.commit(log, f, 5);                              // at the tail: no-op
            assertThat(readAll(provider, log)).isEmpty();
            assertThat(provider.state(log).retainedEntries()).isZero();
            EncodedBatch next = batch(SEED + 2, 6, 2, SMALL);
            provider.stage(log, f, next);
            provider.trim(log, f, 5);
            provider.commit(log, f, 7);
            assertLogHolds(provider, log, entriesOf(next), 7);
        }

        /** A trim leaves staged batches above the watermark alone. */
        @Test
        void trimKeepsStagedBatchesAboveIt() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> committed = appendBatches(provider, f, 2, 3, SMALL); // 0..5
            EncodedBatch pending = batch(SEED + 1, 6, 3, SMALL);
            provider.stage(log, f, pending);
            provider.trim(log, f, 4);
            provider.commit(log, f, 8);
            List<LogEntry> expected = new ArrayList<>(entriesOf(committed).subList(5, 6));
            expected.addAll(entriesOf(pending));
            assertLogHolds(provider, log, expected, 8);
        }
    }

    // =================================================================================================================

    /**
     * Trim while the log is written: a writer thread stages and commits small batches without pause while another
     * thread (same fence, same instance) trims through the tail the writer last committed, {@value
     * TrimUnderLoadRun#TRIMS} times ({@link TrimUnderLoadRun} has the details and the bounds).
     */
    @Nested
    class TrimUnderLoad {

        /**
         * Every trim call succeeds at once ({@value TrimUnderLoadRun#MAX_ATTEMPTS_PER_TRIM} call; a
         * ProviderUnavailableException fails the test), the state after each trim is dense with a retained range of at
         * most {@link TrimUnderLoadRun#MAX_RETAINED_RANGE} entries, and afterwards, also after reopen and recovery,
         * the log holds exactly the untrimmed committed entries, byte-exact.
         */
        @Test
        void everyTrimCompletesWhileTheLogIsWritten() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            TrimUnderLoadRun.Result r = new TrimUnderLoadRun(provider, f, SEED, HANG_GUARD_SECONDS).run();
            System.out.printf("trim under load on %s: %s%n", provider.describe().name(), r);
            assertThat(r.trims()).isEqualTo(TrimUnderLoadRun.TRIMS);
            assertThat(r.maxAttempts()).isBetween(1, TrimUnderLoadRun.MAX_ATTEMPTS_PER_TRIM);
            assertThat(r.maxRetainedRange()).isLessThanOrEqualTo(TrimUnderLoadRun.MAX_RETAINED_RANGE);
            assertThat(r.batches()).isGreaterThanOrEqualTo(TrimUnderLoadRun.TRIMS
                    * TrimUnderLoadRun.MIN_BATCHES_BETWEEN_TRIMS);
            List<LogEntry> expected = new ArrayList<>();
            for (LogEntry e : entriesOf(r.retained())) {
                if (e.offset() > r.lastWatermark()) {
                    expected.add(e);
                }
            }
            long tail = (long) r.batches() * TrimUnderLoadRun.ENTRIES_PER_BATCH - 1;
            assertThat(provider.state(log).trimWatermark()).isEqualTo(r.lastWatermark());
            assertLogHolds(provider, log, expected, tail);
            reopenAndRecover(log);
            assertLogHolds(provider, log, expected, tail);
        }
    }

    // =================================================================================================================

    /**
     * Offsets never exceed {@link WalStorageProvider#MAX_OFFSET}: stage, commit, trim and checkpoint publish
     * arguments above it are refused with IllegalArgumentException naming the limit, before any I/O (the log is
     * unchanged and takes its next append at the same offset); a trim through MAX_OFFSET itself is legal and leaves
     * a log whose counters did not overflow.
     */
    @Nested
    class OffsetLimits {

        private void assertRefused(Runnable call, String what) {
            assertThatThrownBy(call::run).as(what).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maximum offset");
        }

        private EncodedBatch at(long first, int count) {
            return EncodedBatch.of(first, WalTestSupport.batchId(SEED, first, count),
                    WalTestSupport.payloads(SEED, first, count, SMALL));
        }

        /** A batch whose last offset is above MAX_OFFSET is refused by stage and append. */
        @Test
        void stageEndingAboveMaxOffsetIsRefused() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> first = appendBatches(provider, f, 1, 3, SMALL);
            LogSnapshot before = snapshot(provider, log);
            long max = WalStorageProvider.MAX_OFFSET;
            for (EncodedBatch b : List.of(at(max - 1, 3), at(max + 1, 1), at(Long.MAX_VALUE - 1, 1))) {
                assertRefused(() -> provider.stage(log, f, b), "stage " + b.firstOffset() + ".." + b.lastOffset());
                assertRefused(() -> provider.append(log, f, b), "append " + b.firstOffset() + ".." + b.lastOffset());
            }
            assertUnchanged(before, snapshot(provider, log));
            List<EncodedBatch> all = new ArrayList<>(first);
            all.addAll(appendBatches(provider, f, 1, 2, SMALL));
            assertLogHolds(provider, log, entriesOf(all), 4);
        }

        /** commit through an offset above MAX_OFFSET is refused; the staged batch stays committable. */
        @Test
        void commitAboveMaxOffsetIsRefused() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> all = new ArrayList<>(appendBatches(provider, f, 1, 3, SMALL));
            EncodedBatch pending = batch(SEED + 1, 3, 2, SMALL);
            provider.stage(log, f, pending);
            LogSnapshot before = snapshot(provider, log);
            for (long through : new long[] {WalStorageProvider.MAX_OFFSET + 1, Long.MAX_VALUE}) {
                assertRefused(() -> provider.commit(log, f, through), "commit through " + through);
            }
            assertUnchanged(before, snapshot(provider, log));
            provider.commit(log, f, 4);
            all.add(pending);
            assertLogHolds(provider, log, entriesOf(all), 4);
        }

        /** trim(Long.MAX_VALUE) and trim(MAX_OFFSET + 1) are refused; the log keeps its entries and takes appends. */
        @Test
        void trimAboveMaxOffsetIsRefused() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> all = new ArrayList<>(appendBatches(provider, f, 1, 3, SMALL));
            LogSnapshot before = snapshot(provider, log);
            for (long through : new long[] {Long.MAX_VALUE, WalStorageProvider.MAX_OFFSET + 1}) {
                assertRefused(() -> provider.trim(log, f, through), "trim through " + through);
            }
            assertUnchanged(before, snapshot(provider, log));
            all.addAll(appendBatches(provider, f, 1, 2, SMALL));
            assertLogHolds(provider, log, entriesOf(all), 4);
        }

        /** A checkpoint through an offset above MAX_OFFSET is refused; the latest checkpoint stays. */
        @Test
        void checkpointThroughAboveMaxOffsetIsRefused() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 3, SMALL);
            provider.checkpoints().publish(log, f, 1, 0, bytes(new byte[] {1, 2, 3}));
            LogSnapshot before = snapshot(provider, log);
            for (long through : new long[] {WalStorageProvider.MAX_OFFSET + 1, Long.MAX_VALUE}) {
                assertRefused(() -> provider.checkpoints().publish(log, f, through, 0, bytes(new byte[] {4})),
                        "checkpoint through " + through);
            }
            assertUnchanged(before, snapshot(provider, log));
            provider.checkpoints().publish(log, f, 2, 0, bytes(new byte[] {5}));
            assertThat(provider.checkpoints().latest(log).orElseThrow().throughOffset()).isEqualTo(2);
        }

        /**
         * trim(MAX_OFFSET) is legal: the tail and the watermark move to MAX_OFFSET, lowestOffset is MAX_OFFSET + 1
         * (no overflow), nothing is retained, also after reopen; the next offset is above the limit, so a stage
         * there is refused.
         */
        @Test
        void trimThroughMaxOffsetLeavesAFullButSaneLog() throws Exception {
            LogId log = log(1);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 3, SMALL);
            long max = WalStorageProvider.MAX_OFFSET;
            provider.trim(log, f, max);
            for (int round = 0; round < 2; round++) {
                LogState s = provider.state(log);
                assertThat(s.committedTail()).as("committed tail").isEqualTo(max);
                assertThat(s.trimWatermark()).as("trim watermark").isEqualTo(max);
                assertThat(s.lowestOffset()).as("lowest offset").isEqualTo(max + 1);
                assertThat(s.retainedEntries()).as("retained entries").isZero();
                assertThat(s.retainedPayloadBytes()).as("retained payload bytes").isZero();
                assertThat(readAll(provider, log)).isEmpty();
                Fence current = f;
                assertRefused(() -> provider.stage(log, current, at(max + 1, 1)), "stage at MAX_OFFSET + 1");
                provider.commit(log, f, max);
                f = reopenAndRecover(log);
            }
        }
    }

    // =================================================================================================================

    /** Checkpoints: byte-exact, atomic, replaceable, deletable, fenced, bounded by the tail, durable. */
    @Nested
    class Checkpoints {

        /** A multi-megabyte checkpoint round-trips byte-exact, also after reopen; latest describes it. */
        @Test
        void multiMegabyteCheckpointRoundTrips() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 2, 5, SMALL);
            assertThat(provider.checkpoints().latest(log)).isEmpty();
            int size = (int) Math.min(BIG_CHECKPOINT_BYTES, limits().maxCheckpointBytes());
            CheckpointInfo info = provider.checkpoints().publish(log, f, 9, 3, randomStream(SEED, size));
            assertThat(info).isEqualTo(new CheckpointInfo(9, 3, size, f.epoch()));
            assertThat(provider.checkpoints().latest(log)).contains(info);
            byte[] expected = randomBytes(SEED, size);
            assertThat(readFully(provider.checkpoints().open(log, info))).isEqualTo(expected);
            reopen();
            assertThat(provider.checkpoints().latest(log)).contains(info);
            assertThat(readFully(provider.checkpoints().open(log, info))).isEqualTo(expected);
            claimAndReconcile(provider, log);
            assertThat(provider.checkpoints().latest(log)).contains(info);
            assertThat(readFully(provider.checkpoints().open(log, info))).isEqualTo(expected);
        }

        /** An empty checkpoint through -1 on a claimed, never-written log is valid. */
        @Test
        void emptyCheckpointOfAnEmptyLog() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            CheckpointInfo info = provider.checkpoints().publish(log, f, -1, 0, bytes(new byte[0]));
            assertThat(info).isEqualTo(new CheckpointInfo(-1, 0, 0, f.epoch()));
            assertThat(provider.checkpoints().latest(log)).contains(info);
            assertThat(readFully(provider.checkpoints().open(log, info))).isEmpty();
        }

        /** A publish whose stream fails half-way leaves the previous checkpoint latest and readable. */
        @Test
        void publishIsAtomicWhenTheStreamFails() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 2, 5, SMALL);
            byte[] first = randomBytes(SEED, 200_000);
            CheckpointInfo info = provider.checkpoints().publish(log, f, 4, 1, bytes(first));
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
            Throwable t = catchThrowable(() -> provider.checkpoints().publish(log, f, 9, 1, failing));
            assertThat(t).as("a failing checkpoint stream").isInstanceOf(WalStorageException.class);
            assertThat(t.getCause()).as("the stream's IOException is the cause").isSameAs(boom);
            assertThat(provider.checkpoints().latest(log)).contains(info);
            assertThat(readFully(provider.checkpoints().open(log, info))).isEqualTo(first);
            reopenAndRecover(log);
            assertThat(provider.checkpoints().latest(log)).contains(info);
            assertThat(readFully(provider.checkpoints().open(log, info))).isEqualTo(first);
        }

        /** Publishing at the latest through-offset replaces it. */
        @Test
        void publishAtTheSameOffsetReplaces() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 5, SMALL);
            provider.checkpoints().publish(log, f, 3, 1, bytes(randomBytes(SEED, 500)));
            byte[] second = randomBytes(SEED + 1, 700);
            CheckpointInfo info = provider.checkpoints().publish(log, f, 3, 2, bytes(second));
            assertThat(provider.checkpoints().latest(log)).contains(info);
            assertThat(info.formatVersion()).isEqualTo(2);
            assertThat(readFully(provider.checkpoints().open(log, info))).isEqualTo(second);
        }

        /** deleteBefore deletes older checkpoints but never the latest; idempotent. */
        @Test
        void deleteBeforeNeverDeletesTheLatest() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 2, 5, SMALL);
            byte[] b2 = randomBytes(SEED + 2, 300);
            byte[] b5 = randomBytes(SEED + 5, 300);
            byte[] b8 = randomBytes(SEED + 8, 300);
            CheckpointInfo i2 = provider.checkpoints().publish(log, f, 2, 1, bytes(b2));
            CheckpointInfo i5 = provider.checkpoints().publish(log, f, 5, 1, bytes(b5));
            CheckpointInfo i8 = provider.checkpoints().publish(log, f, 8, 1, bytes(b8));
            assertThat(readFully(provider.checkpoints().open(log, i2))).isEqualTo(b2);
            provider.checkpoints().deleteBefore(log, 5);
            assertThatThrownBy(() -> readFully(provider.checkpoints().open(log, i2)))
                    .isInstanceOf(WalStorageException.class);
            assertThat(readFully(provider.checkpoints().open(log, i5))).isEqualTo(b5);
            provider.checkpoints().deleteBefore(log, 100);
            provider.checkpoints().deleteBefore(log, 100);
            assertThat(provider.checkpoints().latest(log)).contains(i8);
            assertThat(readFully(provider.checkpoints().open(log, i8))).isEqualTo(b8);
            assertThatThrownBy(() -> readFully(provider.checkpoints().open(log, i5)))
                    .isInstanceOf(WalStorageException.class);
            reopen();
            assertThat(provider.checkpoints().latest(log)).contains(i8);
            assertThat(readFully(provider.checkpoints().open(log, i8))).isEqualTo(b8);
            assertThatThrownBy(() -> readFully(provider.checkpoints().open(log, i2)))
                    .as("a deleted checkpoint stays deleted after reopen").isInstanceOf(WalStorageException.class);
            provider.checkpoints().deleteBefore(log(3), 10); // a log without checkpoints: no-op
            assertThat(provider.checkpoints().latest(log(3))).isEmpty();
        }

        /** A publish with a stale fence is refused and the previous checkpoint stays latest. */
        @Test
        void fencedPublishIsRefused() {
            LogId log = log(0);
            Fence old = claimAndReconcile(provider, log);
            appendBatches(provider, old, 1, 5, SMALL);
            byte[] data = randomBytes(SEED, 400);
            CheckpointInfo info = provider.checkpoints().publish(log, old, 2, 1, bytes(data));
            Fence current = provider.claim(log);
            assertFenced(() -> provider.checkpoints().publish(log, old, 4, 1, bytes(randomBytes(SEED + 1, 400))));
            assertThat(provider.checkpoints().latest(log)).contains(info);
            assertThat(readFully(provider.checkpoints().open(log, info))).isEqualTo(data);
            CheckpointInfo next = provider.checkpoints().publish(log, current, 4, 1, bytes(data));
            assertThat(next.epoch()).isEqualTo(current.epoch());
        }

        /** A publish above the committed tail, or below the latest checkpoint, is an offset conflict. */
        @Test
        void publishAboveTailOrBelowLatestIsRefused() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            assertConflict(() -> provider.checkpoints().publish(log, f, 0, 1, bytes(new byte[5])));
            appendBatches(provider, f, 1, 5, SMALL);
            provider.stage(log, f, batch(SEED + 1, 5, 2, SMALL)); // staged, not committed: still above the tail
            assertConflict(() -> provider.checkpoints().publish(log, f, 5, 1, bytes(new byte[5])));
            CheckpointInfo info = provider.checkpoints().publish(log, f, 3, 1, bytes(new byte[5]));
            assertConflict(() -> provider.checkpoints().publish(log, f, 2, 1, bytes(new byte[5])));
            assertConflict(() -> provider.checkpoints().publish(log, f, -1, 1, bytes(new byte[5])));
            assertThat(provider.checkpoints().latest(log)).contains(info);
        }

        /** A checkpoint may cover offsets a trim beyond the tail added. */
        @Test
        void publishUpToATrimBeyondTheTail() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            provider.trim(log, f, 9);
            CheckpointInfo info = provider.checkpoints().publish(log, f, 9, 1, bytes(new byte[1]));
            assertThat(provider.checkpoints().latest(log)).contains(info);
        }

        /**
         * The declared checkpoint limit holds: a stream of exactly the limit publishes and one byte more is refused
         * with {@link CheckpointTooLargeException} leaving the previous checkpoint latest (tested when the limit is at
         * most 64 MiB; above, a 1 MiB checkpoint is published and read back).
         */
        @Test
        void checkpointLimitHolds() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 3, SMALL);
            long limit = limits().maxCheckpointBytes();
            long size = Math.min(limit, 1 << 20);
            CheckpointInfo info = provider.checkpoints().publish(log, f, 1, 1, randomStream(SEED, size));
            assertThat(info.sizeBytes()).isEqualTo(size);
            if (limit <= 64 << 20) {
                Throwable t = catchThrowable(() ->
                        provider.checkpoints().publish(log, f, 2, 1, randomStream(SEED + 1, limit + 1)));
                assertThat(t).isInstanceOf(CheckpointTooLargeException.class)
                        .hasMessageContaining(String.valueOf(limit));
                assertThat(provider.checkpoints().latest(log)).contains(info);
                CheckpointInfo atLimit = provider.checkpoints().publish(log, f, 2, 1, randomStream(SEED + 2, limit));
                assertThat(atLimit.sizeBytes()).isEqualTo(limit);
                assertThat(readFully(provider.checkpoints().open(log, atLimit)))
                        .isEqualTo(readFully(randomStream(SEED + 2, limit)));
            } else {
                assertThat(readFully(provider.checkpoints().open(log, info))).isEqualTo(readFully(randomStream(SEED,
                        size)));
            }
        }
    }

    // =================================================================================================================

    /** Logs of different trees and partitions are independent; logs() and trees() list what exists. */
    @Nested
    class Isolation {

        /** Writes, trims, claims and checkpoints on one log leave every other log unchanged. */
        @Test
        void logsAreIndependent() throws Exception {
            List<LogId> logs = List.of(new LogId("iso", 0), new LogId("iso", 1), new LogId("iso.1", 0),
                    new LogId("iso-1", 0), new LogId("iso_1", 0), new LogId("Iso", 0), new LogId("iso", 4095));
            List<List<LogEntry>> contents = new ArrayList<>();
            List<Fence> fences = new ArrayList<>();
            for (int i = 0; i < logs.size(); i++) {
                LogId log = logs.get(i);
                Fence f = claimAndReconcile(provider, log);
                fences.add(f);
                List<EncodedBatch> bs = new ArrayList<>();
                for (int k = 0; k <= i; k++) {
                    EncodedBatch b = batch(SEED * 31 + i, k * 2L, 2, 10 + i);
                    provider.append(log, f, b);
                    bs.add(b);
                }
                contents.add(entriesOf(bs));
            }
            for (int i = 0; i < logs.size(); i++) {
                assertLogHolds(provider, logs.get(i), contents.get(i), 2L * (i + 1) - 1);
            }
            LogId target = logs.get(3);
            Fence newer = claimAndReconcile(provider, target);
            provider.trim(target, newer, 3);
            provider.checkpoints().publish(target, newer, 5, 1, bytes(new byte[10]));
            provider.stage(target, newer, batch(SEED, 8, 2, 5));
            for (int i = 0; i < logs.size(); i++) {
                if (i == 3) {
                    continue;
                }
                LogId log = logs.get(i);
                assertLogHolds(provider, log, contents.get(i), 2L * (i + 1) - 1);
                assertThat(provider.checkpoints().latest(log)).isEmpty();
                assertThat(provider.state(log).trimWatermark()).isEqualTo(-1);
                Fence f = fences.get(i);
                provider.commit(log, f, 2L * (i + 1) - 1); // still current: other logs' claims did not fence it
            }
            assertLogHolds(provider, target, contents.get(3).subList(4, 8), 7);
            reopen();
            for (int i = 0; i < logs.size(); i++) {
                if (i != 3) {
                    assertLogHolds(provider, logs.get(i), contents.get(i), 2L * (i + 1) - 1);
                }
            }
        }

        /** logs(tree) and trees() list, sorted, the logs that were claimed, written or checkpointed. */
        @Test
        void listingsShowWhatExists() throws Exception {
            assertThat(provider.trees()).isEmpty();
            assertThat(provider.logs(TREE)).isEmpty();
            provider.claim(log(3));
            Fence f1 = provider.claim(log(1));
            provider.append(log(1), f1, batch(SEED, 0, 1, SMALL));
            Fence f2 = provider.claim(log(2));
            provider.checkpoints().publish(log(2), f2, -1, 0, bytes(new byte[1]));
            Fence o = provider.claim(new LogId("another", 0));
            provider.append(new LogId("another", 0), o, batch(SEED, 0, 1, SMALL));
            provider.claim(new LogId("a-first", 12));
            provider.read(log(7), -1, 10, 100);      // reading or asking the state creates nothing
            provider.state(log(8));
            provider.state(new LogId("only-read", 0));
            provider.checkpoints().latest(log(9));
            List<LogId> expected = List.of(log(1), log(2), log(3));
            assertThat(provider.logs(TREE)).isEqualTo(expected);
            assertThat(provider.trees()).isEqualTo(List.of("a-first", "another", TREE));
            assertThat(provider.logs("another")).isEqualTo(List.of(new LogId("another", 0)));
            assertThat(provider.logs("absent")).isEmpty();
            assertThat(provider.logs("conformanc")).isEmpty();
            reopen();
            assertThat(provider.logs(TREE)).isEqualTo(expected);
            assertThat(provider.trees()).isEqualTo(List.of("a-first", "another", TREE));
        }

        /** logs(tree) is sorted by partition number, not by its text. */
        @Test
        void logsAreSortedByPartitionNumber() {
            for (int p : new int[] {10, 2, 100, 0, 9}) {
                provider.claim(log(p));
            }
            assertThat(provider.logs(TREE)).isEqualTo(List.of(log(0), log(2), log(9), log(10), log(100)));
        }
    }

    // =================================================================================================================

    /** State accounting: retained counters exact; physical bytes known when declared. */
    @Nested
    class Accounting {

        /** retainedEntries and retainedPayloadBytes are exact through appends and trims; physicalBytes is sane. */
        @Test
        void countersAreExact() throws Exception {
            LogId log = log(0);
            boolean physical = provider.describe().has(ProviderFeature.PHYSICAL_BYTES);
            assertThat(provider.state(log).physicalBytes()).isZero();
            Fence f = claimAndReconcile(provider, log);
            EncodedBatch a = variedBatch(SEED, 0, 20, 500);    // 0 + 500 + ... + 9500 = 95,000 bytes
            provider.append(log, f, a);
            LogState s = provider.state(log);
            assertThat(s.retainedEntries()).isEqualTo(20);
            assertThat(s.retainedPayloadBytes()).isEqualTo(95_000);
            if (physical) {
                assertThat(s.physicalBytes()).as("physicalBytes with PHYSICAL_BYTES declared").isGreaterThan(0);
            } else {
                assertThat(s.physicalBytes()).isGreaterThanOrEqualTo(-1);
            }
            provider.trim(log, f, 9);
            s = provider.state(log);
            assertThat(s.retainedEntries()).isEqualTo(10);
            assertThat(s.retainedPayloadBytes()).isEqualTo(72_500);
            provider.checkpoints().publish(log, f, 19, 0, randomStream(SEED, 300_000));
            LogState withCheckpoint = provider.state(log);
            assertThat(withCheckpoint.retainedPayloadBytes()).isEqualTo(72_500);
            if (physical) {
                assertThat(withCheckpoint.physicalBytes()).as("physicalBytes includes checkpoints")
                        .isGreaterThanOrEqualTo(300_000);
            }
            reopenAndRecover(log);
            assertThat(provider.state(log).retainedEntries()).isEqualTo(10);
            assertThat(provider.state(log).retainedPayloadBytes()).isEqualTo(72_500);
        }

        /** A claimed, never-written log reports EMPTY with its epoch (physical bytes aside). */
        @Test
        void claimedEmptyLogState() {
            LogId log = log(0);
            Fence f = provider.claim(log);
            LogState s = provider.state(log);
            assertThat(new LogState(s.lowestOffset(), s.committedTail(), s.trimWatermark(), s.epoch(),
                    s.retainedEntries(), s.retainedPayloadBytes(), 0))
                    .isEqualTo(new LogState(0, -1, -1, f.epoch(), 0, 0, 0));
            assertThat(s.physicalBytes()).isGreaterThanOrEqualTo(-1);
        }
    }

    // =================================================================================================================

    /** Bad arguments are refused with the SPI's exceptions before any I/O. */
    @Nested
    class ArgumentValidation {

        /** Nulls throw NullPointerException, on every method. */
        @Test
        void nullsAreRefused() {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 2, SMALL);
            EncodedBatch b = batch(SEED, 2, 1, SMALL);
            StagedBatch receipt = provider.stage(log, f, b);
            CheckpointInfo info = provider.checkpoints().publish(log, f, 1, 0, bytes(new byte[1]));
            LogSnapshot before = snapshot(provider, log);
            CheckpointStore cs = provider.checkpoints();
            List<Runnable> calls = List.of(
                    () -> provider.claim(null),
                    () -> provider.stage(null, f, b),
                    () -> provider.stage(log, null, b),
                    () -> provider.stage(log, f, null),
                    () -> provider.commit(null, f, 2),
                    () -> provider.commit(log, null, 2),
                    () -> provider.abort(null, f, receipt),
                    () -> provider.abort(log, null, receipt),
                    () -> provider.abort(log, f, null),
                    () -> provider.append(null, f, b),
                    () -> provider.append(log, null, b),
                    () -> provider.append(log, f, null),
                    () -> provider.read(null, -1, 1, 1),
                    () -> provider.state(null),
                    () -> provider.trim(null, f, 0),
                    () -> provider.trim(log, null, 0),
                    () -> provider.reconcile(null, f),
                    () -> provider.reconcile(log, null),
                    () -> provider.logs(null),
                    () -> cs.publish(null, f, 1, 0, bytes(new byte[1])),
                    () -> cs.publish(log, null, 1, 0, bytes(new byte[1])),
                    () -> cs.publish(log, f, 1, 0, null),
                    () -> cs.latest(null),
                    () -> cs.open(null, info),
                    () -> cs.open(log, null),
                    () -> cs.deleteBefore(null, 0));
            for (int i = 0; i < calls.size(); i++) {
                Runnable call = calls.get(i);
                assertThatThrownBy(call::run).as("call #%d", i).isInstanceOf(NullPointerException.class);
            }
            assertUnchanged(before, snapshot(provider, log));
            provider.commit(log, f, 2);
        }

        /** Out-of-range numbers and a fence or receipt of another log throw IllegalArgumentException. */
        @Test
        void badRangesAndForeignFencesAreRefused() {
            LogId log = log(0);
            LogId other = log(1);
            Fence f = claimAndReconcile(provider, log);
            Fence otherFence = claimAndReconcile(provider, other);
            appendBatches(provider, f, 1, 2, SMALL);
            EncodedBatch b = batch(SEED, 2, 1, SMALL);
            StagedBatch receipt = provider.stage(log, f, b);
            StagedBatch otherReceipt = new StagedBatch(other, otherFence.epoch(), 0, 0, BatchId.random());
            LogSnapshot before = snapshot(provider, log);
            LogSnapshot otherBefore = snapshot(provider, other);
            CheckpointStore cs = provider.checkpoints();
            List<Runnable> calls = List.of(
                    () -> provider.stage(log, otherFence, b),
                    () -> provider.commit(log, otherFence, 2),
                    () -> provider.commit(log, f, -2),
                    () -> provider.abort(log, otherFence, receipt),
                    () -> provider.abort(log, f, otherReceipt),
                    () -> provider.append(log, otherFence, b),
                    () -> provider.read(log, -2, 1, 1),
                    () -> provider.read(log, -1, 0, 1),
                    () -> provider.read(log, -1, -5, 1),
                    () -> provider.read(log, -1, 1, 0),
                    () -> provider.read(log, -1, 1, -1),
                    () -> provider.trim(log, otherFence, 0),
                    () -> provider.trim(log, f, -1),
                    () -> provider.reconcile(log, otherFence),
                    () -> provider.logs(""),
                    () -> provider.logs("bad name"),
                    () -> provider.logs("bad/name"),
                    () -> cs.publish(log, otherFence, 1, 0, bytes(new byte[1])),
                    () -> cs.publish(log, f, -2, 0, bytes(new byte[1])),
                    () -> cs.publish(log, f, 1, -1, bytes(new byte[1])));
            for (int i = 0; i < calls.size(); i++) {
                Runnable call = calls.get(i);
                assertThatThrownBy(call::run).as("call #%d", i).isInstanceOf(IllegalArgumentException.class);
            }
            assertUnchanged(before, snapshot(provider, log));
            assertUnchanged(otherBefore, snapshot(provider, other));
            provider.commit(log, f, 2);
        }
    }

    // =================================================================================================================

    /** A closed provider refuses every call but describe and close with IllegalStateException. */
    @Nested
    class ClosedProvider {

        /** Every SPI and checkpoint store method throws IllegalStateException after close; close is idempotent. */
        @Test
        void everyMethodThrowsIllegalStateAfterClose() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 2, SMALL);
            EncodedBatch b = batch(SEED, 2, 1, SMALL);
            StagedBatch receipt = provider.stage(log, f, b);
            CheckpointInfo info = provider.checkpoints().publish(log, f, 1, 0, bytes(new byte[1]));
            CheckpointStore cs = provider.checkpoints();
            ProviderDescriptor d = provider.describe();
            provider.close();
            provider.close();
            assertThat(provider.describe()).isEqualTo(d);
            WalStorageProvider closed = provider;
            List<Runnable> calls = List.of(
                    () -> closed.claim(log),
                    () -> closed.stage(log, f, b),
                    () -> closed.commit(log, f, 2),
                    () -> closed.abort(log, f, receipt),
                    () -> closed.append(log, f, batch(SEED, 3, 1, SMALL)),
                    () -> closed.read(log, -1, 1, 1),
                    () -> closed.state(log),
                    () -> closed.trim(log, f, 0),
                    () -> closed.reconcile(log, f),
                    () -> closed.logs(TREE),
                    () -> closed.trees(),
                    () -> cs.publish(log, f, 1, 0, bytes(new byte[1])),
                    () -> cs.latest(log),
                    () -> cs.open(log, info),
                    () -> cs.deleteBefore(log, 0));
            for (int i = 0; i < calls.size(); i++) {
                Runnable call = calls.get(i);
                assertThatThrownBy(call::run).as("call #%d", i).isInstanceOf(IllegalStateException.class);
            }
            // checkpoints() is an accessor: it may throw, or return the store whose methods throw (checked above).
            Throwable t = catchThrowable(closed::checkpoints);
            if (t != null) {
                assertThat(t).isInstanceOf(IllegalStateException.class);
            } else {
                assertThatThrownBy(() -> closed.checkpoints().latest(log)).isInstanceOf(IllegalStateException.class);
            }
            // Nothing the closed instance was asked to do happened.
            reopen();
            assertThat(provider.state(log).committedTail()).isEqualTo(1);
            assertThat(provider.checkpoints().latest(log)).contains(info);
        }
    }

    // =================================================================================================================

    /** Concurrent stages, commits, reads and writes to many logs; the final state is exact. */
    @Nested
    class Concurrency {

        /**
         * Several threads stage consecutive batches of one log in parallel (serialised by the test when the provider
         * does not declare {@link ProviderFeature#CONCURRENT_STAGE}) while the test commits them in order and a
         * reader polls: every page the reader sees ends at a commit point (a commit is atomic), and the final log is
         * exact.
         */
        @Test
        void parallelStagesOfOneLogCommittedInOrder() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            boolean concurrent = provider.describe().has(ProviderFeature.CONCURRENT_STAGE);
            Object serial = new Object();
            int batches = 48;
            List<EncodedBatch> all = new ArrayList<>();
            long next = 0;
            for (int i = 0; i < batches; i++) {
                EncodedBatch b = batch(SEED + i, next, 1 + i % 5, 8 + i % 40);
                all.add(b);
                next = b.lastOffset() + 1;
            }
            List<LogEntry> expected = entriesOf(all);
            Set<Long> commitPoints = new HashSet<>();
            commitPoints.add(-1L);
            for (int i = 2; i < batches; i += 3) {
                commitPoints.add(all.get(i).lastOffset());
            }
            commitPoints.add(all.get(batches - 1).lastOffset());

            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < batches; i++) {
                order.add(i);
            }
            Collections.shuffle(order, new Random(SEED));
            ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<Throwable> readerFailure = new AtomicReference<>();
            AtomicLong pagesSeen = new AtomicLong();
            try {
                CountDownLatch readerStarted = new CountDownLatch(1);
                Future<?> reader = pool.submit(() -> {
                    try {
                        do {
                            ReadPage p = provider.read(log, -1, Integer.MAX_VALUE, Long.MAX_VALUE);
                            assertThat(commitPoints).as("a reader saw tail %d", p.committedTail())
                                    .contains(p.committedTail());
                            checkPage(p, -1, Integer.MAX_VALUE, Long.MAX_VALUE);
                            assertSameEntries(p.entries(), expected.subList(0, p.entries().size()));
                            pagesSeen.incrementAndGet();
                            readerStarted.countDown();
                        } while (!done.get());
                    } catch (Throwable t) {
                        readerFailure.set(t);
                    } finally {
                        readerStarted.countDown();
                    }
                });
                assertThat(readerStarted.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
                List<Future<StagedBatch>> staged = new ArrayList<>(Collections.nCopies(batches, (Future<StagedBatch>) null));
                for (int i : order) {
                    EncodedBatch b = all.get(i);
                    Callable<StagedBatch> task = concurrent ? () -> provider.stage(log, f, b)
                            : () -> {
                                synchronized (serial) {
                                    return provider.stage(log, f, b);
                                }
                            };
                    staged.set(i, pool.submit(task));
                }
                for (int i = 0; i < batches; i++) {
                    StagedBatch r = await(staged.get(i));
                    assertThat(r.firstOffset()).isEqualTo(all.get(i).firstOffset());
                    if (commitPoints.contains(all.get(i).lastOffset())) {
                        long through = all.get(i).lastOffset();
                        if (concurrent) {
                            provider.commit(log, f, through);
                        } else {
                            synchronized (serial) {
                                provider.commit(log, f, through);
                            }
                        }
                        assertThat(provider.read(log, -1, 1, 1).committedTail()).isEqualTo(through);
                    }
                }
                done.set(true);
                await(reader);
            } finally {
                done.set(true);
                pool.shutdownNow();
                assertThat(pool.awaitTermination(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            }
            if (readerFailure.get() != null) {
                throw new AssertionError("the concurrent reader saw a broken page", readerFailure.get());
            }
            assertThat(pagesSeen.get()).isPositive();
            assertLogHolds(provider, log, expected, next - 1);
            reopenAndRecover(log);
            assertLogHolds(provider, log, expected, next - 1);
        }

        /** Several threads append to many logs at once; every log ends up exact. */
        @Test
        void manyLogsWrittenConcurrently() throws Exception {
            int logsPerThread = 2;
            int batchesPerLog = 20;
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            List<Future<List<List<EncodedBatch>>>> results = new ArrayList<>();
            try {
                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    results.add(pool.submit(() -> {
                        List<List<EncodedBatch>> written = new ArrayList<>();
                        List<Fence> fences = new ArrayList<>();
                        long[] next = new long[logsPerThread];
                        for (int k = 0; k < logsPerThread; k++) {
                            fences.add(claimAndReconcile(provider, log(thread * logsPerThread + k)));
                            written.add(new ArrayList<>());
                        }
                        for (int i = 0; i < batchesPerLog; i++) {
                            for (int k = 0; k < logsPerThread; k++) {
                                LogId log = log(thread * logsPerThread + k);
                                EncodedBatch b = batch(SEED * 7 + log.partition(), next[k], 1 + (i % 4), 16 + i);
                                provider.append(log, fences.get(k), b);
                                next[k] = b.lastOffset() + 1;
                                written.get(k).add(b);
                            }
                        }
                        return written;
                    }));
                }
                for (int t = 0; t < THREADS; t++) {
                    List<List<EncodedBatch>> written = await(results.get(t));
                    for (int k = 0; k < logsPerThread; k++) {
                        LogId log = log(t * logsPerThread + k);
                        List<EncodedBatch> mine = written.get(k);
                        assertThat(mine).hasSize(batchesPerLog);
                        assertLogHolds(provider, log, entriesOf(mine), mine.get(mine.size() - 1).lastOffset());
                    }
                }
            } finally {
                pool.shutdownNow();
                assertThat(pool.awaitTermination(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            }
            List<LogId> expectedLogs = new ArrayList<>();
            for (int p = 0; p < THREADS * logsPerThread; p++) {
                expectedLogs.add(log(p));
            }
            assertThat(provider.logs(TREE)).isEqualTo(expectedLogs);
        }

        /** Concurrent claims on one log all get distinct epochs; the highest is the log's epoch. */
        @Test
        void concurrentClaimsGetDistinctEpochs() throws Exception {
            LogId log = log(0);
            int claims = 4 * THREADS;
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            List<Future<Fence>> fs = new ArrayList<>();
            try {
                for (int i = 0; i < claims; i++) {
                    fs.add(pool.submit(() -> provider.claim(log)));
                }
                Set<Long> epochs = new HashSet<>();
                long max = 0;
                for (Future<Fence> fut : fs) {
                    long e = await(fut).epoch();
                    assertThat(epochs.add(e)).as("epoch %d handed out twice", e).isTrue();
                    max = Math.max(max, e);
                }
                assertThat(provider.state(log).epoch()).isEqualTo(max);
            } finally {
                pool.shutdownNow();
                assertThat(pool.awaitTermination(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            }
        }
    }

    // =================================================================================================================

    /**
     * Faults at each step, injected with {@link FaultInjectingProvider} around the provider under test: a request
     * that fails before it lands, or lands and loses its response; then recovery (reopen, claim, reconcile) or a
     * retry with the same batch id.
     */
    @Nested
    class Faults {

        /**
         * A fault at stage or commit, then reopen, claim and reconcile: every earlier committed entry is intact, the
         * batch is all or nothing (all if the commit landed, nothing if the stage never did), and the next append
         * continues densely.
         */
        @ParameterizedTest(name = "{0} fails {1}")
        @CsvSource({"STAGE, BEFORE", "STAGE, AFTER", "COMMIT, BEFORE", "COMMIT, AFTER"})
        void faultThenRecoveryIsAllOrNothing(SpiOperation op, Timing timing) throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> base = appendBatches(provider, f, 2, 3, SMALL);     // 0..5
            FaultInjectingProvider faulty = new FaultInjectingProvider(provider, SEED);
            faulty.inject(new FaultRule(op, timing, java.time.Duration.ZERO, 1, 0, 1.0, log));
            EncodedBatch b = batch(SEED + 1, 6, 4, SMALL);
            Throwable t = catchThrowable(() -> {
                faulty.stage(log, f, b);
                faulty.commit(log, f, b.lastOffset());
            });
            assertThat(t).isInstanceOf(InjectedFaultException.class);
            assertThat(faulty.injectedFaultCount()).isEqualTo(1);
            // The writer crashes here: no abort, no retry.
            Fence g = reopenAndRecover(log);
            int kept = assertBasePlusWholeBatchPrefix(provider, log, entriesOf(base), List.of(b));
            if (op == SpiOperation.COMMIT && timing == Timing.AFTER) {
                assertThat(kept).as("a commit that landed is never rolled back").isEqualTo(1);
            }
            if (op == SpiOperation.STAGE && timing == Timing.BEFORE) {
                assertThat(kept).as("a stage that never reached the provider stores nothing").isZero();
            }
            continueDensely(log, g, base, kept == 1 ? List.of(b) : List.of());
        }

        /**
         * A fault at stage or commit, then the engine's retry with the same batch id on the same writer: success,
         * and the batch is stored once.
         */
        @ParameterizedTest(name = "{0} fails {1}")
        @CsvSource({"STAGE, BEFORE", "STAGE, AFTER", "COMMIT, BEFORE", "COMMIT, AFTER"})
        void faultThenRetryWithTheSameBatchStoresItOnce(SpiOperation op, Timing timing) throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> base = appendBatches(provider, f, 2, 3, SMALL);
            FaultInjectingProvider faulty = new FaultInjectingProvider(provider, SEED);
            faulty.inject(new FaultRule(op, timing, java.time.Duration.ZERO, 2, 0, 1.0, log));
            EncodedBatch b = batch(SEED + 1, 6, 4, SMALL);
            int attempts = 0;
            while (true) {
                attempts++;
                try {
                    faulty.stage(log, f, b);
                    faulty.commit(log, f, b.lastOffset());
                    break;
                } catch (InjectedFaultException e) {
                    assertThat(attempts).as("attempts").isLessThan(5);
                }
            }
            assertThat(attempts).isEqualTo(3);
            List<EncodedBatch> expected = new ArrayList<>(base);
            expected.add(b);
            assertLogHolds(provider, log, entriesOf(expected), 9);
            continueDensely(log, f, base, List.of(b));
        }

        /**
         * Several staged batches, then a fault on the commit that covers them all: after recovery the log holds the
         * committed entries plus a whole-batch prefix of the staged ones (all of them if the commit landed).
         */
        @ParameterizedTest
        @EnumSource(Timing.class)
        void faultOnACommitOfSeveralBatches(Timing timing) throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> base = appendBatches(provider, f, 1, 3, SMALL);     // 0..2
            FaultInjectingProvider faulty = new FaultInjectingProvider(provider, SEED);
            EncodedBatch b1 = batch(SEED + 1, 3, 2, SMALL);
            EncodedBatch b2 = batch(SEED + 1, 5, 3, SMALL);
            EncodedBatch b3 = batch(SEED + 1, 8, 1, SMALL);
            faulty.stage(log, f, b2);
            faulty.stage(log, f, b1);
            faulty.stage(log, f, b3);
            faulty.inject(timing == Timing.BEFORE ? FaultRule.failBefore(SpiOperation.COMMIT)
                    : FaultRule.failAfter(SpiOperation.COMMIT));
            assertThatThrownBy(() -> faulty.commit(log, f, 8)).isInstanceOf(InjectedFaultException.class);
            Fence g = reopenAndRecover(log);
            int kept = assertBasePlusWholeBatchPrefix(provider, log, entriesOf(base), List.of(b1, b2, b3));
            if (timing == Timing.AFTER) {
                assertThat(kept).isEqualTo(3);
            }
            continueDensely(log, g, base, List.of(b1, b2, b3).subList(0, kept));
        }

        /** A trim whose response is lost took effect; one that failed before did not; both can be repeated. */
        @ParameterizedTest
        @EnumSource(Timing.class)
        void faultOnTrim(Timing timing) throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            List<EncodedBatch> base = appendBatches(provider, f, 2, 3, SMALL);     // 0..5
            FaultInjectingProvider faulty = new FaultInjectingProvider(provider, SEED);
            faulty.inject(new FaultRule(SpiOperation.TRIM, timing, java.time.Duration.ZERO, 1, 0, 1.0, null));
            assertThatThrownBy(() -> faulty.trim(log, f, 3)).isInstanceOf(InjectedFaultException.class);
            Fence g = reopenAndRecover(log);
            List<LogEntry> all = entriesOf(base);
            assertLogHolds(provider, log, timing == Timing.AFTER ? all.subList(4, 6) : all, 5);
            provider.trim(log, g, 3);
            assertLogHolds(provider, log, all.subList(4, 6), 5);
        }

        /** A publish that fails before or after landing leaves the previous or the new checkpoint, whole. */
        @ParameterizedTest
        @EnumSource(Timing.class)
        void faultOnCheckpointPublish(Timing timing) throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 2, 3, SMALL);
            byte[] first = randomBytes(SEED, 10_000);
            byte[] second = randomBytes(SEED + 1, 20_000);
            CheckpointInfo i1 = provider.checkpoints().publish(log, f, 2, 1, bytes(first));
            FaultInjectingProvider faulty = new FaultInjectingProvider(provider, SEED);
            faulty.inject(new FaultRule(SpiOperation.CHECKPOINT_PUBLISH, timing, java.time.Duration.ZERO, 1, 0, 1.0,
                    null));
            assertThatThrownBy(() -> faulty.checkpoints().publish(log, f, 5, 1, bytes(second)))
                    .isInstanceOf(InjectedFaultException.class);
            reopenAndRecover(log);
            CheckpointInfo latest = provider.checkpoints().latest(log).orElseThrow();
            if (timing == Timing.BEFORE) {
                assertThat(latest).isEqualTo(i1);
                assertThat(readFully(provider.checkpoints().open(log, latest))).isEqualTo(first);
            } else {
                assertThat(latest).isEqualTo(new CheckpointInfo(5, 1, second.length, f.epoch()));
                assertThat(readFully(provider.checkpoints().open(log, latest))).isEqualTo(second);
            }
        }

        /** A claim whose response was lost still fenced the older writer; the next claim is higher still. */
        @Test
        void lostClaimResponseStillFences() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            appendBatches(provider, f, 1, 2, SMALL);
            FaultInjectingProvider faulty = new FaultInjectingProvider(provider, SEED);
            faulty.inject(FaultRule.failAfter(SpiOperation.CLAIM));
            assertThatThrownBy(() -> faulty.claim(log)).isInstanceOf(InjectedFaultException.class);
            long moved = provider.state(log).epoch();
            assertThat(moved).isGreaterThan(f.epoch());
            assertFenced(() -> provider.commit(log, f, 1));
            Fence g = faulty.claim(log);
            assertThat(g.epoch()).isGreaterThan(moved);
            faulty.reconcile(log, g);
            EncodedBatch next = batch(SEED + 1, 2, 2, SMALL);
            faulty.append(log, g, next);
            assertThat(readAll(provider, log)).hasSize(4);
        }

        /**
         * A writer that retries every transient failure with the same batch, under random faults before and after
         * stage and commit, ends with every batch exactly once, in order.
         */
        @Test
        void randomFaultsWithRetriesLoseAndDuplicateNothing() throws Exception {
            LogId log = log(0);
            Fence f = claimAndReconcile(provider, log);
            FaultInjectingProvider faulty = new FaultInjectingProvider(provider, SEED);
            for (SpiOperation op : List.of(SpiOperation.STAGE, SpiOperation.COMMIT)) {
                for (Timing timing : Timing.values()) {
                    faulty.inject(new FaultRule(op, timing, java.time.Duration.ZERO, -1, 0, 0.15, null));
                }
            }
            List<EncodedBatch> written = new ArrayList<>();
            long next = 0;
            for (int i = 0; i < 30; i++) {
                EncodedBatch b = batch(SEED + i, next, 1 + i % 3, 20);
                for (int attempt = 1; ; attempt++) {
                    try {
                        faulty.stage(log, f, b);
                        faulty.commit(log, f, b.lastOffset());
                        break;
                    } catch (InjectedFaultException e) {
                        assertThat(attempt).as("attempts for batch %d", i).isLessThan(50);
                    }
                }
                written.add(b);
                next = b.lastOffset() + 1;
            }
            assertThat(faulty.injectedFaultCount()).as("faults injected").isPositive();
            assertLogHolds(provider, log, entriesOf(written), next - 1);
            reopenAndRecover(log);
            assertLogHolds(provider, log, entriesOf(written), next - 1);
        }

        private void continueDensely(LogId log, Fence fence, List<EncodedBatch> base, List<EncodedBatch> kept) {
            long tail = provider.state(log).committedTail();
            EncodedBatch next = batch(SEED + 77, tail + 1, 2, SMALL);
            assertConflict(() -> provider.append(log, fence, batch(SEED + 78, tail + 2, 2, SMALL)));
            provider.append(log, fence, next);
            List<EncodedBatch> expected = new ArrayList<>(base);
            expected.addAll(kept);
            expected.add(next);
            assertLogHolds(provider, log, entriesOf(expected), next.lastOffset());
        }
    }
}
