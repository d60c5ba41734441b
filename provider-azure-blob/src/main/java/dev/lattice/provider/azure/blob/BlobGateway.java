package dev.lattice.provider.azure.blob;

import com.azure.core.exception.HttpResponseException;
import com.azure.core.http.rest.PagedResponse;
import com.azure.core.http.rest.Response;
import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.AppendBlobItem;
import com.azure.storage.blob.models.AppendBlobRequestConditions;
import com.azure.storage.blob.models.BlobDownloadContentResponse;
import com.azure.storage.blob.models.BlobErrorCode;
import com.azure.storage.blob.models.BlobItem;
import com.azure.storage.blob.models.BlobRange;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.BlockBlobItem;
import com.azure.storage.blob.models.ListBlobsOptions;
import com.azure.storage.blob.options.AppendBlobCreateOptions;
import com.azure.storage.blob.options.BlockBlobCommitBlockListOptions;
import com.azure.storage.blob.options.BlockBlobSimpleUploadOptions;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The storage requests the provider makes, each one SDK call, with the service's answers that the protocol acts on
 * turned into small internal exceptions ({@link ConditionFailed}, {@link AppendPositionNotMet}, {@link Gone}) and
 * every other failure mapped to the SPI's exceptions: throttling (429, 503), timeouts (408, 500, 502, 504) and
 * network failures become {@link ProviderUnavailableException}, anything else a {@link WalStorageException}; the
 * cause is attached, messages name the operation, the HTTP status and the service's error code, never a credential.
 * Counts requests and bytes in {@link AzureBlobStats}. Thread-safe.
 */
final class BlobGateway {

    private final BlobContainerClient container;
    private final AzureBlobStats stats;
    private final boolean createContainer;

    /**
     * @param container the container client
     * @param stats counters to update
     * @param createContainer whether a write that finds no container creates it
     */
    BlobGateway(BlobContainerClient container, AzureBlobStats stats, boolean createContainer) {
        this.container = container;
        this.stats = stats;
        this.createContainer = createContainer;
    }

