package dev.lattice.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code lattice.*} properties of the starter. Every engine setting left unset (null) keeps the engine's
 * default (see {@code dev.lattice.engine.LatticeConfig.Builder}); the defaults named below are the engine's.
 * Sizes are in bytes, durations in Spring's forms ({@code 30s}, {@code 500ms}, {@code PT1M}).
 *
 * <p>A mutable bean filled by Spring's binder at startup; not thread-safe, read once by the auto-configuration.
 */
@ConfigurationProperties(prefix = "lattice")
public class LatticeProperties {

    /** Whether the starter creates a Lattice bean at all. */
    private boolean enabled = true;

    /**
     * The main ("default") provider's URI, e.g. chronicle:./lattice-data, memory:app, postgres://host:5432/db. The
     * provider module for its scheme must be on the classpath. Required.
     */
    private String uri;

    /** Options for the main provider's factory; they win over the URI's query options. */
    private Map<String, String> providerOptions = new LinkedHashMap<>();

    /** Further providers under a key (not "default"), e.g. lattice.providers.archive.uri=... . */
    private Map<String, NamedProvider> providers = new LinkedHashMap<>();

    /**
     * Provider keys that new trees' partitions are placed on, round-robin (e.g. default,archive). Empty: every log
     * on the main provider.
     */
    private List<String> placementRoundRobin = new ArrayList<>();

    /** Partitions (logs) of a new tree, 1..MAX_PARTITION+1. Engine default 8. */
    private Integer partitions;

    /** Batches staged in parallel per log, 1..1024. Engine default 16. */
    private Integer maxPendingBatches;

    /** Entries waiting before a further batch is cut while one is staged, 1..1,000,000. Engine default 256. */
    private Integer coalescingThreshold;

    /** Most entries per batch, 1..1,000,000 (also clamped to the provider's limit). Engine default 4096. */
    private Integer maxBatchEntries;

    /** Most payload bytes per batch, at least 1 (also clamped to the provider's limit). Engine default 4 MiB. */
    private Long maxBatchBytes;

    /** Admission bound per log, in entries waiting to be batched, 1..10,000,000. Engine default 16,384. */
    private Integer maxQueuedEntriesPerLog;

    /** Admission bound per log, in encoded bytes waiting to be batched, at least 1. Engine default 64 MiB. */
    private Long maxQueuedBytesPerLog;

    /** How long a write waits for admission before LatticeSaturatedException. Engine default 10 s. */
    private Duration admissionTimeout;

    /** Retries of a transient provider failure per call, 0..100. Engine default 5. */
    private Integer maxRetries;

    /** First retry delay, doubling per retry up to 1 s. Engine default 20 ms. */
    private Duration retryBackoff;

    /** Checkpoint a partition after this many committed entries, at least 1. Engine default 50,000. */
    private Long checkpointEveryEntries;

    /** Checkpoint a partition after this many committed payload bytes, at least 1. Engine default 64 MiB. */
    private Long checkpointEveryBytes;

    /** Checkpoint once the provider's replay cost estimate reaches this budget, positive. Engine default 250 ms. */
    private Duration checkpointReplayBudget;

    /** Partitions replayed in parallel when a tree opens, 1..256. Engine default 4. */
    private Integer replayParallelism;

    /** Budget of close() to drain in-flight writes and checkpoint. Engine default 30 s. */
    private Duration closeTimeout;

    /** Deadline of each provider call the engine makes, at most 1 h; 0 disables it. Engine default 30 s. */
    private Duration providerCallTimeout;

    /** Period of the ownership check of idle logs: 0 (off) or at least 10 ms. Engine default 1 s. */
    private Duration ownershipCheckInterval;

    /** Memtable bytes of all open trees (all data, for providers without a run store). Default a quarter of the max heap. */
    private Long memoryBudgetBytes;

    /** Longest key in UTF-8 bytes, 1..65536. Engine default 1024. */
    private Integer maxKeyBytes;

    /** Most puts and deletes in one atomic write, 1..1,000,000. Engine default 4096. */
    private Integer maxAtomicKeys;

    /** How long an atomic write's outcome is remembered for its idempotency key, positive. Engine default 24 h. */
    private Duration atomicRetention;

    /** Metrics settings. */
    private final Metrics metrics = new Metrics();

    /** A provider registered under a key other than "default". */
    public static class NamedProvider {
        /** The provider URI. Required. */
        private String uri;
        /** Options for its factory. */
        private Map<String, String> options = new LinkedHashMap<>();

        /** @return the URI, or null when unset */
        public String getUri() {
            return uri;
        }

        /** @param uri the provider URI */
        public void setUri(String uri) {
            this.uri = uri;
        }

        /** @return the factory options (mutable, never null) */
        public Map<String, String> getOptions() {
            return options;
        }

