package dev.lattice.provider.azure.blob;

import dev.lattice.provider.azure.blob.AzureBlobWalStorageProvider.Step;
import dev.lattice.provider.azure.blob.Frames.Frame;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.StagedBatchTable;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;

/**
 * One log's state in this instance and its manifest, the commit point and the fence: the cached manifest with its
 * ETag (re-read conditionally), the fence checks, and the conditional manifest write every change goes through
 * (see {@code docs/providers/azure-blob.md}, "Protocol"). Also holds the log's staged batches, the segments never
 * to append to again, and the blobs being uploaded outside the lock.
 *
 * <p>Thread-safe: changes hold {@link #lock}; the staged table is guarded by its own monitor; the cached manifest
 * is an atomic reference.
 */
final class LogSlot {

    static final int MAX_CAS_ATTEMPTS = 16;

    /** A manifest as last seen, with its ETag; {@code m == null} means the log has no manifest (never claimed). */
    record Snap(Manifest m, String etag, int size) {
        long epoch() {
            return m == null ? 0 : m.epoch();
        }
    }

    /** Thrown by a mutation when the manifest changed under it in a way it cannot rebase onto: start over. */
    static final class Restart extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final Restart INSTANCE = new Restart();

        private Restart() {
            super(null, null, false, false);
        }
    }

    private final BlobContext ctx;
    final LogId id;
    final String dir;
    final String manifestName;
    final ReentrantLock lock = new ReentrantLock();
    final AtomicReference<Snap> current = new AtomicReference<>();
    /** Staged batches (encoded frames); guarded by its own monitor (stages do not take {@link #lock}). */
    final StagedBatchTable<Frame> staged = new StagedBatchTable<>();
    /** Segments found to hold bytes past their committed length: never appended to again; guarded by lock. */
    final Set<String> dirty = new HashSet<>();
    /** Blobs being uploaded outside the lock (checkpoints): the sweep leaves them alone. */
    final Set<String> inflight = ConcurrentHashMap.newKeySet();

    LogSlot(BlobContext ctx, LogId id) {
        this.ctx = ctx;
        this.id = id;
        this.dir = ctx.config.prefix() + id.tree() + "/" + String.format("%04d", id.partition());
        this.manifestName = dir + "/manifest";
    }

    /** Replaces the cached manifest unless a newer generation is cached already. */
    void remember(Snap s) {
        while (true) {
            Snap cur = current.get();
            if (cur != null && cur.m != null && s.m != null && cur.m.generation() > s.m.generation()) {
                return;
            }
            if (current.compareAndSet(cur, s)) {
                return;
            }
        }
    }

    /** Reads the manifest (conditionally on the cached ETag) and caches it. */
    Snap fresh() {
        Snap cur = current.get();
        String etag = cur != null && cur.m != null ? cur.etag : null;
        BlobGateway.ManifestRead r = ctx.blobs.getManifest(id, manifestName, etag);
        if (r.notModified()) {
            return cur;
        }
        Snap s = r.absent() ? new Snap(null, null, 0)
                : new Snap(Manifest.decode(id, r.bytes()), r.etag(), r.bytes().length);
        checkNotBehind(id, cur, s);
        remember(s);
        return s;
    }

    /**
     * The committed tail never goes back: a manifest that vanished after this instance saw one, or a newer
     * generation with a lower tail, was replaced outside the protocol (a restore, a manual edit).
     */
    private static void checkNotBehind(LogId log, Snap before, Snap now) {
        if (before == null || before.m == null) {
            return;
        }
        long tail = before.m.data().tail();
        if (now.m == null) {
            throw new CorruptLogException(log, before.m.data().watermark() + 1, "the manifest (committed tail " + tail
                    + ") no longer exists: the log was deleted or replaced outside this provider");
        }
        if (now.m.generation() > before.m.generation() && now.m.data().tail() < tail) {
            throw new CorruptLogException(log, now.m.data().tail() + 1, "the committed tail went back from " + tail
                    + " to " + now.m.data().tail() + " (manifest generation " + before.m.generation() + " -> "
                    + now.m.generation() + "): the manifest was replaced outside this provider");
        }
    }

    /** The cached manifest, read when none is cached. */
    Snap known() {
        Snap cur = current.get();
        return cur != null ? cur : fresh();
    }

    /** Checks a fence against the log's epoch: stale is fenced, newer was never claimed. */
    static void checkFence(LogId log, Fence fence, long epoch) {
        if (fence.epoch() < epoch) {
            throw new FencedException(log, fence.epoch(), epoch);
        }
        if (fence.epoch() > epoch) {
            throw new IllegalArgumentException("fence " + fence + " was never claimed on this storage (the log's epoch"
                    + " is " + epoch + ")");
        }
    }

    /** Fence check against a manifest read during a conditional-write retry. */
    static void checkFenceOf(LogId log, Fence fence, Manifest m) {
        long epoch = m == null ? 0 : m.epoch();
        if (epoch != fence.epoch()) {
            if (epoch > fence.epoch()) {
                throw new FencedException(log, fence.epoch(), epoch);
            }
            throw new WalStorageException(log, "the log's epoch went back from " + fence.epoch() + " to " + epoch
                    + " (manifest replaced outside this provider?)");
        }
    }

    /** The cached manifest, re-read when the fence is newer than it; fence-checked. */
    Snap fenced(Fence fence) {
        Snap s = known();
        if (fence.epoch() > s.epoch()) {
            s = fresh();
        }
        checkFence(id, fence, s.epoch());
        return s;
    }

    /**
     * Writes a new manifest computed from the current one, under its ETag. On a lost race it re-reads the manifest:
     * when it carries this write's token the write had landed (a lost response); otherwise the mutation is applied
     * again to the new manifest (it re-checks the fence and whatever else it depends on). Caller holds the lock.
     *
     * @param base the manifest the caller read
     * @param mutate computes the new manifest (or returns its argument unchanged: nothing to write)
     * @return the manifest now stored
     */
    Snap casWrite(Snap base, UnaryOperator<Manifest> mutate) {
        Snap cur = base;
        for (int attempt = 1; ; attempt++) {
            Manifest computed = mutate.apply(cur.m);
            if (computed == cur.m) {
                return cur;
            }
            Manifest next = computed.nextWrite();
            byte[] bytes = next.encode();
            ctx.at(Step.BEFORE_MANIFEST_WRITE, id);
            try {
                String etag = ctx.blobs.putManifest(id, manifestName, bytes, cur.m == null ? null : cur.etag);
                ctx.at(Step.MANIFEST_WRITTEN, id);
                Snap s = new Snap(next, etag, bytes.length);
                remember(s);
                return s;
            } catch (BlobGateway.ConditionFailed e) {
                Snap f = fresh();
                if (next.sameWrite(f.m)) {
                    return f;
                }
                if (attempt >= MAX_CAS_ATTEMPTS) {
                    throw new ProviderUnavailableException(id, "the manifest kept changing under " + attempt
                            + " conditional writes", e);
                }
                cur = f;
            } catch (ProviderUnavailableException e) {
                current.set(null); // outcome unknown: read it again next time
                throw e;
            }
        }
    }
}
