package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;

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
 * <p>The tests are grouped in {@link Nested} classes, one per part of the contract of
 * {@link WalStorageProvider} and {@link dev.lattice.spi.CheckpointStore}. Each test opens a provider with
 * {@link ProviderUnderTest#open()}, may reopen it (close, then open again over the same storage) to check
 * durability, and closes everything at the end. No test depends on timing.
 *
 * <p>Where the SPI Javadoc allows two behaviours (a stale stage refused at once or at commit; a deferred stage lost
 * on close), the suite accepts both and rejects everything else. Where it was ambiguous, the suite takes the strict
 * reading; docs/conformance.md lists those choices.
 */
public abstract class WalStorageProviderConformanceTest {

    /** The tree most tests write to. */
    protected static final String TREE = "conformance";
    /** Seed of the deterministic payloads. */
    protected static final long SEED = 20261130L;

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

    @BeforeEach
    void openStorageAndProvider() throws Exception {
        storage = newStorage();
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
        opened.add(p);
        return p;
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
     * Opens another provider instance over the same storage while {@link #provider} stays open. Only valid when
     * {@link ProviderUnderTest#supportsConcurrentInstances()}.
     *
     * @return the second instance, closed by the suite after the test
     * @throws Exception when opening fails
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

    /** Append and read back: the basic round trip, byte-exact. */
    @Nested
    class RoundTrip {

        /** Batches appended one after another read back byte-exact, with the state's counters matching. */
        @Test
        void appendedBatchesReadBackByteExact() {
            LogId log = log(0);
            Fence f = provider.claim(log);
            List<EncodedBatch> batches = appendBatches(provider, f, 3, 5, 100);
            List<LogEntry> expected = entriesOf(batches);
            assertSameEntries(readAll(provider, log), expected);
            LogState s = provider.state(log);
            assertThat(s.committedTail()).isEqualTo(14);
            assertThat(s.lowestOffset()).isZero();
            assertThat(s.retainedEntries()).isEqualTo(15);
            assertThat(s.retainedPayloadBytes()).isEqualTo(1500);
        }
    }
}
