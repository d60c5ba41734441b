package dev.lattice.engine;

import dev.lattice.spi.WalStorageProvider;
import io.micrometer.core.instrument.MeterRegistry;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;

/**
 * Configuration of a {@link Lattice}. Build with {@link #builder()}; every setting has a default (see each builder
 * method), so {@code LatticeConfig.builder().uri("chronicle:./data").build()} is enough. Immutable and thread-safe.
 */
public final class LatticeConfig {

    /** Default partitions per new tree. */
    public static final int DEFAULT_PARTITIONS = 8;
    /** Default for {@link Builder#maxPendingBatches}. */
    public static final int DEFAULT_MAX_PENDING_BATCHES = 16;
    /** Default for {@link Builder#coalescingThreshold}. */
    public static final int DEFAULT_COALESCING_THRESHOLD = 256;
    /** Default for {@link Builder#maxBatchEntries}. */
    public static final int DEFAULT_MAX_BATCH_ENTRIES = 4096;
    /** Default for {@link Builder#maxBatchBytes}: 4 MiB. */
    public static final long DEFAULT_MAX_BATCH_BYTES = 4L << 20;
    /** Default for {@link Builder#maxQueuedEntriesPerLog}. */
    public static final int DEFAULT_MAX_QUEUED_ENTRIES = 16_384;
    /** Default for {@link Builder#maxQueuedBytesPerLog}: 64 MiB. */
    public static final long DEFAULT_MAX_QUEUED_BYTES = 64L << 20;
    /** Default for {@link Builder#memtableBytes}: 32 MiB. */
    public static final long DEFAULT_MEMTABLE_BYTES = 32L << 20;
    /** Default for {@link Builder#idleMergeDelay}. */
    public static final Duration DEFAULT_IDLE_MERGE_DELAY = Duration.ofSeconds(10);
    /** Default for {@link Builder#level0CompactionTrigger}. */
    public static final int DEFAULT_LEVEL0_COMPACTION_TRIGGER = 4;
    /** Default for {@link Builder#levelSizeRatio}. */
    public static final int DEFAULT_LEVEL_SIZE_RATIO = 10;
    /** Default for {@link Builder#targetRunBytes}: 16 MiB. */
    public static final long DEFAULT_TARGET_RUN_BYTES = 16L << 20;
    /** Default for {@link Builder#maintenanceThreads}. */
    public static final int DEFAULT_MAINTENANCE_THREADS = 2;
    /** Default for {@link Builder#checkpointEveryEntries}. */
    public static final long DEFAULT_CHECKPOINT_ENTRIES = 50_000;
    /** Default for {@link Builder#checkpointEveryBytes}: 64 MiB. */
    public static final long DEFAULT_CHECKPOINT_BYTES = 64L << 20;
    /** Default for {@link Builder#maxKeyBytes}. */
    public static final int DEFAULT_MAX_KEY_BYTES = 1024;
    /** Default for {@link Builder#maxAtomicKeys}. */
    public static final int DEFAULT_MAX_ATOMIC_KEYS = 4096;
    /** Default for {@link Builder#atomicRetention}: 24 hours. */
    public static final Duration DEFAULT_ATOMIC_RETENTION = Duration.ofHours(24);
    /** Default for {@link Builder#changeFeedRetentionEntries}: one million entries per log. */
    public static final long DEFAULT_CHANGE_FEED_RETENTION_ENTRIES = 1_000_000;
    /** Hard upper bound for {@link Builder#maxKeyBytes}: 64 KiB. */
    public static final int MAX_KEY_BYTES_LIMIT = 64 * 1024;
    /** Default deadline of one provider call made by the engine (see {@link Builder#providerCallTimeout}). */
    public static final Duration DEFAULT_PROVIDER_CALL_TIMEOUT = Duration.ofSeconds(30);
    /** Default period of the ownership check of idle logs (see {@link Builder#ownershipCheckInterval}). */
    public static final Duration DEFAULT_OWNERSHIP_CHECK_INTERVAL = Duration.ofSeconds(1);
    /** Default period of a read-only follower's log polls (see {@link Builder#followerPollInterval}). */
    public static final Duration DEFAULT_FOLLOWER_POLL_INTERVAL = Duration.ofMillis(50);

