package dev.lattice.provider.azure.blob;

import dev.lattice.spi.DurabilityLevel;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.support.ProviderOptions;
import dev.lattice.spi.Providers;
import dev.lattice.spi.ReplayCostModel;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.testbackends.AzuriteServer;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.lattice.conformance.WalTestSupport.assertSameEntries;
import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static dev.lattice.conformance.WalTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.within;

/** Discovery, URI forms, options, credentials (never echoed) and the descriptor. */
class FactoryTest {

    private static final String SECRET = AzuriteServer.ACCOUNT_KEY;

    private static AzureBlobConfig config(String uri, Map<String, String> options) {
        URI u = URI.create(uri);
        return AzureBlobProviderFactory.config(u, ProviderOptions.of(u, options));
    }

    /** The factory is found by scheme through ServiceLoader and opens a working provider on Azurite. */
    @Test
    void serviceLoaderFindsTheSchemeAndTheProviderWorks() {
        assertThat(Providers.schemes()).contains("azure-blob");
        String container = AzuriteServer.uniqueContainerName("factory");
        Map<String, String> opts = Map.of("connectionString", AzuriteBlobs.connectionString());
        try (WalStorageProvider p = Providers.open(URI.create("azure-blob:" + container + "?inlineTailBytes=0"),
                opts)) {
            assertThat(p.describe().name()).isEqualTo("azure-blob");
            LogId log = new LogId("f", 1);
            Fence f = p.claim(log); // creates the container on first write
            EncodedBatch b = batch(1, 0, 3, 10);
            p.append(log, f, b);
            assertSameEntries(readAll(p, log), entriesOf(b));
            assertThat(((AzureBlobWalStorageProvider) p).config().inlineTailBytes()).isZero();
        } finally {
            new com.azure.storage.blob.BlobServiceClientBuilder().connectionString(AzuriteBlobs.connectionString())
                    .buildClient().getBlobContainerClient(container).deleteIfExists();
        }
    }

