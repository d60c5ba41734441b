package dev.lattice.provider.azure.blob;

import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobItem;
import com.azure.storage.blob.models.ListBlobsOptions;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Base of the provider's own tests: fresh containers on Azurite (or the real account), providers that are closed
 * after each test, direct access to the blobs, and the service-limit ledger checked after each test.
 */
abstract class BlobTestSupport {

    static final long SEED = 42;
    static final LogId LOG = new LogId("t", 0);

    RequestLedger ledger = AzuriteBlobs.serviceLedger();
    private final List<AzuriteBlobs.Storage> storages = new ArrayList<>();
    private final List<WalStorageProvider> providers = new ArrayList<>();

    /**
     * A fresh container with a tuned configuration.
     *
     * @param tune the configuration
     * @return the storage
     */
    AzuriteBlobs.Storage storage(UnaryOperator<AzureBlobConfig.Builder> tune) {
        AzuriteBlobs.Storage s = new AzuriteBlobs.Storage(AzuriteBlobs.client(ledger), getClass().getSimpleName(),
                tune);
        storages.add(s);
        return s;
    }

    /**
     * Opens a provider (closed after the test).
     *
     * @param s the storage
     * @return the provider
     */
    AzureBlobWalStorageProvider open(AzuriteBlobs.Storage s) {
        AzureBlobWalStorageProvider p = s.open();
        providers.add(p);
        return p;
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (WalStorageProvider p : providers) {
            p.close();
        }
        for (AzuriteBlobs.Storage s : storages) {
            s.close();
        }
        assertThat(ledger.violations()).as("requests above the real service's limits").isEmpty();
    }

    static Fence claimAndReconcile(WalStorageProvider p, LogId log) {
        Fence f = p.claim(log);
        ReconcileResult r = p.reconcile(log, f);
        assertThat(r.committedTail()).isEqualTo(p.state(log).committedTail());
        return f;
    }

    /** @return the container's blobs under a log's directory, with their lengths */
    static List<BlobItem> blobsOf(AzuriteBlobs.Storage s, LogId log) {
        BlobContainerClient c = s.client.getBlobContainerClient(s.container);
        List<BlobItem> out = new ArrayList<>();
        String dir = log.tree() + "/" + String.format("%04d", log.partition()) + "/";
        for (BlobItem i : c.listBlobs(new ListBlobsOptions().setPrefix(dir), null)) {
            out.add(i);
        }
        return out;
    }

    /** @return the log's manifest as stored */
    static Manifest manifest(AzuriteBlobs.Storage s, LogId log) {
        byte[] bytes = s.client.getBlobContainerClient(s.container)
                .getBlobClient(log.tree() + "/" + String.format("%04d", log.partition()) + "/manifest")
                .downloadContent().toBytes();
        return Manifest.decode(log, bytes);
    }

    /** @return a blob's current length, in bytes */
    static long blobLength(AzuriteBlobs.Storage s, String name) {
        return s.client.getBlobContainerClient(s.container).getBlobClient(name).getProperties().getBlobSize();
    }
}