    final WalStorageProvider provider;
    final String uri;
    final Map<String, String> providerOptions;
    final boolean closeProvider;
    final int partitions;
    final int maxPendingBatches;
    final int coalescingThreshold;
    final int maxBatchEntries;
    final long maxBatchBytes;
    final int maxQueuedEntriesPerLog;
    final long maxQueuedBytesPerLog;
    final Duration admissionTimeout;
    final int maxRetries;
    final Duration retryBackoff;
    final long checkpointEveryEntries;
    final long checkpointEveryBytes;
    final Duration checkpointReplayBudget;
    final int replayParallelism;
    final int replayPageEntries;
    final long replayPageBytes;
    final Duration closeTimeout;
    final Duration providerCallTimeout;
    final Duration ownershipCheckInterval;
    final Duration readLease;
    final Duration followerPollInterval;
    final String metricsName;
    final boolean meterPartitionTag;
    final MeterRegistry meterRegistry;
    final long memoryBudgetBytes;
    final long memtableBytes;
    final long blockCacheBytes;
    final int runBlockBytes;
    final int level0CompactionTrigger;
    final Duration idleMergeDelay;
    final int levelSizeRatio;
    final long targetRunBytes;
    final int maintenanceThreads;
    final int maxKeyBytes;
    final int maxAtomicKeys;
    final Duration atomicRetention;
    /** The wall clock of time-to-live: expiry at write time, and the "now" readers compare expiries with. */
    final java.time.Clock clock;
    final long changeFeedRetentionEntries;
    final ExecutorService ioExecutor;
    final Map<String, NamedProvider> namedProviders;
    final PlacementPolicy placementPolicy;

    /** A provider registered under a key other than {@code default}: by URI (opened by the lattice) or instance. */
    record NamedProvider(String uri, Map<String, String> options, WalStorageProvider instance, boolean close) {
    }