    /** A conditional write lost: the blob changed (412) or already exists (409). */
    static final class ConditionFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ConditionFailed(Throwable cause) {
            super(null, cause, false, false);
        }
    }

    /** An append block was refused because the blob's length is not the expected append position. */
    static final class AppendPositionNotMet extends RuntimeException {
        private static final long serialVersionUID = 1L;

        AppendPositionNotMet(Throwable cause) {
            super(null, cause, false, false);
        }
    }

    /** The blob does not exist (404). */
    static final class Gone extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Gone(Throwable cause) {
            super(null, cause, false, false);
        }
    }

    /**
     * A manifest read.
     *
     * @param bytes the content, or null when not modified or absent
     * @param etag the blob's ETag, or null when absent
     * @param notModified true when the blob still has the ETag the read was conditional on
     */
    record ManifestRead(byte[] bytes, String etag, boolean notModified) {
        boolean absent() {
            return bytes == null && !notModified;
        }
    }

    /**
     * A listed blob.
     *
     * @param name the blob name
     * @param length its length, in bytes
     */
    record Listed(String name, long length) {
    }

    /**
     * Runs a write; when the container does not exist (404 ContainerNotFound) and creating it is allowed, creates it
     * and runs the write once more. So no request is spent on the container in the common case.
     */
    <T> T inContainer(Supplier<T> write) {
        try {
            return write.get();
        } catch (BlobStorageException e) {
            if (!createContainer || !BlobErrorCode.CONTAINER_NOT_FOUND.equals(e.getErrorCode())) {
                throw e;
            }
        }
        stats.requests.increment();
        try {
            container.createIfNotExists();
        } catch (BlobStorageException e) {
            if (e.getStatusCode() != 409) {
                throw e;
            }
        }
        stats.requests.increment();
        return write.get();
    }

    /**
     * Reads a manifest, conditionally.
     *
     * @param log the log
     * @param name the blob name
     * @param ifNoneMatch an ETag the caller already has (then "not modified" costs no body), or null
     * @return the read
     */
    ManifestRead getManifest(LogId log, String name, String ifNoneMatch) {
        BlobClient blob = container.getBlobClient(name);
        stats.requests.increment();
        try {
            BlobRequestConditions cond = ifNoneMatch == null ? null : new BlobRequestConditions().setIfNoneMatch(ifNoneMatch);
            BlobDownloadContentResponse r = call(log, "read manifest",
                    () -> notFoundAsNull(() -> blob.downloadContentWithResponse(null, cond, null, Context.NONE)));
            if (r == null) {
                return new ManifestRead(null, null, false);
            }
            if (r.getStatusCode() == 304) {
                stats.manifestNotModified.increment();
                return new ManifestRead(null, ifNoneMatch, true);
            }
            byte[] bytes = r.getValue().toBytes();
            stats.bytesDownloaded.add(bytes.length);
            stats.manifestReads.increment();
            return new ManifestRead(bytes, r.getDeserializedHeaders().getETag(), false);
        } catch (NotModified e) {
            stats.manifestNotModified.increment();
            return new ManifestRead(null, ifNoneMatch, true);
        }
    }

    /**
     * Uploads a manifest conditionally: under {@code ifMatch}, or only if absent when {@code ifMatch} is null.
     *
     * @param log the log
     * @param name the blob name
     * @param bytes the content
     * @param ifMatch the ETag the caller read, or null to create
     * @return the new ETag
     * @throws ConditionFailed if the blob changed (or exists, when creating)
     */
    String putManifest(LogId log, String name, byte[] bytes, String ifMatch) {
        BlobRequestConditions cond = ifMatch == null ? new BlobRequestConditions().setIfNoneMatch("*")
                : new BlobRequestConditions().setIfMatch(ifMatch);
        stats.requests.increment();
        Response<BlockBlobItem> r = call(log, "write manifest", () -> conditional(() -> inContainer(() ->
                container.getBlobClient(name).getBlockBlobClient().uploadWithResponse(
                        new BlockBlobSimpleUploadOptions(BinaryData.fromBytes(bytes)).setRequestConditions(cond),
                        null, Context.NONE))));
        stats.bytesUploaded.add(bytes.length);
        stats.manifestWrites.increment();
        return r.getValue().getETag();
    }

    /**
     * Creates an empty append blob, only if absent. "Already exists" counts as success: names are random per
     * creation, so it can only be this creation's own earlier attempt (an SDK retry after a lost response).
     *
     * @param log the log
     * @param name the blob name
     */
    void createAppendBlob(LogId log, String name) {
        stats.requests.increment();
        call(log, "create segment", () -> {
            try {
                return inContainer(() -> container.getBlobClient(name).getAppendBlobClient().createWithResponse(
                        new AppendBlobCreateOptions().setRequestConditions(new BlobRequestConditions()
                                .setIfNoneMatch("*")), null, Context.NONE));
            } catch (BlobStorageException e) {
                if (e.getStatusCode() == 409 || e.getStatusCode() == 412) {
                    return null;
                }
                throw e;
            }
        });
    }

    /**
     * Appends one block at an expected position.
     *
     * @param log the log
     * @param name the append blob
     * @param block the block's bytes
     * @param position the blob length the append must find (the service's append-position condition)
     * @throws AppendPositionNotMet if the blob's length is not {@code position}
     * @throws Gone if the blob does not exist
     */
    void appendBlock(LogId log, String name, byte[] block, long position) {
        stats.requests.increment();
        call(log, "append block", () -> {
            try {
                Response<AppendBlobItem> r = container.getBlobClient(name).getAppendBlobClient().appendBlockWithResponse(
                        new ByteArrayInputStream(block), block.length, null,
                        new AppendBlobRequestConditions().setAppendPosition(position), null, Context.NONE);
                return r;
            } catch (BlobStorageException e) {
                if (BlobErrorCode.APPEND_POSITION_CONDITION_NOT_MET.equals(e.getErrorCode())) {
                    throw new AppendPositionNotMet(e);
                }
                if (e.getStatusCode() == 404) {
                    throw new Gone(e);
                }
                throw e;
            }
        });
        stats.bytesUploaded.add(block.length);
        stats.appendBlocks.increment();
    }

    /**
     * Downloads a byte range.
     *
     * @param log the log
     * @param name the blob
     * @param offset first byte
     * @param count bytes to read, or -1 for "to the end"
     * @return the bytes
     * @throws Gone if the blob does not exist
     */
    byte[] download(LogId log, String name, long offset, long count) {
        stats.requests.increment();
        BlobRange range = count < 0 ? new BlobRange(offset) : new BlobRange(offset, count);
        byte[] bytes = call(log, "read blob range", () -> {
            try {
                return container.getBlobClient(name).downloadContentWithResponse(null, null, range, false, null,
                        Context.NONE).getValue().toBytes();
            } catch (BlobStorageException e) {
                if (e.getStatusCode() == 404) {
                    throw new Gone(e);
                }
                if (e.getStatusCode() == 416) {
                    return new byte[0]; // range starts at the blob's end
                }
                throw e;
            }
        });
        stats.bytesDownloaded.add(bytes.length);
        return bytes;
    }

    /**
     * Stages one block of a block blob.
     *
     * @param log the log
     * @param name the block blob
     * @param blockId the base64 block id
     * @param data the buffer
     * @param len bytes of it to send
     */
    void stageBlock(LogId log, String name, String blockId, byte[] data, int len) {
        stats.requests.increment();
        call(log, "stage checkpoint block", () -> inContainer(() -> container.getBlobClient(name)
                .getBlockBlobClient().stageBlockWithResponse(blockId, new ByteArrayInputStream(data, 0, len), len,
                        null, null, null, Context.NONE)));
        stats.bytesUploaded.add(len);
    }

    /**
     * Commits staged blocks as a new block blob, only if absent ("exists" is this commit's own retried attempt:
     * names are random per upload).
     *
     * @param log the log
     * @param name the block blob
     * @param blockIds the block ids, in order
     */
    void commitBlockList(LogId log, String name, List<String> blockIds) {
        stats.requests.increment();
        call(log, "commit checkpoint blocks", () -> {
            try {
                return container.getBlobClient(name).getBlockBlobClient().commitBlockListWithResponse(
                        new BlockBlobCommitBlockListOptions(blockIds).setRequestConditions(
                                new BlobRequestConditions().setIfNoneMatch("*")), null, Context.NONE);
            } catch (BlobStorageException e) {
                if (e.getStatusCode() == 409 || e.getStatusCode() == 412) {
                    return null;
                }
                throw e;
            }
        });
    }

    /**
     * Uploads a whole block blob in one request, only if absent (see {@link #commitBlockList}).
     *
     * @param log the log
     * @param name the blob
     * @param data the buffer
     * @param len bytes of it to send
     */
    void uploadBlockBlob(LogId log, String name, byte[] data, int len) {
        stats.requests.increment();
        byte[] copy = len == data.length ? data : java.util.Arrays.copyOf(data, len);
        call(log, "upload checkpoint", () -> {
            try {
                return inContainer(() -> container.getBlobClient(name).getBlockBlobClient().uploadWithResponse(
                        new BlockBlobSimpleUploadOptions(BinaryData.fromBytes(copy)).setRequestConditions(
                                new BlobRequestConditions().setIfNoneMatch("*")), null, Context.NONE));
            } catch (BlobStorageException e) {
                if (e.getStatusCode() == 409 || e.getStatusCode() == 412) {
                    return null;
                }
                throw e;
            }
        });
        stats.bytesUploaded.add(len);
    }

    /**
     * Deletes a blob; a missing blob is fine.
     *
     * @param log the log
     * @param name the blob
     */
    void delete(LogId log, String name) {
        stats.requests.increment();
        call(log, "delete blob", () -> container.getBlobClient(name).deleteIfExists());
    }

    /**
     * Lists the blobs under a prefix (flat).
     *
     * @param log the log, for errors
     * @param prefix the name prefix
     * @return names and lengths
     */
    List<Listed> list(LogId log, String prefix) {
        List<Listed> out = new ArrayList<>();
        call(log, "list blobs", () -> {
            try {
                for (PagedResponse<BlobItem> page : container.listBlobs(new ListBlobsOptions().setPrefix(prefix), null)
                        .iterableByPage()) {
                    stats.requests.increment();
                    for (BlobItem item : page.getValue()) {
                        out.add(new Listed(item.getName(), item.getProperties().getContentLength()));
                    }
                }
            } catch (BlobStorageException e) {
                if (e.getStatusCode() != 404) {
                    throw e;
                }
            }
            return null;
        });
        return out;
    }

    /**
     * Lists the "directories" right under a prefix (hierarchical listing with delimiter '/').
     *
     * @param prefix the prefix, "" or ending in '/'
     * @return the child prefixes, each ending in '/'
     */
    List<String> listPrefixes(String prefix) {
        List<String> out = new ArrayList<>();
        call(null, "list blob prefixes", () -> {
            try {
                for (PagedResponse<BlobItem> page : container.listBlobsByHierarchy("/",
                        new ListBlobsOptions().setPrefix(prefix.isEmpty() ? null : prefix), null).iterableByPage()) {
                    stats.requests.increment();
                    for (BlobItem item : page.getValue()) {
                        if (Boolean.TRUE.equals(item.isPrefix())) {
                            out.add(item.getName());
                        }
                    }
                }
            } catch (BlobStorageException e) {
                if (e.getStatusCode() != 404) {
                    throw e;
                }
            }
            return null;
        });
        return out;
    }

    // ---------------------------------------------------------------- failure mapping

    /** Thrown inside {@link #getManifest} for a 304. */
    private static final class NotModified extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotModified() {
            super(null, null, false, false);
        }
    }

    private static <T> T notFoundAsNull(Supplier<T> s) {
        try {
            return s.get();
        } catch (BlobStorageException e) {
            if (e.getStatusCode() == 404) {
                return null;
            }
            if (e.getStatusCode() == 304) {
                throw new NotModified();
            }
            throw e;
        }
    }

    private static <T> T conditional(Supplier<T> s) {
        try {
            return s.get();
        } catch (BlobStorageException e) {
            if (e.getStatusCode() == 412 || e.getStatusCode() == 409) {
                throw new ConditionFailed(e);
            }
            throw e;
        }
    }

    /**
     * Runs an SDK call, mapping failures. The internal protocol exceptions pass through unchanged.
     */
    private static <T> T call(LogId log, String what, Supplier<T> s) {
        try {
            return s.get();
        } catch (ConditionFailed | AppendPositionNotMet | Gone | NotModified e) {
            throw e;
        } catch (RuntimeException e) {
            throw map(log, what, e);
        }
    }

    /**
     * Maps an SDK failure to the SPI.
     *
     * @param log the log, or null
     * @param what the operation, for the message
     * @param e the failure
     * @return the exception to throw
     */
    static WalStorageException map(LogId log, String what, RuntimeException e) {
        if (e instanceof WalStorageException w) {
            return w;
        }
        if (e instanceof HttpResponseException h && h.getResponse() != null) {
            int status = h.getResponse().getStatusCode();
            String code = e instanceof BlobStorageException b && b.getErrorCode() != null
                    ? " " + b.getErrorCode() : "";
            String msg = what + " failed: HTTP " + status + code;
            if (status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504) {
                return new ProviderUnavailableException(log, msg + " (throttled or timed out; safe to retry)", e);
            }
            return new WalStorageException(log, msg, e);
        }
        if (e instanceof IllegalArgumentException || e instanceof NullPointerException
                || e instanceof UnsupportedOperationException) {
            return new WalStorageException(log, what + " failed: " + e.getClass().getSimpleName(), e);
        }
        // Refused, unknown host, no route: the request never left, so nothing happened.
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof java.net.ConnectException || c instanceof java.net.UnknownHostException
                    || c instanceof java.net.NoRouteToHostException) {
                return new ProviderUnavailableException(log, what + " failed: could not connect to the Blob service ("
                        + c.getClass().getSimpleName() + ": " + c.getMessage() + "); safe to retry", e);
            }
        }
        // Network failures, timeouts (reactor's blocking-read timeout, connection resets): outcome unknown.
        return new ProviderUnavailableException(log, what + " failed: " + e.getClass().getSimpleName()
                + " (network failure or timeout; outcome unknown, safe to retry)", e);
    }
}
