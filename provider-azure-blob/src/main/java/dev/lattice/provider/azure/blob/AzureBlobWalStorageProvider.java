package dev.lattice.provider.azure.blob;

import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.BlobServiceClient;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.LogState;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.RepairReport;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.support.SpiChecks;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A Lattice WAL provider on Azure Blob Storage (scheme {@code azure-blob}): per log, a manifest block blob (the
 * commit point and the fence), append-blob segments of framed batches, and one block blob per checkpoint. The
 * layout and protocol are described in {@code docs/providers/azure-blob.md}; this class only checks arguments and
 * hands each call to its protocol part ({@link LogSlot}, {@link BlobAppendPath}, {@link BlobReadPath},
 * {@link BlobTrimRepair}, {@link BlobCheckpointStore}, {@link BlobRunStore}, {@link BlobGateway}).
 *
 * <p>Thread-safe: changes of one log are serialised by a per-log lock; a stage only touches memory, so it never
 * waits for a commit's round trip; reads take no lock and always check the manifest (conditionally).
 */
public final class AzureBlobWalStorageProvider implements WalStorageProvider, CheckpointStore {

    /** The provider's name in {@link #describe()}. */
    public static final String NAME = "azure-blob";
    /** Implementation version (also the layout version). */
    public static final String VERSION = "1";

    private final BlobContext ctx;
    private final ProviderDescriptor descriptor;
    private final BlobReadPath reads;
    private final BlobAppendPath appends;
    private final BlobTrimRepair trims;
    private final BlobCheckpointStore checkpointStore;
    private final BlobRunStore runStore;