    /**
     * The endpoint forms of the credentials work too: endpoint + account name + key (or endpoint + SAS token when
     * the real account's connection string carries a SAS), taken apart from the backend's connection string.
     */
    @Test
    void endpointWithSharedKeyOrSasWorks() {
        Map<String, String> parts = new HashMap<>();
        for (String kv : AzuriteBlobs.connectionString().split(";")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                parts.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        String endpoint = parts.getOrDefault("BlobEndpoint", "https://" + parts.get("AccountName") + ".blob."
                + parts.getOrDefault("EndpointSuffix", "core.windows.net"));
        Map<String, String> opts = parts.containsKey("AccountKey")
                ? Map.of("endpoint", endpoint, "accountName", parts.get("AccountName"), "accountKey",
                        parts.get("AccountKey"))
                : Map.of("endpoint", endpoint, "sasToken", parts.get("SharedAccessSignature"));
        String container = AzuriteServer.uniqueContainerName("endpoint");
        try (WalStorageProvider p = new AzureBlobProviderFactory().open(URI.create("azure-blob:" + container),
                opts)) {
            LogId log = new LogId("f", 0);
            Fence f = p.claim(log);
            p.append(log, f, batch(2, 0, 1, 10));
            assertThat(p.state(log).committedTail()).isZero();
            assertThat(p.trees()).containsExactly("f");
        } finally {
            new com.azure.storage.blob.BlobServiceClientBuilder().connectionString(AzuriteBlobs.connectionString())
                    .buildClient().getBlobContainerClient(container).deleteIfExists();
        }
    }

    /** Two prefixes in one container are two independent stores. */
    @Test
    void prefixesIsolateStoresInOneContainer() {
        String container = AzuriteServer.uniqueContainerName("prefix");
        Map<String, String> opts = Map.of("connectionString", AzuriteBlobs.connectionString());
        AzureBlobProviderFactory factory = new AzureBlobProviderFactory();
        try (WalStorageProvider a = factory.open(URI.create("azure-blob:" + container + "?prefix=a/x"), opts);
             WalStorageProvider b = factory.open(URI.create("azure-blob:" + container + "?prefix=b"), opts)) {
            LogId log = new LogId("tree", 0);
            a.append(log, a.claim(log), batch(3, 0, 2, 10));
            assertThat(a.trees()).containsExactly("tree");
            assertThat(b.trees()).isEmpty();
            assertThat(b.state(log).committedTail()).isEqualTo(-1);
            Fence fb = b.claim(log);
            assertThat(fb.epoch()).isEqualTo(1);
            assertThat(a.logs("tree")).containsExactly(log);
        } finally {
            new com.azure.storage.blob.BlobServiceClientBuilder().connectionString(AzuriteBlobs.connectionString())
                    .buildClient().getBlobContainerClient(container).deleteIfExists();
        }
    }

    /** Every option reaches the configuration; the container comes from the URI in each form. */
    @Test
    void optionsAndUriForms() {
        Map<String, String> o = new HashMap<>();
        o.put("maxBlockBytes", String.valueOf(1 << 20));
        o.put("maxBlocksPerSegment", "100");
        o.put("maxSegmentBytes", String.valueOf(64L << 20));
        o.put("maxEntriesPerBatch", "500");
        o.put("maxCheckpointBytes", String.valueOf(8L << 20));
        o.put("inlineTailBytes", "1000");
        o.put("inlineTailBatches", "7");
        o.put("readChunkBytes", String.valueOf(1 << 20));
        o.put("cacheBytes", "0");
        o.put("replayMillisPerBlock", "2.5");
        o.put("replayMbitPerSecond", "1000");
        o.put("prefix", "p/q");
        o.put("createContainer", "false");
        AzureBlobConfig c = config("azure-blob:mycontainer", o);
        assertThat(c.container()).isEqualTo("mycontainer");
        assertThat(c.maxBlockBytes()).isEqualTo(1 << 20);
        assertThat(c.maxBlocksPerSegment()).isEqualTo(100);
        assertThat(c.maxSegmentBytes()).isEqualTo(64L << 20);
        assertThat(c.maxEntriesPerBatch()).isEqualTo(500);
        assertThat(c.maxCheckpointBytes()).isEqualTo(8L << 20);
        assertThat(c.inlineTailBytes()).isEqualTo(1000);
        assertThat(c.inlineTailBatches()).isEqualTo(7);
        assertThat(c.readChunkBytes()).isEqualTo(1 << 20);
        assertThat(c.cacheBytes()).isZero();
        assertThat(c.replayMillisPerBlock()).isEqualTo(2.5);
        assertThat(c.replayMbitPerSecond()).isEqualTo(1000);
        assertThat(c.prefix()).isEqualTo("p/q/");
        assertThat(c.createContainer()).isFalse();
        assertThat(config("azure-blob://acct.blob.core.windows.net/cc1?sasToken=x", Map.of()).container())
                .isEqualTo("cc1");
        assertThat(config("azure-blob:///cc2", Map.of()).container()).isEqualTo("cc2");
        assertThat(config("azure-blob:cc3", Map.of("container", "cc3")).container()).isEqualTo("cc3");
    }

    /** Bad options fail before any request, naming the option; secrets never appear in messages. */
    @Test
    void badOptionsAreRefusedClearlyWithoutSecrets() {
        AzureBlobProviderFactory f = new AzureBlobProviderFactory();
        Map<String, String> cs = Map.of("connectionString", "DefaultEndpointsProtocol=http;AccountName=x;AccountKey="
                + SECRET);
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:cc1?bogus=1"), cs))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bogus")
                .hasMessageContaining("connectionString");
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:Bad_Name"), cs))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("container name");
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:"), cs)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:cc1?container=cc2"), cs))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cc2");
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:cc1"), Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exactly one credential");
        Map<String, String> two = Map.of("connectionString", "x", "sasToken", SECRET);
        Throwable t = catchThrowable(() -> f.open(URI.create("azure-blob:cc1"), two));
        assertThat(t).isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining(SECRET);
        Throwable bad = catchThrowable(() -> f.open(URI.create("azure-blob:cc1"),
                Map.of("connectionString", "AccountKey=" + SECRET + ";garbage")));
        assertThat(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connectionString")
                .hasMessageNotContaining(SECRET);
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:cc1"), Map.of("sasToken", "sig=1")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("endpoint");
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:cc1?maxBlocksPerSegment=50001"), cs))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxBlocksPerSegment");
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:cc1?replayMillisPerBlock=fast"), cs))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replayMillisPerBlock");
        assertThatThrownBy(() -> f.open(URI.create("azure-blob:cc1?inlineTailBytes=2000000"), cs))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inlineTailBytes");
        assertThatThrownBy(() -> f.open(URI.create("other:cc1"), cs)).isInstanceOf(IllegalArgumentException.class);
    }

    /** A missing container with creation off is a clear storage failure, not a silent success. */
    @Test
    void noContainerAndNoCreationFailsClearly() {
        Map<String, String> opts = Map.of("connectionString", AzuriteBlobs.connectionString());
        try (WalStorageProvider p = new AzureBlobProviderFactory().open(URI.create("azure-blob:"
                + AzuriteServer.uniqueContainerName("missing") + "?createContainer=false"), opts)) {
            LogId log = new LogId("f", 0);
            assertThat(p.state(log).committedTail()).isEqualTo(-1);
            assertThat(p.trees()).isEmpty();
            assertThatThrownBy(() -> p.claim(log)).isInstanceOf(WalStorageException.class)
                    .hasMessageContaining("404");
        }
    }

    /** The descriptor: limits that fit one 4 MiB block, the features, and the default replay model. */
    @Test
    void descriptorDeclaresLimitsFeaturesAndTheReplayModel() {
        AzureBlobConfig c = AzureBlobConfig.builder("cc1").build();
        AzureBlobWalStorageProvider p = new AzureBlobWalStorageProvider(
                new com.azure.storage.blob.BlobContainerClientBuilder().endpoint("http://127.0.0.1:1/acct/cc1")
                        .buildClient(), c);
        ProviderDescriptor d = p.describe();
        assertThat(d.name()).isEqualTo("azure-blob");
        assertThat(d.durability()).isEqualTo(DurabilityLevel.REPLICATED);
        assertThat(d.features()).containsExactlyInAnyOrder(ProviderFeature.DEFERRED_STAGE,
                ProviderFeature.CONCURRENT_STAGE, ProviderFeature.PHYSICAL_BYTES, ProviderFeature.PERSISTENT,
                ProviderFeature.REPAIR, ProviderFeature.RUNS, ProviderFeature.DROP);
        // 4 MiB block - 8 (block header) - 48 (frame header and CRC) - 4 x 10,000 entries
        assertThat(d.limits().maxBatchBytes()).isEqualTo((4 << 20) - 8 - 48 - 40_000);
        assertThat(d.limits().maxEntryBytes()).isEqualTo((4 << 20) - 8 - 48 - 40_000);
        assertThat(d.limits().maxEntriesPerBatch()).isEqualTo(10_000);
        ReplayCostModel m = d.replayCost();
        // 5.7 ms per block; a flushed block holds >= 64 KiB or 1,024 batches; 100 Mbit/s
        assertThat(m.millisPerBatch()).isCloseTo(5.7 / 1024, within(1e-9));
        assertThat(m.millisPerMiB()).isCloseTo(83.886 + 5.7 * 16, within(0.01));
        ReplayCostModel off = AzureBlobConfig.builder("cc1").inlineTailBytes(0).build().replayCostModel();
        assertThat(off.millisPerBatch()).isEqualTo(5.7);
        assertThat(off.millisPerMiB()).isCloseTo(83.886 + 5.7 / 4, within(0.01));
        // 1,000 one-block batches of 500 bytes: the reported log costs ~5.7 s by this model
        assertThat(off.estimateMillis(1000, 500_000)).isCloseTo(5740, within(10.0));
        p.close();
        assertThat(p.describe()).isEqualTo(d);
    }

    /** Contradicting settings are refused at build with a message naming them. */
    @Test
    void configRefusesContradictions() {
        assertThatThrownBy(() -> AzureBlobConfig.builder("cc1").maxBlockBytes(64 << 10).maxEntriesPerBatch(100_000)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxEntriesPerBatch");
        assertThatThrownBy(() -> AzureBlobConfig.builder("cc1").maxBlockBytes(1 << 20).maxSegmentBytes(100_000)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxSegmentBytes");
        assertThatThrownBy(() -> AzureBlobConfig.builder("cc1").maxBlockBytes(64 << 10).inlineTailBytes(1 << 20)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inlineTailBytes");
        assertThatThrownBy(() -> AzureBlobConfig.builder("cc1").maxBlockBytes(64 << 10)
                .maxCheckpointBytes(50_000L * (64 << 10) + 1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxCheckpointBytes");
        assertThatThrownBy(() -> AzureBlobConfig.builder("cc1").prefix("/abs")).isInstanceOf(
                IllegalArgumentException.class).hasMessageContaining("prefix");
        assertThatThrownBy(() -> AzureBlobConfig.builder("ab")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AzureBlobConfig.builder("a--b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AzureBlobConfig.builder("cc1").replayMbitPerSecond(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replayMbitPerSecond");
        assertThat(List.of(AzureBlobConfig.builder("abc").build().container(),
                AzureBlobConfig.builder("a-b-1").build().container())).containsExactly("abc", "a-b-1");
    }
}
