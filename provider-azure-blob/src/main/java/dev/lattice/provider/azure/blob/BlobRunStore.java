package dev.lattice.provider.azure.blob;

import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobItem;
import com.azure.storage.blob.models.BlobListDetails;
import com.azure.storage.blob.models.BlobProperties;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.ListBlobsOptions;
import com.azure.storage.blob.options.BlockBlobCommitBlockListOptions;
import com.azure.storage.blob.options.BlockBlobSimpleUploadOptions;
import com.azure.core.http.rest.PagedResponse;
import dev.lattice.provider.azure.blob.AzureBlobWalStorageProvider.Step;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunConflictException;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunLimits;
import dev.lattice.spi.RunNotFoundException;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

/**
 * The run store of the Azure Blob provider (ARCHITECTURE.md 4.9): one block blob per run, {@code <log dir>/run-<id>},
 * written as staged blocks of at most {@link AzureBlobConfig#maxBlockBytes()} and made visible by one block-list
 * commit (a run of one block: one upload), conditional on the blob being absent and carrying the run's length and
 * CRC32C as metadata; so a reader sees a run whole or not at all, and uncommitted blocks of a failed write are never
 * visible (the service discards them). Read with one range GET per call. See {@code docs/providers/azure-blob.md},
 * "Runs". Thread-safe.
 */
final class BlobRunStore implements RunStore {

    /** Metadata key holding the run's CRC32C (8 hex digits). */
    static final String CRC_KEY = "latticecrc32c";
    /** Typical latency of one range GET on the service, in microseconds (declared cost). */
    static final long READ_LATENCY_MICROS = 20_000;

    private final BlobContext ctx;
    private final BlobContainerClient container;
    private final RunLimits limits;

    BlobRunStore(BlobContext ctx, BlobContainerClient container) {
        this.ctx = ctx;
        this.container = container;
        this.limits = new RunLimits(ctx.config.maxCheckpointBytes(), ctx.config.maxBlockBytes(),
                READ_LATENCY_MICROS);
    }

    private String name(LogSlot h, RunId id) {
        return h.dir + "/run-" + id.value();
    }

    @Override
    public RunInfo write(LogId log, Fence fence, RunId id, InputStream data, long length) {
        SpiChecks.runWrite(log, fence, id, data, length, limits);
        LogSlot h = ctx.slot(log);
        String name = name(h, id);
        int chunk = ctx.config.maxBlockBytes();
        CRC32C crc = new CRC32C();
        Map<String, String> meta;
        boolean created;
        if (length <= chunk) {
            byte[] all = new byte[(int) length];
            fill(log, id, data, all, (int) length, 0, length);
            crc.update(all, 0, all.length);
            meta = Map.of(CRC_KEY, hex(crc));
            ctx.at(Step.RUN_BEFORE_COMMIT, log);
            created = create(log, "upload run", () -> ctx.blobs.inContainer(() -> container.getBlobClient(name)
                    .getBlockBlobClient().uploadWithResponse(new BlockBlobSimpleUploadOptions(
                            BinaryData.fromBytes(all)).setMetadata(meta).setRequestConditions(absent()), null,
                            Context.NONE)));
            ctx.stats.bytesUploaded.add(length);
        } else {
            // Block ids carry a per-write token: two writers of the same id never mix their uncommitted blocks.
            String token = BlobContext.randomHex();
            byte[] buf = new byte[chunk];
            List<String> ids = new ArrayList<>();
            long done = 0;
            while (done < length) {
                int n = (int) Math.min(chunk, length - done);
                fill(log, id, data, buf, n, done, length);
                crc.update(buf, 0, n);
                String blockId = blockId(token, ids.size());
                ctx.blobs.stageBlock(log, name, blockId, buf, n);
                ids.add(blockId);
                done += n;
                ctx.at(Step.RUN_BLOCK_STAGED, log);
            }
            meta = Map.of(CRC_KEY, hex(crc));
            ctx.at(Step.RUN_BEFORE_COMMIT, log);
            created = create(log, "commit run blocks", () -> container.getBlobClient(name).getBlockBlobClient()
                    .commitBlockListWithResponse(new BlockBlobCommitBlockListOptions(ids).setMetadata(meta)
                            .setRequestConditions(absent()), null, Context.NONE));
        }
        RunInfo mine = new RunInfo(id, length, (int) crc.getValue(), true);
        if (created) {
            return mine;
        }
        RunInfo existing = info(log, id, name);
        if (existing == null) {
            throw new WalStorageException(log, "run " + id + " was refused as existing, then not found (deleted"
                    + " meanwhile?); write it again");
        }
        if (existing.lengthBytes() != length || existing.crc32c() != mine.crc32c()) {
            throw new RunConflictException(log, id, existing, length);
        }
        return existing;
    }