    /**
     * Opens a provider over a container of a service client. The container is created on the first write when
     * missing (unless {@link AzureBlobConfig#createContainer()} is off). No request is made here.
     *
     * @param client the service client (its credential, retry policy and timeouts apply); not closed by the provider
     * @param config the settings
     * @return the provider
     * @throws NullPointerException if an argument is null
     */
    public static AzureBlobWalStorageProvider open(BlobServiceClient client, AzureBlobConfig config) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(config, "config");
        return new AzureBlobWalStorageProvider(client.getBlobContainerClient(config.container()), config);
    }

    AzureBlobWalStorageProvider(BlobContainerClient container, AzureBlobConfig config) {
        AzureBlobStats stats = new AzureBlobStats();
        this.ctx = new BlobContext(new BlobGateway(container, stats, config.createContainer()), config, stats);
        this.reads = new BlobReadPath(ctx);
        this.appends = new BlobAppendPath(ctx, reads);
        this.trims = new BlobTrimRepair(ctx, reads);
        this.checkpointStore = new BlobCheckpointStore(ctx);
        this.runStore = new BlobRunStore(ctx, container);
        this.descriptor = new ProviderDescriptor(NAME, VERSION, config.limits(), DurabilityLevel.REPLICATED,
                Set.of(ProviderFeature.DEFERRED_STAGE, ProviderFeature.CONCURRENT_STAGE,
                        ProviderFeature.PHYSICAL_BYTES, ProviderFeature.PERSISTENT, ProviderFeature.REPAIR,
                        ProviderFeature.RUNS, ProviderFeature.DROP),
                config.replayCostModel());
    }

    /** @return the settings */
    public AzureBlobConfig config() {
        return ctx.config;
    }

    /** @return the request, byte and block counters of this instance */
    public AzureBlobStats stats() {
        return ctx.stats;
    }

    // ------------------------------------------------------------------ test hooks

    /** Points in the protocol where tests inject crashes (package-private). */
    enum Step {
        /** A new segment blob was created, before anything was appended to it. */
        SEGMENT_CREATED,
        /** A block was appended, before the manifest records it. */
        BLOCK_APPENDED,
        /** Right before a manifest upload. */
        BEFORE_MANIFEST_WRITE,
        /** A manifest upload succeeded, before this instance remembers it (an exception here is a lost response). */
        MANIFEST_WRITTEN,
        /** A checkpoint blob was uploaded, before the manifest names it. */
        CHECKPOINT_UPLOADED,
        /** A block of a run was staged (uncommitted), before the next one. */
        RUN_BLOCK_STAGED,
        /** Right before the request that makes a run visible (its block-list commit or its one upload). */
        RUN_BEFORE_COMMIT
    }

    /** Called at each {@link Step}; an exception thrown here propagates out of the SPI call (a simulated crash). */
    @FunctionalInterface
    interface StepHook {
        /** Does nothing. */
        StepHook NONE = (step, log) -> { };

        /**
         * @param step where the protocol is
         * @param log the log
         */
        void at(Step step, LogId log);
    }

    /** Sets the step hook (tests only). */
    void stepHook(StepHook h) {
        ctx.hook(h);
    }

    /** The epoch in a segment or checkpoint blob name ({@code ...-e<epoch>-<random>}), or -1. */
    static long epochOfName(String name) {
        return BlobContext.epochOfName(name);
    }

    // ------------------------------------------------------------------ WAL SPI

    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    @Override
    public Fence claim(LogId log) {
        LogSlot h = ctx.slot(log);
        h.lock.lock();
        try {
            LogSlot.Snap s = h.casWrite(h.known(), m -> m == null ? Manifest.first() : m.withEpoch(m.epoch() + 1));
            return new Fence(log, s.m().epoch());
        } finally {
            h.lock.unlock();
        }
    }

    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        SpiChecks.stage(log, fence, batch, descriptor.limits());
        return appends.stage(log, fence, batch);
    }

    @Override
    public void commit(LogId log, Fence fence, long throughOffset) {
        SpiChecks.commit(log, fence, throughOffset);
        appends.commit(log, fence, throughOffset);
    }

    @Override
    public void abort(LogId log, Fence fence, StagedBatch staged) {
        SpiChecks.abort(log, fence, staged);
        appends.abort(log, fence, staged);
    }

    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        SpiChecks.read(log, fromExclusive, maxEntries, maxBytes);
        return reads.read(log, fromExclusive, maxEntries, maxBytes);
    }

    @Override
    public LogState state(LogId log) {
        return reads.state(log);
    }

    @Override
    public void trim(LogId log, Fence fence, long throughInclusive) {
        SpiChecks.trim(log, fence, throughInclusive);
        trims.trim(log, fence, throughInclusive);
    }

    @Override
    public ReconcileResult reconcile(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        return trims.reconcile(log, fence);
    }

    /**
     * Explicit operator repair: reads every committed byte above the trim watermark (bypassing the cache) and, when
     * it finds damage, truncates the log at the first offset that cannot be read in one conditional manifest write
     * (or trims through the latest checkpoint when that covers the damage). Lost offsets are exactly
     * {@code firstLostOffset .. lastLostOffset} of the report. Details: {@code docs/providers/azure-blob.md}.
     *
     * @throws dev.lattice.spi.FencedException if the fence is stale
     * @throws dev.lattice.spi.ProviderUnavailableException on a transient failure, or when the manifest changed
     *     during the repair (run it again)
     * @throws dev.lattice.spi.WalStorageException on any other backend failure
     */
    @Override
    public RepairReport repair(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        return trims.repair(log, fence);
    }

    // ------------------------------------------------------------------ listings, close

    @Override
    public CheckpointStore checkpoints() {
        ctx.checkOpen();
        return this;
    }

    /** The run store: one block blob per run (see {@code docs/providers/azure-blob.md}, "Runs"). */
    @Override
    public RunStore runs() {
        ctx.checkOpen();
        return runStore;
    }

    /**
     * Drops the log (docs/providers/azure-blob.md, "Drop"): under the log's lock, checks the fence against a fresh
     * manifest, deletes every other blob under the log's directory (segments, checkpoints, runs), then the manifest
     * last, so a drop cut short leaves a log that is still listed and that the next claim plus drop finishes.
     *
     * @throws dev.lattice.spi.FencedException if the manifest shows a newer epoch (nothing deleted)
     */
    @Override
    public void drop(LogId log, Fence fence) {
        SpiChecks.logAndFence(log, fence);
        LogSlot h = ctx.slot(log);
        h.lock.lock();
        try {
            LogSlot.Snap s = h.fresh();
            if (s.m() != null) {
                LogSlot.checkFence(log, fence, s.epoch());
            }
            for (BlobGateway.Listed b : ctx.blobs.list(log, h.dir + "/")) {
                if (!b.name().equals(h.manifestName)) {
                    ctx.blobs.delete(log, b.name());
                }
            }
            if (s.m() != null) {
                ctx.blobs.delete(log, h.manifestName);
            }
            ctx.forget(log);
        } finally {
            h.lock.unlock();
        }
    }

    @Override
    public List<LogId> logs(String tree) {
        LogId.validateTreeName(tree);
        ctx.checkOpen();
        String prefix = ctx.config.prefix() + tree + "/";
        TreeSet<LogId> out = new TreeSet<>();
        for (String p : ctx.blobs.listPrefixes(prefix)) {
            String rest = p.substring(prefix.length());
            if (rest.length() == 5 && rest.endsWith("/")) {
                try {
                    int partition = Integer.parseInt(rest.substring(0, 4));
                    if (partition >= 0 && partition <= LogId.MAX_PARTITION) {
                        out.add(new LogId(tree, partition));
                    }
                } catch (NumberFormatException ignored) {
                    // not a log directory of this provider
                }
            }
        }
        return new ArrayList<>(out);
    }

    @Override
    public List<String> trees() {
        ctx.checkOpen();
        TreeSet<String> out = new TreeSet<>();
        for (String p : ctx.blobs.listPrefixes(ctx.config.prefix())) {
            String name = p.substring(ctx.config.prefix().length(), p.length() - 1);
            try {
                out.add(LogId.validateTreeName(name));
            } catch (IllegalArgumentException ignored) {
                // not a tree directory of this provider
            }
        }
        return new ArrayList<>(out);
    }

    @Override
    public void close() {
        ctx.close();
    }

    // ------------------------------------------------------------------ checkpoints

    @Override
    public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion, InputStream data) {
        SpiChecks.publish(log, fence, throughOffset, formatVersion, data);
        return checkpointStore.publish(log, fence, throughOffset, formatVersion, data);
    }

    @Override
    public Optional<CheckpointInfo> latest(LogId log) {
        return checkpointStore.latest(log);
    }

    @Override
    public InputStream open(LogId log, CheckpointInfo info) {
        return checkpointStore.open(log, info);
    }

    @Override
    public void deleteBefore(LogId log, long throughOffsetExclusive) {
        checkpointStore.deleteBefore(log, throughOffsetExclusive);
    }
}