    private LatticeConfig(Builder b) {
        this.provider = b.provider;
        this.uri = b.uri;
        this.providerOptions = Map.copyOf(b.providerOptions);
        this.closeProvider = b.closeProvider;
        this.partitions = b.partitions;
        this.maxPendingBatches = b.maxPendingBatches;
        this.coalescingThreshold = b.coalescingThreshold;
        this.maxBatchEntries = b.maxBatchEntries;
        this.maxBatchBytes = b.maxBatchBytes;
        this.maxQueuedEntriesPerLog = b.maxQueuedEntriesPerLog;
        this.maxQueuedBytesPerLog = b.maxQueuedBytesPerLog;
        this.admissionTimeout = b.admissionTimeout;
        this.maxRetries = b.maxRetries;
        this.retryBackoff = b.retryBackoff;
        this.checkpointEveryEntries = b.checkpointEveryEntries;
        this.checkpointEveryBytes = b.checkpointEveryBytes;
        this.checkpointReplayBudget = b.checkpointReplayBudget;
        this.replayParallelism = b.replayParallelism;
        this.replayPageEntries = b.replayPageEntries;
        this.replayPageBytes = b.replayPageBytes;
        this.closeTimeout = b.closeTimeout;
        this.providerCallTimeout = b.providerCallTimeout;
        this.ownershipCheckInterval = b.ownershipCheckInterval;
        this.readLease = b.readLease;
        this.followerPollInterval = b.followerPollInterval;
        this.metricsName = b.metricsName != null ? b.metricsName : EngineMeters.defaultName(b.uri);
        this.meterPartitionTag = b.meterPartitionTag;
        this.meterRegistry = b.meterRegistry;
        this.memoryBudgetBytes = b.memoryBudgetBytes;
        this.memtableBytes = b.memtableBytes;
        this.blockCacheBytes = b.blockCacheBytes;
        this.runBlockBytes = b.runBlockBytes;
        this.level0CompactionTrigger = b.level0CompactionTrigger;
        this.idleMergeDelay = b.idleMergeDelay;
        this.levelSizeRatio = b.levelSizeRatio;
        this.targetRunBytes = b.targetRunBytes;
        this.maintenanceThreads = b.maintenanceThreads;
        this.maxKeyBytes = b.maxKeyBytes;
        this.maxAtomicKeys = b.maxAtomicKeys;
        this.atomicRetention = b.atomicRetention;
        this.clock = b.clock;
        this.changeFeedRetentionEntries = b.changeFeedRetentionEntries;
        this.ioExecutor = b.ioExecutor;
        this.namedProviders = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(b.namedProviders));
        this.placementPolicy = b.placementPolicy;
    }

    /** {@return a builder with every default set} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the provider URI, or null when a provider instance was given} */
    public String uri() {
        return uri;
    }

    /** {@return partitions for new trees} */
    public int partitions() {
        return partitions;
    }

    @Override
    public String toString() {
        return "LatticeConfig[" + (uri != null ? uri : "provider instance") + ", partitions=" + partitions
                + ", maxPendingBatches=" + maxPendingBatches + ", coalescingThreshold=" + coalescingThreshold
                + ", maxBatchEntries=" + maxBatchEntries + ", maxBatchBytes=" + maxBatchBytes
                + ", checkpointEveryEntries=" + checkpointEveryEntries + "]";
    }

    /** Builds a {@link LatticeConfig}. Not thread-safe. */
    public static final class Builder {
        private WalStorageProvider provider;
        private String uri;
        private Map<String, String> providerOptions = Map.of();
        private boolean closeProvider = true;
        private int partitions = DEFAULT_PARTITIONS;
        private int maxPendingBatches = DEFAULT_MAX_PENDING_BATCHES;
        private int coalescingThreshold = DEFAULT_COALESCING_THRESHOLD;
        private int maxBatchEntries = DEFAULT_MAX_BATCH_ENTRIES;
        private long maxBatchBytes = DEFAULT_MAX_BATCH_BYTES;
        private int maxQueuedEntriesPerLog = DEFAULT_MAX_QUEUED_ENTRIES;
        private long maxQueuedBytesPerLog = DEFAULT_MAX_QUEUED_BYTES;
        private Duration admissionTimeout = Duration.ofSeconds(10);
        private int maxRetries = 5;
        private Duration retryBackoff = Duration.ofMillis(20);
        private long checkpointEveryEntries = DEFAULT_CHECKPOINT_ENTRIES;
        private long checkpointEveryBytes = DEFAULT_CHECKPOINT_BYTES;
        private Duration checkpointReplayBudget = Duration.ofMillis(250);
        private int replayParallelism = 4;
        private int replayPageEntries = 10_000;
        private long replayPageBytes = 8L << 20;
        private Duration closeTimeout = Duration.ofSeconds(30);
        private Duration providerCallTimeout = DEFAULT_PROVIDER_CALL_TIMEOUT;
        private Duration ownershipCheckInterval = DEFAULT_OWNERSHIP_CHECK_INTERVAL;
        private Duration readLease = Duration.ZERO;
        private Duration followerPollInterval = DEFAULT_FOLLOWER_POLL_INTERVAL;
        private String metricsName;
        private boolean meterPartitionTag = true;
        private MeterRegistry meterRegistry;
        private long memoryBudgetBytes = Runtime.getRuntime().maxMemory() / 4;
        private long memtableBytes = heapShare(DEFAULT_MEMTABLE_BYTES);
        private long blockCacheBytes = Math.min(64L << 20, Runtime.getRuntime().maxMemory() / 8);
        private int runBlockBytes;
        private int level0CompactionTrigger = DEFAULT_LEVEL0_COMPACTION_TRIGGER;
        private Duration idleMergeDelay = DEFAULT_IDLE_MERGE_DELAY;
        private int levelSizeRatio = DEFAULT_LEVEL_SIZE_RATIO;
        private long targetRunBytes = heapShare(DEFAULT_TARGET_RUN_BYTES);
        private int maintenanceThreads = DEFAULT_MAINTENANCE_THREADS;
        private int maxKeyBytes = DEFAULT_MAX_KEY_BYTES;
        private int maxAtomicKeys = DEFAULT_MAX_ATOMIC_KEYS;
        private Duration atomicRetention = DEFAULT_ATOMIC_RETENTION;
        private java.time.Clock clock = java.time.Clock.systemUTC();
        private long changeFeedRetentionEntries = DEFAULT_CHANGE_FEED_RETENTION_ENTRIES;
        private ExecutorService ioExecutor;
        private final Map<String, NamedProvider> namedProviders = new java.util.LinkedHashMap<>();
        private PlacementPolicy placementPolicy = PlacementPolicy.allOnDefault();

        private Builder() {
        }

        /**
         * The provider, by URI (found through {@link dev.lattice.spi.Providers}); the lattice opens and closes it.
         *
         * @param uri e.g. {@code chronicle:./lattice-data}
         * @return this
         */
        public Builder uri(String uri) {
            this.uri = Objects.requireNonNull(uri, "uri");
            this.provider = null;
            return this;
        }

        /**
         * Options passed to the provider factory with {@link #uri}; they win over the URI's query options.
         *
         * @param options the options
         * @return this
         */
        public Builder providerOptions(Map<String, String> options) {
            this.providerOptions = Map.copyOf(options);
            return this;
        }

        /**
         * The provider, as an instance.
         *
         * @param provider an open provider
         * @param closeWithLattice whether {@link Lattice#close()} closes it
         * @return this
         */
        public Builder provider(WalStorageProvider provider, boolean closeWithLattice) {
            this.provider = Objects.requireNonNull(provider, "provider");
            this.closeProvider = closeWithLattice;
            this.uri = null;
            return this;
        }

        /**
         * Partitions (logs) of a new tree; an existing tree keeps the count it was created with. Default 8.
         *
         * @param partitions 1..{@value dev.lattice.spi.LogId#MAX_PARTITION}+1
         * @return this
         */
        public Builder partitions(int partitions) {
            this.partitions = check("partitions", partitions, 1, dev.lattice.spi.LogId.MAX_PARTITION + 1);
            return this;
        }

        /**
         * Batches staged in parallel per log, not yet committed. Default 16.
         *
         * @param n 1..1024
         * @return this
         */
        public Builder maxPendingBatches(int n) {
            this.maxPendingBatches = check("maxPendingBatches", n, 1, 1024);
            return this;
        }

        /**
         * While a batch of a log is being staged, a further batch is cut only once this many entries wait; below
         * it, waiting writes coalesce into the next batch. 1 pipelines every write. Default 256.
         *
         * @param entries 1..1,000,000
         * @return this
         */
        public Builder coalescingThreshold(int entries) {
            this.coalescingThreshold = check("coalescingThreshold", entries, 1, 1_000_000);
            return this;
        }

        /**
         * Most entries per batch (also clamped to the provider's limit). Default 4096.
         *
         * @param n 1..1,000,000
         * @return this
         */
        public Builder maxBatchEntries(int n) {
            this.maxBatchEntries = check("maxBatchEntries", n, 1, 1_000_000);
            return this;
        }

        /**
         * Most payload bytes per batch (also clamped to the provider's limit). Default 4 MiB.
         *
         * @param bytes at least 1
         * @return this
         */
        public Builder maxBatchBytes(long bytes) {
            this.maxBatchBytes = checkLong("maxBatchBytes", bytes, 1, Long.MAX_VALUE);
            return this;
        }

        /**
         * Admission bound per log: writes waiting to be batched. Default 16,384 entries.
         *
         * @param n 1..10,000,000
         * @return this
         */
        public Builder maxQueuedEntriesPerLog(int n) {
            this.maxQueuedEntriesPerLog = check("maxQueuedEntriesPerLog", n, 1, 10_000_000);
            return this;
        }

        /**
         * Admission bound per log, in encoded bytes. Default 64 MiB. A single write larger than this is still
         * admitted when the queue is empty.
         *
         * @param bytes at least 1
         * @return this
         */
        public Builder maxQueuedBytesPerLog(long bytes) {
            this.maxQueuedBytesPerLog = checkLong("maxQueuedBytesPerLog", bytes, 1, Long.MAX_VALUE);
            return this;
        }

        /**
         * How long a write waits for admission before {@link LatticeSaturatedException}. Default 10 s.
         *
         * @param timeout not negative
         * @return this
         */
        public Builder admissionTimeout(Duration timeout) {
            this.admissionTimeout = checkDuration("admissionTimeout", timeout);
            return this;
        }

        /**
         * Retries of a transient provider failure per call, with the same batch id. Default 5.
         *
         * @param n 0..100
         * @return this
         */
        public Builder maxRetries(int n) {
            this.maxRetries = check("maxRetries", n, 0, 100);
            return this;
        }

        /**
         * First retry delay; doubles per retry up to 1 s. Default 20 ms.
         *
         * @param backoff not negative
         * @return this
         */
        public Builder retryBackoff(Duration backoff) {
            this.retryBackoff = checkDuration("retryBackoff", backoff);
            return this;
        }

        /**
         * Checkpoint a partition once this many entries were committed since its last checkpoint. Default 50,000.
         *
         * @param entries at least 1
         * @return this
         */
        public Builder checkpointEveryEntries(long entries) {
            this.checkpointEveryEntries = checkLong("checkpointEveryEntries", entries, 1, Long.MAX_VALUE);
            return this;
        }

        /**
         * Checkpoint a partition once this many payload bytes were committed since its last checkpoint. Default
         * 64 MiB.
         *
         * @param bytes at least 1
         * @return this
         */
        public Builder checkpointEveryBytes(long bytes) {
            this.checkpointEveryBytes = checkLong("checkpointEveryBytes", bytes, 1, Long.MAX_VALUE);
            return this;
        }

        /**
         * Checkpoint a partition once the provider's replay cost estimate
         * ({@link dev.lattice.spi.ProviderDescriptor#replayCost()}) for the batches and bytes committed since its
         * last checkpoint reaches this budget. Has no effect for providers that give no estimate. Default 250 ms.
         *
         * @param budget positive
         * @return this
         */
        public Builder checkpointReplayBudget(Duration budget) {
            this.checkpointReplayBudget = checkDuration("checkpointReplayBudget", budget);
            if (budget.isZero()) {
                throw new IllegalArgumentException("checkpointReplayBudget must be positive");
            }
            return this;
        }

        /**
         * Partitions replayed in parallel when a tree opens. Default 4.
         *
         * @param n 1..256
         * @return this
         */
        public Builder replayParallelism(int n) {
            this.replayParallelism = check("replayParallelism", n, 1, 256);
            return this;
        }

        /**
         * Page size of replay reads. Defaults 10,000 entries and 8 MiB.
         *
         * @param entries 1..1,000,000
         * @param bytes at least 1
         * @return this
         */
        public Builder replayPage(int entries, long bytes) {
            this.replayPageEntries = check("replayPageEntries", entries, 1, 1_000_000);
            this.replayPageBytes = checkLong("replayPageBytes", bytes, 1, Long.MAX_VALUE);
            return this;
        }

        /**
         * Most puts and deletes in one atomic write (preconditions not counted). Default
         * {@value LatticeConfig#DEFAULT_MAX_ATOMIC_KEYS}. Each log's part of an atomic write must also fit one log entry of its
         * provider ({@code ProviderLimits.maxEntryBytes}) and one batch ({@link #maxBatchBytes}).
         *
         * @param keys 1..1,000,000
         * @return this
         */
        public Builder maxAtomicKeys(int keys) {
            this.maxAtomicKeys = check("maxAtomicKeys", keys, 1, 1_000_000);
            return this;
        }

        /**
         * How long the outcome of an atomic write with an idempotency key is remembered, so that a retry with the
         * same key re-attaches to it instead of writing again. Default 24 hours. (Outcomes whose participants have
         * not all recorded them are kept longer, until they have.)
         *
         * @param retention at least 1 ms
         * @return this
         */
        public Builder atomicRetention(Duration retention) {
            this.atomicRetention = checkDuration("atomicRetention", retention);
            if (retention.isZero()) {
                throw new IllegalArgumentException("atomicRetention must be positive, got " + retention);
            }
            return this;
        }

        /**
         * The wall clock of time-to-live ({@link Tree#put(String, byte[], Duration)}): a write's expiry is this
         * clock's time when the write is made plus its ttl, and a read hides values whose expiry is at or before
         * this clock's time when it reads. Readers in other processes compare with their own clocks, so clock skew
         * between processes moves expiry by the skew. Default {@link java.time.Clock#systemUTC()}; tests inject a
         * controllable clock.
         *
         * @param clock the clock, only its {@link java.time.Clock#millis()} is used
         * @return this
         * @throws NullPointerException if {@code clock} is null
         */
        public Builder clock(java.time.Clock clock) {
            this.clock = java.util.Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * How far registered change-feed consumers may hold back the trim of a log: after a checkpoint through
         * offset {@code c}, the log is trimmed through {@code max(min(c, slowest), c - entries)}, where
         * {@code slowest} is the lowest position of the tree's registered consumers in that partition
         * ({@link Tree#changes(String, dev.lattice.engine.feed.ChangePosition)}). So a log keeps at most this many
         * entries at or below its latest checkpoint for consumers; a consumer further behind finds its entries
         * trimmed and gets {@link dev.lattice.engine.feed.ChangeFeedTrimmedException}. Counted in entries (offsets)
         * because that is what the engine knows of every log without reading it. Default
         * {@value #DEFAULT_CHANGE_FEED_RETENTION_ENTRIES}; 0 = consumers never hold back a trim.
         *
         * @param entries 0 or more
         * @return this
         * @throws IllegalArgumentException if negative
         */
        public Builder changeFeedRetentionEntries(long entries) {
            if (entries < 0) {
                throw new IllegalArgumentException("changeFeedRetentionEntries must be >= 0, got " + entries);
            }
            this.changeFeedRetentionEntries = entries;
            return this;
        }

        /**
         * Budget for {@link Lattice#close()} to drain in-flight writes and checkpoint. Default 30 s.
         *
         * @param timeout not negative
         * @return this
         */
        public Builder closeTimeout(Duration timeout) {
            this.closeTimeout = checkDuration("closeTimeout", timeout);
            return this;
        }

        /**
         * Deadline of each provider call the engine makes (stage, commit, reconcile, claim, replay reads,
         * checkpoint publish, trim, ownership checks). A call still running at its deadline is answered as an
         * uncertain outcome: the writes it carries complete with {@link WriteOutcomeUnknownException}, writes
         * queued behind it with {@link WriteFailedException}, new writes to the log are refused with
         * {@link LatticeSaturatedException} until it returns, and an open waiting on it fails. The call itself is
         * not interrupted; it ends when the provider's own timeout fires (each provider page lists its defaults).
         * Default 30 s; {@link Duration#ZERO} disables the deadline.
         *
         * @param timeout not negative, at most 1 hour
         * @return this
         */
        public Builder providerCallTimeout(Duration timeout) {
            this.providerCallTimeout = checkDuration("providerCallTimeout", timeout);
            if (timeout.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("providerCallTimeout must be at most 1 hour, got " + timeout);
            }
            return this;
        }

        /**
         * How often a log that committed nothing since the last check proves it still holds its fence, with one
         * cheap fenced provider call ({@link dev.lattice.spi.WalStorageProvider#checkFence}). This bounds how long a
         * process whose tree was claimed by another process keeps serving reads: at most this interval plus one
         * provider call, after which every read and write of the tree throws {@link OwnershipLostException}.
         * Default 1 s; {@link Duration#ZERO} turns the check off (then only a write, trim or checkpoint reveals the
         * loss).
         *
         * @param interval not negative; zero or at least 10 ms
         * @return this
         */
        public Builder ownershipCheckInterval(Duration interval) {
            this.ownershipCheckInterval = checkDuration("ownershipCheckInterval", interval);
            if (!interval.isZero() && interval.toMillis() < 10) {
                throw new IllegalArgumentException("ownershipCheckInterval must be zero or at least 10 ms, got "
                        + interval);
            }
            return this;
        }

        /**
         * A bound on stale reads after a lost claim: a read of a log is served only if a fenced provider call on
         * that log (a commit, an ownership check or a proof made for the read) that started at most this long ago
         * succeeded; otherwise the read first proves the fence with one cheap call
         * ({@link dev.lattice.spi.WalStorageProvider#checkFence}) and throws {@link OwnershipLostException} when
         * another process claimed the log. So a process frozen (GC pause, SIGSTOP) while another claimed its logs
         * serves no read from before the claim, as long as the other process claims at least this long after this
         * one's last proof (a cluster makes sure of that: a new owner is chosen only after the old one is downed,
         * which takes longer than the lease). A partial tree's {@link PartialTree#host} also waits out the lease after
         * its claim before it serves, so the bound holds even when two processes are told to own one log at once.
         * Reads on a busy or recently checked log cost nothing extra. Default
         * {@link Duration#ZERO}: off (the embedded engine relies on {@link #ownershipCheckInterval}).
         *
         * @param lease not negative; zero (off) or at least 10 ms
         * @return this
         */
        public Builder readLease(Duration lease) {
            this.readLease = checkDuration("readLease", lease);
            if (!lease.isZero() && lease.toMillis() < 10) {
                throw new IllegalArgumentException("readLease must be zero or at least 10 ms, got " + lease);
            }
            return this;
        }

        /**
         * How often a read-only follower ({@link Lattice#openReadOnly(LatticeConfig)}) reads the tails of the logs it
         * follows. A follower's reads lag the owner by about this interval plus one provider read. Ignored by a
         * writing lattice. Default 50 ms.
         *
         * @param interval at least 1 ms
         * @return this
         * @throws IllegalArgumentException if null, negative or under 1 ms
         */
        public Builder followerPollInterval(Duration interval) {
            this.followerPollInterval = checkDuration("followerPollInterval", interval);
            if (interval.toMillis() < 1) {
                throw new IllegalArgumentException("followerPollInterval must be at least 1 ms, got " + interval);
            }
            return this;
        }

        /**
         * The value of the {@code lattice.name} tag every meter of this instance carries, so that several instances can
         * share one registry. Default: the default provider's URI without credentials or query (for example
         * {@code chronicle:./data}), stable across restarts; a second open instance with the same name in this JVM
         * gets {@code -2}, {@code -3}... appended.
         *
         * @param name 1 to 128 characters
         * @return this
         * @throws IllegalArgumentException if the name is blank or longer than 128 characters
         */
        public Builder metricsName(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank() || name.length() > 128) {
                throw new IllegalArgumentException("metricsName must be 1 to 128 characters, got '" + name + "'");
            }
            this.metricsName = name;
            return this;
        }

        /**
         * Whether per-log meters carry a {@code partition} tag. Default true; false aggregates them per tree
         * (counters and timers shared, gauges summed), which keeps the series count of many-partition trees low.
         *
         * @param enabled whether to tag by partition
         * @return this
         */
        public Builder meterPartitionTag(boolean enabled) {
            this.meterPartitionTag = enabled;
            return this;
        }

        /**
         * Where meters go; default a private {@code SimpleMeterRegistry} (see {@link Lattice#meterRegistry()}).
         *
         * @param registry the registry
         * @return this
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meterRegistry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Estimated bytes of all memtables (recent writes held in the heap) of all open trees. On a provider with a
         * run store ({@code ProviderFeature.RUNS}) a write that finds the budget spent asks for flushes and waits for
         * them up to {@link #admissionTimeout}, then fails with {@link LatticeSaturatedException} (flush behind); on a
         * provider without one, where all data stays in the heap, such a write is refused with
         * {@link MemoryBudgetExceededException}. Default a quarter of the JVM's max heap (the block cache, run
         * indexes and the runs being written need the rest).
         *
         * @param bytes at least 1
         * @return this
         */
        public Builder memoryBudgetBytes(long bytes) {
            this.memoryBudgetBytes = checkLong("memoryBudgetBytes", bytes, 1, Long.MAX_VALUE);
            return this;
        }

        /**
         * Memtable bytes (estimated) at which a partition's memtable is frozen and flushed as a level-0 run, on
         * providers with a run store. Default {@value LatticeConfig#DEFAULT_MEMTABLE_BYTES}, or a sixteenth of the
         * max heap when that is smaller (at least 1 MiB). A flush also happens
         * when the checkpoint policy ({@link #checkpointEveryEntries}, {@link #checkpointEveryBytes}, the replay
         * budget) says the log tail is long enough, and when the memory budget runs low.
         *
         * @param bytes from 64 KiB
         * @return this
         */
        public Builder memtableBytes(long bytes) {
            this.memtableBytes = checkLong("memtableBytes", bytes, 64 << 10, Long.MAX_VALUE);
            return this;
        }

        /**
         * Bytes of decoded run blocks kept in the process-wide block cache (Caffeine, weighted by block size).
         * Default the smaller of 64 MiB and an eighth of the JVM's max heap; 0 disables the cache.
         *
         * @param bytes at least 0
         * @return this
         */
        public Builder blockCacheBytes(long bytes) {
            this.blockCacheBytes = checkLong("blockCacheBytes", bytes, 0, Long.MAX_VALUE);
            return this;
        }

        /**
         * Target size of the data blocks of runs written from now on (a block closes once it reaches it; runs
         * already written keep theirs). Default 0: the run store's preferred read size, clamped to 4-64 KiB
         * (64 KiB on Chronicle and the in-memory provider). On a local run store (Chronicle) a read of a block that
         * misses the block cache copies, checks and decodes the whole block, so 4 KiB blocks (RocksDB's default)
         * made YCSB C about 5x faster at 300,000 records (docs/benchmarks.md, "YCSB C and B"), at the cost of 16x
         * more block-index entries in the heap (about 100 bytes each, counted in the memory budget).
         *
         * @param bytes 0 (the store's preferred read size) or 1 KiB to 1 MiB
         * @return this
         * @throws IllegalArgumentException if {@code bytes} is neither 0 nor within 1 KiB .. 1 MiB
         */
        public Builder runBlockBytes(int bytes) {
            if (bytes != 0 && (bytes < 1024 || bytes > (1 << 20))) {
                throw new IllegalArgumentException("runBlockBytes must be 0 (the run store's preferred read size) or "
                        + "within 1024 .. 1048576 bytes, got " + bytes);
            }
            this.runBlockBytes = bytes;
            return this;
        }

        /**
         * Level-0 runs of a partition at which they may be compacted into level 1: they are once level 1 holds at
         * most {@code targetRunBytes}, or level 0 holds at least as many bytes as level 1, or level 0 holds four times
         * this many runs (docs/engine.md, "Flush and compaction"). Default
         * {@value LatticeConfig#DEFAULT_LEVEL0_COMPACTION_TRIGGER}.
         *
         * @param runs from 2 to 64
         * @return this
         */
        public Builder level0CompactionTrigger(int runs) {
            this.level0CompactionTrigger = (int) checkLong("level0CompactionTrigger", runs, 2, 64);
            return this;
        }

        /**
         * How long a partition must have applied no write before it merges its level 0 (docs/engine.md, "Flush and
         * compaction"): its level-0 runs are merged into one sorted run (into level 1 when level 0 holds at least as
         * many bytes), so reads of a tree that stopped changing consult one level-0 run instead of up to
         * {@code 4 * level0CompactionTrigger}; the memtable stays. Done once per idle period, and only when the
         * smaller level-0 runs hold at least half the bytes of the largest, which bounds how often a byte is
         * rewritten. Checked on the ownership-check timer, so it needs {@link #ownershipCheckInterval} on. Default
         * 10 s; {@link Duration#ZERO} turns it off.
         *
         * @param delay zero (off) or from 100 ms to 1 day
         * @return this
         * @throws NullPointerException if {@code delay} is null
         * @throws IllegalArgumentException if {@code delay} is negative or outside that range
         */
        public Builder idleMergeDelay(Duration delay) {
            this.idleMergeDelay = checkDuration("idleMergeDelay", delay);
            if (!delay.isZero() && (delay.toMillis() < 100 || delay.compareTo(Duration.ofDays(1)) > 0)) {
                throw new IllegalArgumentException("idleMergeDelay must be zero or from 100 ms to 1 day, got " + delay);
            }
            return this;
        }

        /**
         * Size ratio between adjacent levels: level {@code n+1} may hold this many times the bytes of level
         * {@code n} (level 1 may hold {@code ratio} memtables) before one of its runs is merged down. Default
         * {@value LatticeConfig#DEFAULT_LEVEL_SIZE_RATIO}.
         *
         * @param ratio from 2 to 100
         * @return this
         */
        public Builder levelSizeRatio(int ratio) {
            this.levelSizeRatio = (int) checkLong("levelSizeRatio", ratio, 2, 100);
            return this;
        }

        /**
         * Bytes at which a compaction starts a new output run (also bounded by the provider's
         * {@code RunLimits.maxRunBytes}); a flush also cuts its level-0 runs there. Default
         * {@value LatticeConfig#DEFAULT_TARGET_RUN_BYTES}, or a sixteenth of the max heap when that is smaller (at
         * least 1 MiB).
         *
         * @param bytes from 64 KiB
         * @return this
         */
        public Builder targetRunBytes(long bytes) {
            this.targetRunBytes = checkLong("targetRunBytes", bytes, 64 << 10, Long.MAX_VALUE);
            return this;
        }

        /**
         * Threads that run flushes and compactions for all trees (one task per partition at a time). Default
         * {@value LatticeConfig#DEFAULT_MAINTENANCE_THREADS}.
         *
         * @param threads from 1 to 64
         * @return this
         */
        public Builder maintenanceThreads(int threads) {
            this.maintenanceThreads = (int) checkLong("maintenanceThreads", threads, 1, 64);
            return this;
        }

        /**
         * Longest key in UTF-8 bytes. Default 1024.
         *
         * @param bytes 1..{@value #MAX_KEY_BYTES_LIMIT}
         * @return this
         */
        public Builder maxKeyBytes(int bytes) {
            this.maxKeyBytes = check("maxKeyBytes", bytes, 1, MAX_KEY_BYTES_LIMIT);
            return this;
        }

        /**
         * Executor for blocking provider calls (e.g. a virtual-thread executor on JDK 21+). Default: an internal
         * cached pool of daemon threads. The lattice does not shut a given executor down.
         *
         * @param executor the executor
         * @return this
         */
        public Builder ioExecutor(ExecutorService executor) {
            this.ioExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * Registers a further provider under a key (e.g. a second storage account), opened by URI when the lattice
         * opens and closed with it. Trees placed on the key (see {@link #placement}) keep their logs there.
         *
         * @param key the provider key: 1..64 characters of {@code [A-Za-z0-9._-]}, not {@code default}
         * @param uri the provider URI
         * @param options options for its factory
         * @return this
         * @throws IllegalArgumentException if the key is malformed, reserved or already registered
         */
        public Builder namedProvider(String key, String uri, Map<String, String> options) {
            checkKey(key);
            namedProviders.put(key, new NamedProvider(Objects.requireNonNull(uri, "uri"), Map.copyOf(options), null,
                    true));
            return this;
        }

        /**
         * Registers a further provider instance under a key.
         *
         * @param key the provider key (rules of {@link #namedProvider(String, String, Map)})
         * @param provider an open provider
         * @param closeWithLattice whether {@link Lattice#close()} closes it
         * @return this
         * @throws IllegalArgumentException if the key is malformed, reserved or already registered
         */
        public Builder namedProvider(String key, WalStorageProvider provider, boolean closeWithLattice) {
            checkKey(key);
            namedProviders.put(key, new NamedProvider(null, Map.of(), Objects.requireNonNull(provider, "provider"),
                    closeWithLattice));
            return this;
        }

        /**
         * How new trees place their logs on provider keys. Default {@link PlacementPolicy#allOnDefault()}.
         *
         * @param policy the policy
         * @return this
         */
        public Builder placement(PlacementPolicy policy) {
            this.placementPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        private void checkKey(String key) {
            Objects.requireNonNull(key, "key");
            if (!key.matches("[A-Za-z0-9._-]{1,64}")) {
                throw new IllegalArgumentException("provider key '" + key + "' must be 1..64 characters of [A-Za-z0-9._-]");
            }
            if (key.equals(PlacementPolicy.DEFAULT_KEY)) {
                throw new IllegalArgumentException("provider key 'default' is reserved for the main provider "
                        + "(set it with uri(...) or provider(...))");
            }
            if (namedProviders.containsKey(key)) {
                throw new IllegalArgumentException("provider key '" + key + "' is already registered");
            }
        }

        /**
         * Builds the configuration from the values set so far (defaults for the rest).
         *
         * @return the configuration
         * @throws IllegalStateException if neither a URI nor a provider was set
         */
        public LatticeConfig build() {
            if (uri == null && provider == null) {
                throw new IllegalStateException("set a provider URI (uri(...)) or a provider instance (provider(...))");
            }
            return new LatticeConfig(this);
        }

        private static int check(String name, int v, int min, int max) {
            if (v < min || v > max) {
                throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", got " + v);
            }
            return v;
        }

        /** A size default: {@code max}, or a sixteenth of the max heap when that is smaller (at least 1 MiB). */
        private static long heapShare(long max) {
            return Math.max(1L << 20, Math.min(max, Runtime.getRuntime().maxMemory() / 16));
        }

        private static long checkLong(String name, long v, long min, long max) {
            if (v < min || v > max) {
                throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", got " + v);
            }
            return v;
        }

        private static Duration checkDuration(String name, Duration d) {
            Objects.requireNonNull(d, name);
            if (d.isNegative()) {
                throw new IllegalArgumentException(name + " must not be negative, got " + d);
            }
            return d;
        }
    }
}
