package dev.lattice.conformance;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.RunConflictException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static dev.lattice.conformance.WalTestSupport.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The conformance spec of a provider's {@link RunStore} (ARCHITECTURE.md 4.9): ranged reads byte-exact at every
 * boundary, immutability, idempotent rewrite and delete, a complete {@code list}, failed writes leaving nothing
 * readable, limits, isolation between logs, durability across a reopen, bad arguments and a closed provider.
 *
 * <p>A provider that declares {@link ProviderFeature#RUNS} adds one test class extending this one and supplying
 * {@link #newStorage()} (the same {@link ProviderUnderTest} its {@link WalStorageProviderConformanceTest} uses), and
 * may name its internal chunk size in {@link #chunkBytes()} so the boundary tests hit its chunk edges exactly.
 *
 * <p>Not thread-safe (JUnit creates one instance per test).
 */
public abstract class RunStoreConformanceTest {

    /** Seed of the deterministic run bytes. */
    protected static final long SEED = 20261201L;
    /** Largest run the suite writes at exactly the declared limit: 64 MiB. */
    protected static final long MAX_TESTABLE_RUN_BYTES = 64L << 20;
    /** Upper bound on waits for other threads; only turns a deadlock into a failure. */
    protected static final long HANG_GUARD_SECONDS = 300;

    private ProviderUnderTest storage;
    private final List<WalStorageProvider> opened = new ArrayList<>();
    /** The provider instance the test uses; replaced by {@link #reopen()}. */
    protected WalStorageProvider provider;

    /**
     * Creates a fresh, empty, isolated storage for the provider under test; called before each test.
     *
     * @return the storage
     * @throws Exception when it cannot be created (the test fails)
     */
    protected abstract ProviderUnderTest newStorage() throws Exception;

    /**
     * The provider's internal chunk size, in bytes, when it splits runs into backend items (rows, entities, items,
     * blocks); the boundary tests then read across {@code k * chunkBytes()} exactly. The default, 0, means the
     * suite only probes generic boundaries ({@link RunLimits#preferredReadBytes()}, 64 KiB, 1 MiB).
     *
     * @return the chunk size in bytes, or 0
     */
    protected int chunkBytes() {
        return 0;
    }

    @BeforeEach
    void openStorage() throws Exception {
        storage = newStorage();
        assertThat(storage).as("newStorage() returned null").isNotNull();
        provider = track(storage.open());
    }

    @AfterEach
    void closeAll() throws Exception {
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
     * Closes the provider and opens a new instance over the same storage.
     *
     * @return the new instance, now {@link #provider}
     * @throws Exception when opening fails
     */
    protected final WalStorageProvider reopen() throws Exception {
        provider.close();
        provider = track(storage.open());
        return provider;
    }

    private RunStore runs() {
        return provider.runs();
    }

    private static LogId log(int partition) {
        return new LogId("runs", partition);
    }

    private Fence claim(LogId log) {
        return provider.claim(log);
    }

    private static InputStream in(byte[] b) {
        return new ByteArrayInputStream(b);
    }

    private static int crc(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b, 0, b.length);
        return (int) c.getValue();
    }

    /** Size of the run the boundary tests write: a little over three chunks (or 2.5 MiB), within the limit. */
    private long boundaryRunBytes() {
        long chunk = chunkBytes() > 0 ? chunkBytes() : (1L << 20);
        long want = Math.max(3 * chunk + 17, (5L << 19) + 13);
        return Math.min(want, runs().limits().maxRunBytes());
    }

    private byte[] readExactly(LogId log, RunId id, long position, int len) {
        byte[] dst = new byte[len];
        int n = runs().read(log, id, position, dst, 0, len);
        assertThat(n).as("read(%s, %s, position %d, len %d) must return every byte requested inside the run",
                log, id, position, len).isEqualTo(len);
        return dst;
    }

    private void assertRange(LogId log, RunId id, byte[] expected, long position, int len) {
        int want = (int) Math.max(0, Math.min(len, expected.length - position));
        byte[] dst = new byte[len + 2];
        Arrays.fill(dst, (byte) 0x5A);
        int n = runs().read(log, id, position, dst, 1, len);
        if (want == 0) {
            assertThat(n).as("read at position %d of a %d-byte run, len %d: -1 past the end (0 for len 0)",
                    position, expected.length, len).isEqualTo(len == 0 ? 0 : -1);
            return;
        }
        assertThat(n).as("bytes read at position %d, len %d of a %d-byte run", position, len, expected.length)
                .isEqualTo(want);
        for (int i = 0; i < want; i++) {
            if (dst[1 + i] != expected[(int) position + i]) {
                throw new AssertionError("run " + id + " byte " + (position + i) + " differs: read "
                        + dst[1 + i] + ", written " + expected[(int) position + i] + " (read at position " + position
                        + ", len " + len + ")");
            }
        }
        assertThat(dst[0]).as("read wrote before dst[off]").isEqualTo((byte) 0x5A);
        assertThat(dst[1 + want]).as("read wrote past the bytes it returned").isEqualTo((byte) 0x5A);
    }

    // ------------------------------------------------------------------------------------------ describe

    @Test
    void declaresRunsAndSaneLimits() {
        assertThat(provider.describe().features()).as("a provider tested by the run store spec declares RUNS")
                .contains(ProviderFeature.RUNS);
        RunLimits l = runs().limits();
        assertThat(l.maxRunBytes()).as("maxRunBytes must allow runs of at least 1 MiB").isGreaterThanOrEqualTo(1L << 20);
        assertThat((long) l.preferredReadBytes()).as("preferredReadBytes within maxRunBytes")
                .isLessThanOrEqualTo(l.maxRunBytes());
        assertThat(provider.runs()).as("runs() returns the same instance every time").isSameAs(runs());
    }

    // ------------------------------------------------------------------------------------------ ranged reads

    @Test
    void rangedReadsAreByteExactAtEveryBoundary() {
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED, (int) boundaryRunBytes());
        RunId id = new RunId("boundary-1");
        RunInfo info = runs().write(log, f, id, in(data), data.length);
        assertThat(info).as("write returns what it stored").isEqualTo(new RunInfo(id, data.length, crc(data), true));

        TreeSet<Long> edges = new TreeSet<>();
        List<Long> steps = new ArrayList<>(List.of((long) runs().limits().preferredReadBytes(), 64L << 10, 1L << 20));
        if (chunkBytes() > 0) {
            steps.add((long) chunkBytes());
        }
        for (long step : steps) {
            for (long e = step; e < data.length; e += step) {
                edges.add(e);
            }
        }
        assertRange(log, id, data, 0, 1);
        assertRange(log, id, data, data.length - 1, 1);
        assertRange(log, id, data, data.length - 1, 10);
        for (long e : edges) {
            assertRange(log, id, data, e - 1, 1);
            assertRange(log, id, data, e, 1);
            assertRange(log, id, data, e - 1, 2);
            assertRange(log, id, data, e - 7, 15);
            assertRange(log, id, data, Math.max(0, e - 4096), 8192);
        }
        assertRange(log, id, data, 0, data.length);
    }

    @Test
    void readingInPiecesOfRandomSizeGivesTheRunBack() {
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED + 1, (int) Math.min(runs().limits().maxRunBytes(), 700_001));
        RunId id = new RunId("pieces");
        runs().write(log, f, id, in(data), data.length);
        Random rnd = new Random(SEED);
        byte[] back = new byte[data.length];
        long pos = 0;
        while (pos < data.length) {
            int len = 1 + rnd.nextInt(200_000);
            int n = runs().read(log, id, pos, back, (int) pos, (int) Math.min(len, data.length - pos));
            assertThat(n).as("read at %d returned no bytes inside the run", pos).isPositive();
            pos += n;
        }
        assertThat(Arrays.equals(back, data)).as("the run read back in random pieces equals the bytes written").isTrue();
    }

    @Test
    void readsAtAndPastTheEndReturnMinusOneAndShortReadsStopAtTheEnd() {
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED + 2, 1000);
        RunId id = new RunId("end");
        runs().write(log, f, id, in(data), data.length);
        assertRange(log, id, data, 1000, 10);
        assertRange(log, id, data, 5000, 10);
        assertRange(log, id, data, 990, 100);
        assertRange(log, id, data, 500, 0);
        assertRange(log, id, data, 2000, 0);
    }

    @Test
    void anEmptyRunIsStoredAndReadsAsEnded() {
        LogId log = log(0);
        Fence f = claim(log);
        RunId id = new RunId("empty");
        RunInfo info = runs().write(log, f, id, in(new byte[0]), 0);
        assertThat(info.lengthBytes()).as("length of an empty run").isZero();
        assertThat(runs().read(log, id, 0, new byte[4], 0, 4)).as("reading an empty run").isEqualTo(-1);
        assertThat(runs().list(log)).as("list shows the empty run").extracting(RunInfo::id).containsExactly(id);
    }

    // ------------------------------------------------------------------------------------------ immutability

    @Test
    void rewritingTheSameBytesSucceedsAndOtherBytesConflict() {
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED + 3, 300_000);
        RunId id = new RunId("immutable");
        RunInfo first = runs().write(log, f, id, in(data), data.length);
        assertThat(runs().write(log, f, id, in(data.clone()), data.length))
                .as("a rewrite with the same bytes is a success reporting the same run").isEqualTo(first);

        byte[] other = data.clone();
        other[150_000] ^= 1;
        assertThatThrownBy(() -> runs().write(log, f, id, in(other), other.length))
                .as("a rewrite with one byte changed").isInstanceOf(RunConflictException.class)
                .hasMessageContaining(id.value());
        byte[] shorter = Arrays.copyOf(data, data.length - 1);
        assertThatThrownBy(() -> runs().write(log, f, id, in(shorter), shorter.length))
                .as("a rewrite with another length").isInstanceOf(RunConflictException.class);
        assertRange(log, id, data, 0, data.length);
    }

    @Test
    void deleteIsIdempotentAndADeletedRunIsGone() {
        LogId log = log(0);
        Fence f = claim(log);
        RunId id = new RunId("doomed");
        runs().write(log, f, id, in(randomBytes(SEED, 5000)), 5000);
        runs().delete(log, f, id);
        runs().delete(log, f, id);
        runs().delete(log, f, new RunId("never-written"));
        assertThatThrownBy(() -> runs().read(log, id, 0, new byte[10], 0, 10))
                .as("reading a deleted run").isInstanceOf(RunNotFoundException.class).hasMessageContaining("doomed");
        assertThat(runs().list(log)).as("list after delete").isEmpty();
        byte[] again = randomBytes(SEED + 9, 4000);
        runs().write(log, f, id, in(again), again.length);
        assertRange(log, id, again, 0, again.length);
    }

    @Test
    void readingARunNeverWrittenIsRunNotFound() {
        LogId log = log(0);
        Throwable t = catchThrowable(() -> runs().read(log, new RunId("missing"), 0, new byte[1], 0, 1));
        assertThat(t).as("reading a run never written").isInstanceOf(RunNotFoundException.class);
        assertThat(((RunNotFoundException) t).run()).isEqualTo(new RunId("missing"));
    }

    // ------------------------------------------------------------------------------------------ list

    @Test
    void listIsCompleteAndInIdOrder() {
        LogId log = log(0);
        Fence f = claim(log);
        List<RunInfo> expected = new ArrayList<>();
        for (int i = 7; i >= 0; i--) {
            byte[] d = randomBytes(SEED + i, 100 + i * 1000);
            RunId id = new RunId("L0-" + String.format("%04d", i));
            runs().write(log, f, id, in(d), d.length);
            expected.add(0, new RunInfo(id, d.length, crc(d), true));
        }
        assertThat(runs().list(log)).as("list reports every run, complete, in id order").containsExactlyElementsOf(expected);
        runs().delete(log, f, expected.get(3).id());
        expected.remove(3);
        assertThat(runs().list(log)).as("list after deleting one run").containsExactlyElementsOf(expected);
    }

    // ------------------------------------------------------------------------------------------ failures

    @Test
    void aWriteWhoseStreamFailsLeavesNothingReadableAndCanBeRetried() {
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED + 4, (int) boundaryRunBytes());
        RunId id = new RunId("failing");
        InputStream failing = new InputStream() {
            private int pos;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (pos >= data.length - 10) {
                    throw new IOException("injected: the source of the run failed");
                }
                int n = Math.min(len, data.length - 10 - pos);
                System.arraycopy(data, pos, b, off, n);
                pos += n;
                return n;
            }
        };
        assertThat(catchThrowable(() -> runs().write(log, f, id, failing, data.length)))
                .as("a write whose data stream fails must fail").isNotNull();
        assertNothingReadable(log, id);
        RunInfo info = runs().write(log, f, id, in(data), data.length);
        assertThat(info.complete()).as("the retried write completes").isTrue();
        assertRange(log, id, data, 0, data.length);
    }

    @Test
    void aStreamShorterThanItsLengthIsRefusedAndLeavesNothingReadable() {
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED + 5, 200_000);
        RunId id = new RunId("short");
        assertThatThrownBy(() -> runs().write(log, f, id, in(data), data.length + 1L))
                .as("a stream that ends before the declared length").isInstanceOf(IllegalArgumentException.class);
        assertNothingReadable(log, id);
    }

    private void assertNothingReadable(LogId log, RunId id) {
        assertThatThrownBy(() -> runs().read(log, id, 0, new byte[1], 0, 1))
                .as("after a failed write the run must not be readable").isInstanceOf(RunNotFoundException.class);
        for (RunInfo r : runs().list(log)) {
            assertThat(r.complete()).as("list may report the failed write only as an incomplete leftover: %s", r)
                    .isFalse();
        }
    }

    // ------------------------------------------------------------------------------------------ limits

    @Test
    void aRunAboveTheLimitIsRefusedBeforeAnyByteIsRead() {
        LogId log = log(0);
        Fence f = claim(log);
        long max = runs().limits().maxRunBytes();
        InputStream untouchable = new InputStream() {
            @Override
            public int read() {
                throw new AssertionError("the store read data of a run above its declared limit");
            }
        };
        assertThatThrownBy(() -> runs().write(log, f, new RunId("huge"), untouchable, max + 1))
                .as("a run of maxRunBytes + 1").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.valueOf(max));
        assertThat(runs().list(log)).as("nothing stored for a refused run").isEmpty();
    }

    @Test
    void aRunOfExactlyTheLimitIsStored() {
        long max = runs().limits().maxRunBytes();
        assumeTrue(max <= MAX_TESTABLE_RUN_BYTES, "declared maxRunBytes " + max + " is above the "
                + MAX_TESTABLE_RUN_BYTES + " bytes this suite writes in one test; the limit itself is not verified");
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED + 6, (int) max);
        RunId id = new RunId("at-limit");
        runs().write(log, f, id, in(data), data.length);
        assertRange(log, id, data, max - 3, 3);
        assertRange(log, id, data, 0, 3);
    }

    // ------------------------------------------------------------------------------------------ isolation

    @Test
    void runsAreIsolatedBetweenLogs() {
        LogId a = log(0);
        LogId b = log(1);
        LogId c = new LogId("runs.1", 0);
        Fence fa = claim(a);
        Fence fb = claim(b);
        byte[] da = randomBytes(SEED + 7, 1234);
        byte[] db = randomBytes(SEED + 8, 4321);
        RunId id = new RunId("shared-name");
        runs().write(a, fa, id, in(da), da.length);
        runs().write(b, fb, id, in(db), db.length);
        assertRange(a, id, da, 0, da.length);
        assertRange(b, id, db, 0, db.length);
        assertThatThrownBy(() -> runs().read(c, id, 0, new byte[1], 0, 1))
                .as("a run of another log is not visible").isInstanceOf(RunNotFoundException.class);
        assertThat(runs().list(c)).as("list of a log without runs").isEmpty();
        runs().delete(a, fa, id);
        assertRange(b, id, db, 0, db.length);
    }

    // ------------------------------------------------------------------------------------------ durability

    @Test
    void runsSurviveAReopen() throws Exception {
        assumeTrue(provider.describe().features().contains(ProviderFeature.PERSISTENT),
                "provider is not PERSISTENT: runs need not survive a reopen");
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED + 10, 333_333);
        RunId id = new RunId("durable");
        RunInfo info = runs().write(log, f, id, in(data), data.length);
        reopen();
        assertThat(runs().list(log)).as("list after a reopen").containsExactly(info);
        assertRange(log, id, data, 0, data.length);
    }

    @Test
    void concurrentReadersSeeExactBytesWhileOtherRunsAreWritten() throws Exception {
        LogId log = log(0);
        Fence f = claim(log);
        byte[] data = randomBytes(SEED + 11, 900_000);
        RunId id = new RunId("shared");
        runs().write(log, f, id, in(data), data.length);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                int seed = t;
                futures.add(pool.submit(() -> {
                    Random rnd = new Random(seed);
                    for (int i = 0; i < 60; i++) {
                        long pos = rnd.nextInt(data.length);
                        assertRange(log, id, data, pos, 1 + rnd.nextInt(70_000));
                    }
                    return null;
                }));
            }
            futures.add(pool.submit(() -> {
                for (int i = 0; i < 6; i++) {
                    byte[] d = randomBytes(SEED + 100 + i, 50_000);
                    runs().write(log, f, new RunId("other-" + i), in(d), d.length);
                }
                return null;
            }));
            for (Future<?> fu : futures) {
                fu.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(runs().list(log)).as("runs after the concurrent writes").hasSize(7);
    }

    // ------------------------------------------------------------------------------------------ bad input

    @Test
    void badArgumentsAreRefusedWithTypedErrors() {
        LogId log = log(0);
        Fence f = claim(log);
        Fence other = claim(log(1));
        RunId id = new RunId("args");
        runs().write(log, f, id, in(new byte[10]), 10);
        assertThatThrownBy(() -> runs().write(null, f, id, in(new byte[1]), 1)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> runs().write(log, null, id, in(new byte[1]), 1)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> runs().write(log, f, null, in(new byte[1]), 1)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> runs().write(log, f, id, null, 1)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> runs().write(log, f, new RunId("neg"), in(new byte[1]), -1))
                .as("negative length").isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> runs().write(log, other, new RunId("x"), in(new byte[1]), 1))
                .as("a fence of another log").isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> runs().read(log, id, -1, new byte[1], 0, 1))
                .as("negative position").isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> runs().read(log, id, 0, new byte[4], 2, 3))
                .as("off + len beyond dst").isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> runs().read(log, id, 0, null, 0, 1)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> runs().delete(log, f, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> runs().list(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new RunId("bad/name")).as("run ids are [A-Za-z0-9._-]")
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(runs().list(log)).as("nothing stored by the refused calls").extracting(RunInfo::id)
                .containsExactly(id);
    }

    @Test
    void aClosedProviderRefusesRunCalls() {
        LogId log = log(0);
        Fence f = claim(log);
        RunStore store = runs();
        store.write(log, f, new RunId("before-close"), in(new byte[3]), 3);
        provider.close();
        assertThat(catchThrowable(() -> store.read(log, new RunId("before-close"), 0, new byte[3], 0, 3)))
                .as("read on a closed provider").isInstanceOfAny(IllegalStateException.class,
                        dev.lattice.spi.WalStorageException.class);
        assertThat(catchThrowable(() -> store.write(log, f, new RunId("after"), in(new byte[3]), 3)))
                .as("write on a closed provider").isInstanceOfAny(IllegalStateException.class,
                        dev.lattice.spi.WalStorageException.class);
        assertThat(catchThrowable(() -> store.list(log))).as("list on a closed provider")
                .isInstanceOfAny(IllegalStateException.class, dev.lattice.spi.WalStorageException.class);
    }
}
