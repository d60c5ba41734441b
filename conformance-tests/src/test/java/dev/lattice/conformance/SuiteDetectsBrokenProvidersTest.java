package dev.lattice.conformance;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.BatchId;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testkit.ForwardingProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * Proves the suite has teeth: runs it against the in-memory provider wrapped in deliberately broken decorators, one
 * contract violation each, and checks that the tests meant to catch that violation fail (and that the same run
 * without a mutation passes). Prints, per mutant, how many of the suite's tests failed.
 */
class SuiteDetectsBrokenProvidersTest {

    /**
     * A broken provider and the suite tests that must fail on it.
     *
     * @param name what is broken
     * @param mutation wraps a correct provider into the broken one
     * @param mustFail method names of suite tests that must fail
     * @param service the service limits the suite holds the provider to, or null for none
     */
    record Mutant(String name, Function<WalStorageProvider, WalStorageProvider> mutation, Set<String> mustFail,
                  ProviderLimits service) {

        Mutant(String name, Function<WalStorageProvider, WalStorageProvider> mutation, Set<String> mustFail) {
            this(name, mutation, mustFail, null);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    @AfterEach
    void resetMutation() {
        MutantSuiteRun.mutation = Function.identity();
        MutantSuiteRun.service = null;
    }

    /** Limits of a pretend strict service, far below the in-memory provider's defaults. */
    private static final ProviderLimits STRICT_SERVICE = new ProviderLimits(64 << 10, 1 << 20, 500, 8 << 20);


    static Stream<Mutant> mutants() {
        return Stream.of(
                new Mutant("no mutation: everything passes", Function.identity(), Set.of()),
                new Mutant("commit ignores a stale fence", IgnoresFenceOnCommit::new,
                        Set.of("staleWriterChangesNothingOnOneInstance", "staleFenceStaysStaleAcrossReopen",
                                "fencedExceptionNamesTheStaleEpoch")),
                new Mutant("declares limits it does not accept", OverstatesLimits::new,
                        Set.of("entryAtMaxEntryBytesRoundTripsAndOneMoreByteIsRefused",
                                "batchAtMaxEntriesRoundTripsAndOneMoreEntryIsRefused")),
                new Mutant("read ignores maxBytes", IgnoresMaxBytes::new,
                        Set.of("maxBytesBoundsThePageButOneEntryAlwaysComes")),
                new Mutant("tail drops to -1 after a full trim", TailDropsWhenEmpty::new,
                        Set.of("tailNeverDecreases", "logTrimmedEmptyContinuesAfterTheTrimPoint")),
                new Mutant("a retried stage is a conflict", RetryIsConflict::new,
                        Set.of("stagingTheSameBatchTwiceStoresItOnce", "reStagingACommittedBatchIsSuccessAndCommitIsANoOp",
                                "faultThenRetryWithTheSameBatchStoresItOnce")),
                new Mutant("commit publishes only the first staged batch", CommitsOneBatchOnly::new,
                        Set.of("commitPublishesExactlyUpToThrough", "stagesOfConsecutiveBatchesMayCompleteInAnyOrder")),
                new Mutant("a failing checkpoint stream publishes what was read", NonAtomicPublish::new,
                        Set.of("publishIsAtomicWhenTheStreamFails")),
                new Mutant("reconcile trims committed entries", ReconcileTrims::new,
                        Set.of("appendedBatchesReadBackByteExact", "faultThenRecoveryIsAllOrNothing")),
                new Mutant("close does not close", CloseIsNoOp::new,
                        Set.of("everyMethodThrowsIllegalStateAfterClose")),
                new Mutant("read shows staged batches", ReadShowsStaged::new,
                        Set.of("stagedBatchesAreInvisible", "commitPublishesExactlyUpToThrough")),
                new Mutant("logs() lists logs that were only read", ListsReadLogs::new,
                        Set.of("listingsShowWhatExists")),
                new Mutant("state counts trimmed payload bytes", CountsTrimmedBytes::new,
                        Set.of("trimIsInclusiveAndCountersFollow", "countersAreExact")),
                new Mutant("trim above MAX_OFFSET accepted as 'drop everything'", AcceptsTrimAboveMaxOffset::new,
                        Set.of("trimAboveMaxOffsetIsRefused")),
                new Mutant("declares limits above the real service's (lenient backend)", Function.identity(),
                        Set.of("declaredLimitsAreTestable", "entryAtMaxEntryBytesRoundTripsAndOneMoreByteIsRefused",
                                "batchAtMaxEntriesRoundTripsAndOneMoreEntryIsRefused",
                                "batchAtMaxBatchBytesRoundTrips"), STRICT_SERVICE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mutants")
    void suiteCatchesTheMutant(Mutant mutant) {
        MutantSuiteRun.mutation = mutant.mutation();
        MutantSuiteRun.service = mutant.service();
        Set<String> failed = new TreeSet<>();
        Map<String, String> skipped = new ConcurrentHashMap<>();
        int[] run = new int[1];
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(MutantSuiteRun.class)).build();
        Launcher launcher = LauncherFactory.create();
        launcher.execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (!id.isTest()) {
                    return;
                }
                run[0]++;
                Optional<String> method = id.getSource()
                        .filter(org.junit.platform.engine.support.descriptor.MethodSource.class::isInstance)
                        .map(org.junit.platform.engine.support.descriptor.MethodSource.class::cast)
                        .map(org.junit.platform.engine.support.descriptor.MethodSource::getMethodName);
                if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
                    // A variant that does not apply (an assumption): reported skipped, with its reason.
                    method.ifPresent(m -> skipped.put(m, result.getThrowable().map(Throwable::getMessage)
                            .orElse("")));
                } else if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) {
                    method.ifPresent(failed::add);
                }
            }
        });
        System.out.printf("mutant '%s': %d of %d suite tests failed %s, %d skipped %s%n", mutant.name(),
                failed.size(), run[0], failed, skipped.size(), new TreeSet<>(skipped.keySet()));
        assertThat(run[0] - skipped.size()).as("suite tests run and not skipped").isGreaterThan(80);
        assertThat(skipped).as("every skipped test is a variant that says why it does not apply")
                .allSatisfy((name, reason) -> assertThat(reason).as("skip reason of %s", name).contains("variant"));
        if (mutant.mustFail().isEmpty()) {
            assertThat(failed).as("failures without a mutation").isEmpty();
        } else {
            assertThat(failed).as("suite tests failing on mutant '" + mutant.name() + "'")
                    .containsAll(mutant.mustFail());
        }
    }

    // ---- the mutants ----------------------------------------------------------------------------------------------

    /**
     * Takes a trim above {@link WalStorageProvider#MAX_OFFSET} (Pekko's "delete all" idiom, {@code Long.MAX_VALUE})
     * as a trim through the committed tail instead of refusing it: the caller never learns that its offset was out
     * of range.
     */
    static final class AcceptsTrimAboveMaxOffset extends ForwardingProvider {
        AcceptsTrimAboveMaxOffset(WalStorageProvider d) {
            super(d);
        }

        @Override
        public void trim(LogId log, Fence fence, long throughInclusive) {
            if (throughInclusive > WalStorageProvider.MAX_OFFSET) {
                long tail = super.state(log).committedTail();
                if (tail >= 0) {
                    super.trim(log, fence, tail);
                }
                return;
            }
            super.trim(log, fence, throughInclusive);
        }
    }

    /** Swallows FencedException from commit: a stale writer's commit "succeeds". */
    static final class IgnoresFenceOnCommit extends ForwardingProvider {
        IgnoresFenceOnCommit(WalStorageProvider d) {
            super(d);
        }

        @Override
        public void commit(LogId log, Fence fence, long throughOffset) {
            try {
                super.commit(log, fence, throughOffset);
            } catch (FencedException ignored) {
                // the bug
            }
        }
    }

    /** Declares one byte and one entry more than it accepts. */
    static final class OverstatesLimits extends ForwardingProvider {
        OverstatesLimits(WalStorageProvider d) {
            super(d);
        }

        @Override
        public ProviderDescriptor describe() {
            ProviderDescriptor d = super.describe();
            ProviderLimits l = d.limits();
            return new ProviderDescriptor(d.name(), d.version(), new ProviderLimits(l.maxEntryBytes() + 1,
                    l.maxBatchBytes() + 1, l.maxEntriesPerBatch() + 1, l.maxCheckpointBytes()), d.durability(),
                    d.features());
        }
    }

    /** Reads as if maxBytes were unbounded. */
    static final class IgnoresMaxBytes extends ForwardingProvider {
        IgnoresMaxBytes(WalStorageProvider d) {
            super(d);
        }

        @Override
        public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
            return super.read(log, fromExclusive, maxEntries, Long.MAX_VALUE);
        }
    }

    /** Reports an empty log's tail as -1 (forgets the tail once everything is trimmed). */
    static final class TailDropsWhenEmpty extends ForwardingProvider {
        TailDropsWhenEmpty(WalStorageProvider d) {
            super(d);
        }

        @Override
        public LogState state(LogId log) {
            LogState s = super.state(log);
            if (s.retainedEntries() == 0 && s.committedTail() >= 0) {
                return new LogState(0, -1, s.trimWatermark(), s.epoch(), 0, 0, s.physicalBytes());
            }
            return s;
        }
    }

    /** Treats a second stage of a batch id it has seen as a conflict. */
    static final class RetryIsConflict extends ForwardingProvider {
        private final Set<BatchId> seen = ConcurrentHashMap.newKeySet();

        RetryIsConflict(WalStorageProvider d) {
            super(d);
        }

        @Override
        public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
            StagedBatch s = super.stage(log, fence, batch);
            if (!seen.add(batch.batchId())) {
                throw new OffsetConflictException(log, "seen before");
            }
            return s;
        }
    }

    /** Commits only through the first staged batch above the tail, whatever offset was asked for. */
    static final class CommitsOneBatchOnly extends ForwardingProvider {
        private final Map<LogId, List<StagedBatch>> staged = new ConcurrentHashMap<>();

        CommitsOneBatchOnly(WalStorageProvider d) {
            super(d);
        }

        @Override
        public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
            StagedBatch s = super.stage(log, fence, batch);
            staged.computeIfAbsent(log, k -> new ArrayList<>()).add(s);
            return s;
        }

        @Override
        public void commit(LogId log, Fence fence, long throughOffset) {
            long tail = super.state(log).committedTail();
            long through = throughOffset;
            for (StagedBatch s : staged.getOrDefault(log, List.of())) {
                if (s.firstOffset() == tail + 1 && s.lastOffset() < through) {
                    through = s.lastOffset();
                }
            }
            super.commit(log, fence, through);
        }
    }

    /** On a failing checkpoint stream, publishes the bytes read so far, then reports the failure. */
    static final class NonAtomicPublish extends ForwardingProvider {
        NonAtomicPublish(WalStorageProvider d) {
            super(d);
        }

        @Override
        public CheckpointStore checkpoints() {
            CheckpointStore real = super.checkpoints();
            return new CheckpointStore() {
                @Override
                public CheckpointInfo publish(LogId log, Fence fence, long through, int format, InputStream data) {
                    ByteArrayOutputStream buf = new ByteArrayOutputStream();
                    byte[] chunk = new byte[8192];
                    try {
                        int n;
                        while ((n = data.read(chunk)) > 0) {
                            buf.write(chunk, 0, n);
                        }
                    } catch (IOException e) {
                        real.publish(log, fence, through, format, new ByteArrayInputStream(buf.toByteArray()));
                        throw new WalStorageException(log, "stream failed", e);
                    }
                    return real.publish(log, fence, through, format, new ByteArrayInputStream(buf.toByteArray()));
                }

                @Override
                public Optional<CheckpointInfo> latest(LogId log) {
                    return real.latest(log);
                }

                @Override
                public InputStream open(LogId log, CheckpointInfo info) {
                    return real.open(log, info);
                }

                @Override
                public void deleteBefore(LogId log, long throughOffsetExclusive) {
                    real.deleteBefore(log, throughOffsetExclusive);
                }
            };
        }
    }

    /** Reconcile also trims every committed entry (drops committed data). */
    static final class ReconcileTrims extends ForwardingProvider {
        ReconcileTrims(WalStorageProvider d) {
            super(d);
        }

        @Override
        public ReconcileResult reconcile(LogId log, Fence fence) {
            ReconcileResult r = super.reconcile(log, fence);
            if (r.committedTail() >= 0) {
                super.trim(log, fence, r.committedTail());
            }
            return r;
        }
    }

    /** close() leaves the provider working. */
    static final class CloseIsNoOp extends ForwardingProvider {
        CloseIsNoOp(WalStorageProvider d) {
            super(d);
        }

        @Override
        public void close() {
            // the bug
        }
    }

    /** read also returns staged entries that continue the committed ones. */
    static final class ReadShowsStaged extends ForwardingProvider {
        private final Map<LogId, Map<Long, byte[]>> staged = new ConcurrentHashMap<>();

        ReadShowsStaged(WalStorageProvider d) {
            super(d);
        }

        @Override
        public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
            StagedBatch s = super.stage(log, fence, batch);
            Map<Long, byte[]> m = staged.computeIfAbsent(log, k -> new ConcurrentHashMap<>());
            for (long o = batch.firstOffset(); o <= batch.lastOffset(); o++) {
                m.put(o, batch.entryAt(o).clone());
            }
            return s;
        }

        @Override
        public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
            ReadPage p = super.read(log, fromExclusive, maxEntries, maxBytes);
            List<LogEntry> out = new ArrayList<>(p.entries());
            long next = out.isEmpty() ? Math.max(fromExclusive, p.committedTail()) + 1
                    : out.get(out.size() - 1).offset() + 1;
            Map<Long, byte[]> m = staged.getOrDefault(log, Map.of());
            while (next > p.committedTail() && m.containsKey(next) && out.size() < maxEntries) {
                out.add(new LogEntry(next, m.get(next).clone()));
                next++;
            }
            return new ReadPage(out, Math.max(p.committedTail(), next - 1));
        }
    }

    /** logs(tree) also lists logs that were only read or asked for their state. */
    static final class ListsReadLogs extends ForwardingProvider {
        private final Set<LogId> touched = ConcurrentHashMap.newKeySet();

        ListsReadLogs(WalStorageProvider d) {
            super(d);
        }

        @Override
        public LogState state(LogId log) {
            touched.add(log);
            return super.state(log);
        }

        @Override
        public List<LogId> logs(String tree) {
            Set<LogId> all = new TreeSet<>(super.logs(tree));
            touched.stream().filter(l -> l.tree().equals(tree)).forEach(all::add);
            return new ArrayList<>(all);
        }
    }

    /** state keeps counting payload bytes of trimmed entries. */
    static final class CountsTrimmedBytes extends ForwardingProvider {
        private final Map<LogId, Long> trimmedBytes = new ConcurrentHashMap<>();

        CountsTrimmedBytes(WalStorageProvider d) {
            super(d);
        }

        @Override
        public void trim(LogId log, Fence fence, long throughInclusive) {
            long before = super.state(log).retainedPayloadBytes();
            super.trim(log, fence, throughInclusive);
            long after = super.state(log).retainedPayloadBytes();
            trimmedBytes.merge(log, before - after, Long::sum);
        }

        @Override
        public LogState state(LogId log) {
            LogState s = super.state(log);
            long extra = trimmedBytes.getOrDefault(log, 0L);
            return new LogState(s.lowestOffset(), s.committedTail(), s.trimWatermark(), s.epoch(),
                    s.retainedEntries(), s.retainedPayloadBytes() + extra, s.physicalBytes());
        }
    }

}