        /** @param options the factory options */
        public void setOptions(Map<String, String> options) {
            this.options = options;
        }
    }

    /** Metrics settings ({@code lattice.metrics.*}). */
    public static class Metrics {
        /** Whether the Lattice registers its meters on the application's MeterRegistry (when there is one). */
        private boolean enabled = true;

        /**
         * Value of the lattice.name tag on every meter of this instance, 1 to 128 characters, so several instances
         * can share one registry. Engine default: the main provider's URI without credentials or query.
         */
        private String name;

        /**
         * Whether per-log meters carry a partition tag; false aggregates them per tree (counters and timers shared,
         * gauges summed), fewer series for trees with many partitions.
         */
        private boolean partitionTag = true;

        /** @return whether meters go to the application's registry */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether meters go to the application's registry */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the lattice.name tag value, or null for the engine's default */
        public String getName() {
            return name;
        }

        /** @param name the lattice.name tag value */
        public void setName(String name) {
            this.name = name;
        }

        /** @return whether per-log meters carry a partition tag */
        public boolean isPartitionTag() {
            return partitionTag;
        }

        /** @param partitionTag whether per-log meters carry a partition tag */
        public void setPartitionTag(boolean partitionTag) {
            this.partitionTag = partitionTag;
        }
    }

    /** @return whether the starter creates the bean */
    public boolean isEnabled() {
        return enabled;
    }

    /** @param enabled whether the starter creates the bean */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return the main provider's URI, or null when unset */
    public String getUri() {
        return uri;
    }

    /** @param uri the main provider's URI */
    public void setUri(String uri) {
        this.uri = uri;
    }

    /** @return the main provider's factory options (mutable, never null) */
    public Map<String, String> getProviderOptions() {
        return providerOptions;
    }

    /** @param providerOptions the main provider's factory options */
    public void setProviderOptions(Map<String, String> providerOptions) {
        this.providerOptions = providerOptions;
    }

    /** @return the further providers by key (mutable, never null) */
    public Map<String, NamedProvider> getProviders() {
        return providers;
    }

    /** @param providers the further providers by key */
    public void setProviders(Map<String, NamedProvider> providers) {
        this.providers = providers;
    }

    /** @return the round-robin placement keys; empty for all on the main provider */
    public List<String> getPlacementRoundRobin() {
        return placementRoundRobin;
    }

    /** @param placementRoundRobin the round-robin placement keys */
    public void setPlacementRoundRobin(List<String> placementRoundRobin) {
        this.placementRoundRobin = placementRoundRobin;
    }

    /** @return partitions of a new tree, or null for the engine default */
    public Integer getPartitions() {
        return partitions;
    }

    /** @param partitions partitions of a new tree */
    public void setPartitions(Integer partitions) {
        this.partitions = partitions;
    }

    /** @return batches staged in parallel per log, or null */
    public Integer getMaxPendingBatches() {
        return maxPendingBatches;
    }

    /** @param maxPendingBatches batches staged in parallel per log */
    public void setMaxPendingBatches(Integer maxPendingBatches) {
        this.maxPendingBatches = maxPendingBatches;
    }

    /** @return the coalescing threshold in entries, or null */
    public Integer getCoalescingThreshold() {
        return coalescingThreshold;
    }

    /** @param coalescingThreshold the coalescing threshold in entries */
    public void setCoalescingThreshold(Integer coalescingThreshold) {
        this.coalescingThreshold = coalescingThreshold;
    }

    /** @return most entries per batch, or null */
    public Integer getMaxBatchEntries() {
        return maxBatchEntries;
    }

    /** @param maxBatchEntries most entries per batch */
    public void setMaxBatchEntries(Integer maxBatchEntries) {
        this.maxBatchEntries = maxBatchEntries;
    }

    /** @return most payload bytes per batch, or null */
    public Long getMaxBatchBytes() {
        return maxBatchBytes;
    }

    /** @param maxBatchBytes most payload bytes per batch */
    public void setMaxBatchBytes(Long maxBatchBytes) {
        this.maxBatchBytes = maxBatchBytes;
    }

    /** @return the admission bound per log in entries, or null */
    public Integer getMaxQueuedEntriesPerLog() {
        return maxQueuedEntriesPerLog;
    }

    /** @param maxQueuedEntriesPerLog the admission bound per log in entries */
    public void setMaxQueuedEntriesPerLog(Integer maxQueuedEntriesPerLog) {
        this.maxQueuedEntriesPerLog = maxQueuedEntriesPerLog;
    }

    /** @return the admission bound per log in bytes, or null */
    public Long getMaxQueuedBytesPerLog() {
        return maxQueuedBytesPerLog;
    }

