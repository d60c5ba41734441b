package dev.lattice.testkit;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.RepairReport;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;

import java.io.InputStream;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The base of every decorator in this package: a provider that forwards each call to another one, passing every
 * call that reaches the backend through one overridable interception point, {@link #intercept}. A decorator that
 * treats every call alike (faults, latency, counting, in-flight tracking) overrides only {@code intercept}; one that
 * looks at arguments (limits, throttling by bytes) overrides the method concerned and calls {@code super}.
 *
 * <p>Intercepted: every {@link WalStorageProvider} method listed in {@link SpiOperation}, including
 * {@code checkFence} and {@code repair}, and every call of the {@link CheckpointStore} that {@link #checkpoints()}
 * returns (its {@code publish}, {@code latest}, {@code open} and {@code deleteBefore} go through the protected
 * {@code *Checkpoint*} methods below, then {@code intercept}), and every call of the {@link RunStore} that
 * {@link #runs()} returns ({@code write}, {@code read}, {@code delete}, {@code list} through the protected
 * {@code *Run*} methods; its {@code limits} is local). Not intercepted: {@code describe} and {@code close},
 * which are forwarded directly, and {@code append}, which is not forwarded at all: it is the SPI's default, calling
 * this object's {@link #stage} and {@link #commit} (and {@link #abort}), so a decorator of those also sees appends,
 * even when the delegate overrides {@code append}.
 *
 * <p>Thread-safe when the delegate is and the subclass's overrides are.
 */
public abstract class ForwardingProvider implements WalStorageProvider {

    /** The provider calls are forwarded to. */
    protected final WalStorageProvider delegate;

    private final CheckpointStore checkpoints = new InterceptedCheckpoints();
    private final RunStore runs = new InterceptedRuns();

    /**
     * Creates the instance.
     *
     * @param delegate the provider to forward to
     * @throws NullPointerException if {@code delegate} is null
     */
    protected ForwardingProvider(WalStorageProvider delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** {@return the provider calls are forwarded to} */
    public WalStorageProvider delegate() {
        return delegate;
    }

    /**
     * The interception point: every forwarded call except {@code describe} and {@code close} runs through here. The
     * default runs the call and returns its result; an override may delay it, count it, fail it instead of running
     * it, or run it and then fail. Exceptions of the call propagate unchanged unless the override changes them.
     *
     * @param <T> the call's result type ({@code Void} for a call without one; its result is then null)
     * @param op which SPI call this is
     * @param log the log it addresses, or null for {@code logs} and {@code trees}
     * @param call the forwarded call; running it invokes the delegate
     * @return what the call returned (or what the override returns in its place)
     */
    protected <T> T intercept(SpiOperation op, LogId log, Supplier<T> call) {
        return call.get();
    }

    private void interceptVoid(SpiOperation op, LogId log, Runnable call) {
        intercept(op, log, () -> {
            call.run();
            return null;
        });
    }

    /** @return the delegate's descriptor (not intercepted) */
    @Override
    public ProviderDescriptor describe() {
        return delegate.describe();
    }

    @Override
    public Fence claim(LogId log) {
        return intercept(SpiOperation.CLAIM, log, () -> delegate.claim(log));
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        return intercept(SpiOperation.STAGE, log, () -> delegate.stage(log, fence, batch));
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        interceptVoid(SpiOperation.COMMIT, log, () -> delegate.commit(log, fence, throughOffset));
    }

    @Override
    public void checkFence(LogId log, Fence fence) {
        interceptVoid(SpiOperation.CHECK_FENCE, log, () -> delegate.checkFence(log, fence));
    }

    @Override
    public void drop(LogId log, Fence fence) {
        interceptVoid(SpiOperation.DROP, log, () -> delegate.drop(log, fence));
    }

    @Override
    public RepairReport repair(LogId log, Fence fence) {
        return intercept(SpiOperation.REPAIR, log, () -> delegate.repair(log, fence));
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        interceptVoid(SpiOperation.ABORT, log, () -> delegate.abort(log, fence, staged));
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        return intercept(SpiOperation.READ, log, () -> delegate.read(log, fromExclusive, maxEntries, maxBytes));
    }

    @Override
    public LogState state(LogId log) {
        return intercept(SpiOperation.STATE, log, () -> delegate.state(log));
    }

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        interceptVoid(SpiOperation.TRIM, log, () -> delegate.trim(log, fence, throughInclusive));
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        return intercept(SpiOperation.RECONCILE, log, () -> delegate.reconcile(log, fence));
    }

    /**
     * @return an intercepting view of the delegate's checkpoint store (the same instance on every call); its calls
     *     go through {@link #publishCheckpoint}, {@link #latestCheckpoint}, {@link #openCheckpoint} and
     *     {@link #deleteCheckpointsBefore}
     */
    @Override
    public CheckpointStore checkpoints() {
        return checkpoints;
    }

    /**
     * @return an intercepting view of the delegate's run store (the same instance on every call); its calls go
     *     through {@link #writeRun}, {@link #readRun}, {@link #deleteRun} and {@link #listRuns}
     * @throws UnsupportedOperationException if the delegate has no run store (its {@code runs()} throws)
     */
    @Override
    public RunStore runs() {
        delegate.runs(); // the delegate's refusal, if it has no run store
        return runs;
    }

    @Override
    public List<LogId> logs(String tree) {
        return intercept(SpiOperation.LOGS, null, () -> delegate.logs(tree));
    }

    @Override
    public List<String> trees() {
        return intercept(SpiOperation.TREES, null, delegate::trees);
    }

    /** Closes the delegate (not intercepted). */
    @Override
    public void close() {
        delegate.close();
    }

    /**
     * {@link CheckpointStore#publish} of the view {@link #checkpoints()} returns: intercepted as
     * {@link SpiOperation#CHECKPOINT_PUBLISH}, then forwarded to the delegate's store.
     *
     * @param log the log
     * @param fence the caller's fence
     * @param throughOffset the checkpoint covers every entry at or below this offset (inclusive)
     * @param formatVersion the checkpoint format version
     * @param data the checkpoint bytes
     * @return what the delegate's store returned
     */
    protected CheckpointInfo publishCheckpoint(LogId log, Fence fence, long throughOffset, int formatVersion,
                                               InputStream data) {
        return intercept(SpiOperation.CHECKPOINT_PUBLISH, log,
                () -> delegate.checkpoints().publish(log, fence, throughOffset, formatVersion, data));
    }

    /**
     * {@link CheckpointStore#latest}, intercepted as {@link SpiOperation#CHECKPOINT_LATEST}.
     *
     * @param log the log
     * @return what the delegate's store returned
     */
    protected Optional<CheckpointInfo> latestCheckpoint(LogId log) {
        return intercept(SpiOperation.CHECKPOINT_LATEST, log, () -> delegate.checkpoints().latest(log));
    }

    /**
     * {@link CheckpointStore#open}, intercepted as {@link SpiOperation#CHECKPOINT_OPEN}.
     *
     * @param log the log
     * @param info the checkpoint to open
     * @return what the delegate's store returned
     */
    protected InputStream openCheckpoint(LogId log, CheckpointInfo info) {
        return intercept(SpiOperation.CHECKPOINT_OPEN, log, () -> delegate.checkpoints().open(log, info));
    }

    /**
     * {@link CheckpointStore#deleteBefore}, intercepted as {@link SpiOperation#CHECKPOINT_DELETE_BEFORE}.
     *
     * @param log the log
     * @param throughOffsetExclusive checkpoints whose through-offset is below this one go (exclusive bound)
     */
    protected void deleteCheckpointsBefore(LogId log, long throughOffsetExclusive) {
        interceptVoid(SpiOperation.CHECKPOINT_DELETE_BEFORE, log,
                () -> delegate.checkpoints().deleteBefore(log, throughOffsetExclusive));
    }

    /**
     * {@link RunStore#write}, intercepted as {@link SpiOperation#RUN_WRITE}.
     *
     * @param log the log the run belongs to
     * @param fence the writer's fence on {@code log}
     * @param id the run's id
     * @param data the run's bytes
     * @param length the run's length in bytes
     * @return what the delegate's store returned
     */
    protected RunInfo writeRun(LogId log, Fence fence, RunId id, InputStream data, long length) {
        return intercept(SpiOperation.RUN_WRITE, log, () -> delegate.runs().write(log, fence, id, data, length));
    }

    /**
     * {@link RunStore#read}, intercepted as {@link SpiOperation#RUN_READ}.
     *
     * @param log the log
     * @param id the run
     * @param position the first byte to read, 0-based
     * @param dst the buffer to fill
     * @param off where in {@code dst} to start
     * @param len how many bytes to read at most
     * @return what the delegate's store returned (bytes read, or -1 at the end of the run)
     */
    protected int readRun(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        return intercept(SpiOperation.RUN_READ, log, () -> delegate.runs().read(log, id, position, dst, off, len));
    }

    /**
     * {@link RunStore#delete}, intercepted as {@link SpiOperation#RUN_DELETE}.
     *
     * @param log the log
     * @param fence the caller's fence on {@code log}
     * @param id the run
     */
    protected void deleteRun(LogId log, Fence fence, RunId id) {
        interceptVoid(SpiOperation.RUN_DELETE, log, () -> delegate.runs().delete(log, fence, id));
    }

    /**
     * {@link RunStore#list}, intercepted as {@link SpiOperation#RUN_LIST}.
     *
     * @param log the log
     * @return what the delegate's store returned
     */
    protected List<RunInfo> listRuns(LogId log) {
        return intercept(SpiOperation.RUN_LIST, log, () -> delegate.runs().list(log));
    }

    /** The view {@link #runs()} returns: routes each call to the overridable methods above; limits are local. */
    private final class InterceptedRuns implements RunStore {

        @Override
        public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
            return writeRun(log, fence, id, data, length);
        }

        @Override
        public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
            return readRun(log, id, position, dst, off, len);
        }

        @Override
        public void delete(LogId log, Fence fence, RunId id) {
            deleteRun(log, fence, id);
        }

        @Override
        public List<RunInfo> list(LogId log) {
            return listRuns(log);
        }

        @Override
        public RunLimits limits() {
            return delegate.runs().limits();
        }
    }

    /** The view {@link #checkpoints()} returns: routes each call to the overridable methods above. */
    private final class InterceptedCheckpoints implements CheckpointStore {

        @Override
        public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion,
                                      InputStream data) {
            return publishCheckpoint(log, fence, throughOffset, formatVersion, data);
        }

        @Override
        public Optional<CheckpointInfo> latest(LogId log) {
            return latestCheckpoint(log);
        }

        @Override
        public InputStream open(LogId log, CheckpointInfo info) {
            return openCheckpoint(log, info);
        }

        @Override
        public void deleteBefore(LogId log, long throughOffsetExclusive) {
            deleteCheckpointsBefore(log, throughOffsetExclusive);
        }
    }
}