    private static BlobRequestConditions absent() {
        return new BlobRequestConditions().setIfNoneMatch("*");
    }

    /** Reads exactly {@code n} bytes of the run's stream into {@code buf}. */
    private static void fill(LogId log, RunId id, InputStream in, byte[] buf, int n, long done, long length) {
        int got = 0;
        try {
            while (got < n) {
                int r = in.read(buf, got, n - got);
                if (r < 0) {
                    throw new IllegalArgumentException("the data of run " + id + " ended after " + (done + got)
                            + " of its declared " + length + " bytes; nothing was stored");
                }
                got += r;
            }
        } catch (IOException e) {
            throw new WalStorageException(log, "reading the data of run " + id + " failed after " + (done + got)
                    + " bytes; nothing was stored", e);
        }
    }

    private static String blockId(String token, int i) {
        return Base64.getEncoder().encodeToString(String.format("run-%s-%08d", token, i)
                .getBytes(StandardCharsets.US_ASCII));
    }

    private static String hex(CRC32C crc) {
        return String.format("%08x", (int) crc.getValue());
    }

    /** The stored run's record, or null when the blob does not exist. */
    private RunInfo info(LogId log, RunId id, String name) {
        ctx.stats.requests.increment();
        BlobProperties p = call(log, "read run properties", () -> {
            try {
                return container.getBlobClient(name).getProperties();
            } catch (BlobStorageException e) {
                if (e.getStatusCode() == 404) {
                    return null;
                }
                throw e;
            }
        });
        return p == null ? null : toInfo(log, id, p.getBlobSize(), p.getMetadata());
    }

    private static RunInfo toInfo(LogId log, RunId id, long size, Map<String, String> meta) {
        String crc = meta == null ? null : meta.get(CRC_KEY);
        if (crc == null) {
            throw new WalStorageException(log, "run " + id + " has no " + CRC_KEY + " metadata: not written by this"
                    + " provider");
        }
        return new RunInfo(id, size, (int) Long.parseLong(crc, 16), true);
    }

    @Override
    public int read(LogId log, RunId id, long position, byte[] dst, int off, int len) {
        SpiChecks.runRead(log, id, position, dst, off, len);
        LogSlot h = ctx.slot(log);
        String name = name(h, id);
        if (len == 0) {
            if (info(log, id, name) == null) {
                throw new RunNotFoundException(log, id);
            }
            return 0;
        }
        byte[] got;
        try {
            got = ctx.blobs.download(log, name, position, len);
        } catch (BlobGateway.Gone e) {
            throw new RunNotFoundException(log, id);
        }
        if (got.length == 0) {
            return -1; // the range starts at or past the run's end
        }
        System.arraycopy(got, 0, dst, off, got.length);
        return got.length;
    }

    @Override
    public void delete(LogId log, Fence fence, RunId id) {
        SpiChecks.runDelete(log, fence, id);
        LogSlot h = ctx.slot(log);
        ctx.blobs.delete(log, name(h, id));
    }

    @Override
    public List<RunInfo> list(LogId log) {
        LogSlot h = ctx.slot(log);
        String prefix = h.dir + "/run-";
        List<RunInfo> out = new ArrayList<>();
        call(log, "list runs", () -> {
            try {
                for (PagedResponse<BlobItem> page : container.listBlobs(new ListBlobsOptions().setPrefix(prefix)
                        .setDetails(new BlobListDetails().setRetrieveMetadata(true)), null).iterableByPage()) {
                    ctx.stats.requests.increment();
                    for (BlobItem item : page.getValue()) {
                        RunId id = new RunId(item.getName().substring(prefix.length()));
                        out.add(toInfo(log, id, item.getProperties().getContentLength(), item.getMetadata()));
                    }
                }
            } catch (BlobStorageException e) {
                if (e.getStatusCode() != 404) {
                    throw e;
                }
            }
            return null;
        });
        out.sort(Comparator.comparing(RunInfo::id));
        return out;
    }

    @Override
    public RunLimits limits() {
        return limits;
    }

    /** Runs a conditional create: true when it created the blob, false when one existed (409 or 412). */
    private boolean create(LogId log, String what, Supplier<?> create) {
        ctx.stats.requests.increment();
        try {
            create.get();
            return true;
        } catch (BlobStorageException e) {
            if (e.getStatusCode() == 409 || e.getStatusCode() == 412) {
                return false;
            }
            throw BlobGateway.map(log, what, e);
        } catch (WalStorageException e) {
            throw e;
        } catch (RuntimeException e) {
            throw BlobGateway.map(log, what, e);
        }
    }

    private static <T> T call(LogId log, String what, Supplier<T> s) {
        try {
            return s.get();
        } catch (WalStorageException e) {
            throw e;
        } catch (RuntimeException e) {
            throw BlobGateway.map(log, what, e);
        }
    }
}