    /** @param maxQueuedBytesPerLog the admission bound per log in bytes */
    public void setMaxQueuedBytesPerLog(Long maxQueuedBytesPerLog) {
        this.maxQueuedBytesPerLog = maxQueuedBytesPerLog;
    }

    /** @return the admission timeout, or null */
    public Duration getAdmissionTimeout() {
        return admissionTimeout;
    }

    /** @param admissionTimeout the admission timeout */
    public void setAdmissionTimeout(Duration admissionTimeout) {
        this.admissionTimeout = admissionTimeout;
    }

    /** @return retries per provider call, or null */
    public Integer getMaxRetries() {
        return maxRetries;
    }

    /** @param maxRetries retries per provider call */
    public void setMaxRetries(Integer maxRetries) {
        this.maxRetries = maxRetries;
    }

    /** @return the first retry delay, or null */
    public Duration getRetryBackoff() {
        return retryBackoff;
    }

    /** @param retryBackoff the first retry delay */
    public void setRetryBackoff(Duration retryBackoff) {
        this.retryBackoff = retryBackoff;
    }

    /** @return the checkpoint threshold in entries, or null */
    public Long getCheckpointEveryEntries() {
        return checkpointEveryEntries;
    }

    /** @param checkpointEveryEntries the checkpoint threshold in entries */
    public void setCheckpointEveryEntries(Long checkpointEveryEntries) {
        this.checkpointEveryEntries = checkpointEveryEntries;
    }

    /** @return the checkpoint threshold in bytes, or null */
    public Long getCheckpointEveryBytes() {
        return checkpointEveryBytes;
    }

    /** @param checkpointEveryBytes the checkpoint threshold in bytes */
    public void setCheckpointEveryBytes(Long checkpointEveryBytes) {
        this.checkpointEveryBytes = checkpointEveryBytes;
    }

    /** @return the checkpoint replay budget, or null */
    public Duration getCheckpointReplayBudget() {
        return checkpointReplayBudget;
    }

    /** @param checkpointReplayBudget the checkpoint replay budget */
    public void setCheckpointReplayBudget(Duration checkpointReplayBudget) {
        this.checkpointReplayBudget = checkpointReplayBudget;
    }

    /** @return partitions replayed in parallel, or null */
    public Integer getReplayParallelism() {
        return replayParallelism;
    }

    /** @param replayParallelism partitions replayed in parallel */
    public void setReplayParallelism(Integer replayParallelism) {
        this.replayParallelism = replayParallelism;
    }

    /** @return the close budget, or null */
    public Duration getCloseTimeout() {
        return closeTimeout;
    }

    /** @param closeTimeout the close budget */
    public void setCloseTimeout(Duration closeTimeout) {
        this.closeTimeout = closeTimeout;
    }

    /** @return the provider call deadline, or null */
    public Duration getProviderCallTimeout() {
        return providerCallTimeout;
    }

    /** @param providerCallTimeout the provider call deadline */
    public void setProviderCallTimeout(Duration providerCallTimeout) {
        this.providerCallTimeout = providerCallTimeout;
    }

    /** @return the ownership check period, or null */
    public Duration getOwnershipCheckInterval() {
        return ownershipCheckInterval;
    }

    /** @param ownershipCheckInterval the ownership check period */
    public void setOwnershipCheckInterval(Duration ownershipCheckInterval) {
        this.ownershipCheckInterval = ownershipCheckInterval;
    }

    /** @return the memory budget in bytes, or null */
    public Long getMemoryBudgetBytes() {
        return memoryBudgetBytes;
    }

    /** @param memoryBudgetBytes the memory budget in bytes */
    public void setMemoryBudgetBytes(Long memoryBudgetBytes) {
        this.memoryBudgetBytes = memoryBudgetBytes;
    }

    /** @return the longest key in UTF-8 bytes, or null */
    public Integer getMaxKeyBytes() {
        return maxKeyBytes;
    }

    /** @param maxKeyBytes the longest key in UTF-8 bytes */
    public void setMaxKeyBytes(Integer maxKeyBytes) {
        this.maxKeyBytes = maxKeyBytes;
    }

    /** @return most keys per atomic write, or null */
    public Integer getMaxAtomicKeys() {
        return maxAtomicKeys;
    }

    /** @param maxAtomicKeys most keys per atomic write */
    public void setMaxAtomicKeys(Integer maxAtomicKeys) {
        this.maxAtomicKeys = maxAtomicKeys;
    }

    /** @return the atomic outcome retention, or null */
    public Duration getAtomicRetention() {
        return atomicRetention;
    }

    /** @param atomicRetention the atomic outcome retention */
    public void setAtomicRetention(Duration atomicRetention) {
        this.atomicRetention = atomicRetention;
    }

    /** @return the metrics settings */
    public Metrics getMetrics() {
        return metrics;
    }
}
