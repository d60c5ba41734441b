package dev.lattice.testkit;

import dev.lattice.spi.BatchTooLargeException;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.EntryTooLargeException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A decorator that holds a provider to the limits of the real service behind it, because emulators are lenient
 * (Azurite accepts a 5 MiB append block and entities above 1 MiB; the cloud does not). Configure it with the
 * service's limits expressed at the SPI level (largest entry, largest batch in bytes and entries, largest
 * checkpoint; the numbers below only illustrate the call):
 *
 * <pre>{@code
 * ProviderLimits azureTables = LimitEnforcingProvider.serviceLimits()
 *         .maxEntryBytes(960 * 1024).maxBatchBytes(3_800_000).maxEntriesPerBatch(99).build();
 * LimitEnforcingProvider.assertWithin(provider.describe().limits(), azureTables);  // declared limits fit
 * WalStorageProvider checked = new LimitEnforcingProvider(provider, azureTables);   // calls fit
 * }</pre>
 *
 * <p>Rules, for {@code stage} (and so {@code append}) and checkpoint {@code publish}:
 * <ul>
 *   <li>A call within the service limits is delegated unchanged.</li>
 *   <li>A call above the service limits that the provider's own declared limits already forbid is delegated, so the
 *       caller sees the provider's typed rejection ({@link EntryTooLargeException}, {@link BatchTooLargeException},
 *       {@link CheckpointTooLargeException}). If the provider accepts it anyway, it broke its declared limits:
 *       {@link ServiceLimitExceededError} after the call.</li>
 *   <li>A call above the service limits that the provider's declared limits would allow throws
 *       {@link ServiceLimitExceededError} before delegating (for a checkpoint: as soon as the provider has read more
 *       bytes than the service allows): the provider, or the code that sized the call from the declared limits, would
 *       rely on the backend to refuse it.</li>
 * </ul>
 * The failure is an {@link AssertionError} on purpose: a test must fail, and no retry loop may swallow it.
 *
 * <p>{@link #describe()} reports the delegate's limits unchanged, so the provider's own declaration is what is
 * tested; {@link #clamping(WalStorageProvider, ProviderLimits)} instead reports the tighter of the two, to run an
 * engine on a lenient provider as if it were the real service.
 *
 * <p>Thread-safe when the delegate is.
 */
public final class LimitEnforcingProvider extends ForwardingProvider {

    /** Builds a {@link ProviderLimits} for a service; every limit not set is unbounded. Not thread-safe. */
    public static final class ServiceLimitsBuilder {
        private int maxEntryBytes = Integer.MAX_VALUE;
        private long maxBatchBytes = Long.MAX_VALUE;
        private int maxEntriesPerBatch = Integer.MAX_VALUE;
        private long maxCheckpointBytes = Long.MAX_VALUE;

        private ServiceLimitsBuilder() {
        }

        /**
         * Sets the entry limit.
         *
         * @param bytes largest entry payload the service can store, inclusive, {@code >= 1}
         * @return this builder
         */
        public ServiceLimitsBuilder maxEntryBytes(int bytes) {
            this.maxEntryBytes = bytes;
            return this;
        }

        /**
         * Sets the batch byte limit.
         *
         * @param bytes largest sum of payload bytes in one batch, inclusive, {@code >= 1}
         * @return this builder
         */
        public ServiceLimitsBuilder maxBatchBytes(long bytes) {
            this.maxBatchBytes = bytes;
            return this;
        }

        /**
         * Sets the batch entry-count limit.
         *
         * @param entries most entries in one batch, inclusive, {@code >= 1}
         * @return this builder
         */
        public ServiceLimitsBuilder maxEntriesPerBatch(int entries) {
            this.maxEntriesPerBatch = entries;
            return this;
        }

        /**
         * Sets the checkpoint size limit.
         *
         * @param bytes largest checkpoint stream, inclusive, {@code >= 1}
         * @return this builder
         */
        public ServiceLimitsBuilder maxCheckpointBytes(long bytes) {
            this.maxCheckpointBytes = bytes;
            return this;
        }

        /**
         * Builds the limits.
         *
         * @return the limits
         * @throws IllegalArgumentException if a limit is not positive or the batch limit is below the entry limit
         */
        public ProviderLimits build() {
            return new ProviderLimits(maxEntryBytes, maxBatchBytes, maxEntriesPerBatch, maxCheckpointBytes);
        }
    }

    private final ProviderLimits service;
    private final ProviderDescriptor descriptor;

    /**
     * Wraps a provider; {@link #describe()} reports the delegate's own limits.
     *
     * @param delegate the provider under test
     * @param serviceLimits the real service's limits
     * @throws NullPointerException if an argument is null
     */
    public LimitEnforcingProvider(WalStorageProvider delegate, ProviderLimits serviceLimits) {
        this(delegate, serviceLimits, false);
    }

    private LimitEnforcingProvider(WalStorageProvider delegate, ProviderLimits serviceLimits, boolean clamp) {
        super(delegate);
        this.service = Objects.requireNonNull(serviceLimits, "serviceLimits");
        ProviderDescriptor d = delegate.describe();
        this.descriptor = clamp ? new ProviderDescriptor(d.name(), d.version(), tighter(d.limits(), service),
                d.durability(), d.features()) : d;
    }

    /**
     * Wraps a provider and reports the tighter of its limits and the service's in {@link #describe()}, so that code
     * sizing its calls from {@code describe()} behaves as it would against the real service.
     *
     * @param delegate the provider (e.g. the in-memory one)
     * @param serviceLimits the real service's limits
     * @return the decorator
     */
    public static LimitEnforcingProvider clamping(WalStorageProvider delegate, ProviderLimits serviceLimits) {
        return new LimitEnforcingProvider(delegate, serviceLimits, true);
    }

    /** {@return a builder for service limits, every limit unbounded until set} */
    public static ServiceLimitsBuilder serviceLimits() {
        return new ServiceLimitsBuilder();
    }

    /**
     * Checks that a provider's declared limits do not exceed the service's.
     *
     * @param declared what the provider declares in {@code describe().limits()}
     * @param service the real service's limits
     * @throws ServiceLimitExceededError naming every declared limit above the service's
     */
    public static void assertWithin(ProviderLimits declared, ProviderLimits service) {
        List<String> bad = new ArrayList<>();
        if (declared.maxEntryBytes() > service.maxEntryBytes()) {
            bad.add("maxEntryBytes " + declared.maxEntryBytes() + " > service's " + service.maxEntryBytes());
        }
        if (declared.maxBatchBytes() > service.maxBatchBytes()) {
            bad.add("maxBatchBytes " + declared.maxBatchBytes() + " > service's " + service.maxBatchBytes());
        }
        if (declared.maxEntriesPerBatch() > service.maxEntriesPerBatch()) {
            bad.add("maxEntriesPerBatch " + declared.maxEntriesPerBatch() + " > service's "
                    + service.maxEntriesPerBatch());
        }
        if (declared.maxCheckpointBytes() > service.maxCheckpointBytes()) {
            bad.add("maxCheckpointBytes " + declared.maxCheckpointBytes() + " > service's "
                    + service.maxCheckpointBytes());
        }
        if (!bad.isEmpty()) {
            throw new ServiceLimitExceededError("the provider declares limits above the real service's: "
                    + String.join("; ", bad));
        }
    }

    /**
     * Checks the wrapped provider's declared limits against the service's.
     *
     * @throws ServiceLimitExceededError as {@link #assertWithin(ProviderLimits, ProviderLimits)}
     */
    public void checkDeclaredLimits() {
        assertWithin(delegate.describe().limits(), service);
    }

    /** {@return the service limits this decorator enforces} */
    public ProviderLimits enforcedLimits() {
        return service;
    }

    private static ProviderLimits tighter(ProviderLimits a, ProviderLimits b) {
        return new ProviderLimits(Math.min(a.maxEntryBytes(), b.maxEntryBytes()),
                Math.max(Math.min(a.maxBatchBytes(), b.maxBatchBytes()),
                        Math.min(a.maxEntryBytes(), b.maxEntryBytes())),
                Math.min(a.maxEntriesPerBatch(), b.maxEntriesPerBatch()),
                Math.min(a.maxCheckpointBytes(), b.maxCheckpointBytes()));
    }

    /** @return the first service limit the batch breaks, or null */
    private String serviceViolation(LogId log, EncodedBatch batch) {
        try {
            service.check(log, batch);
            return null;
        } catch (EntryTooLargeException | BatchTooLargeException e) {
            return e.getMessage().replace("provider's limit", "service's limit");
        }
    }

    private static boolean declaredForbids(ProviderLimits declared, LogId log, EncodedBatch batch) {
        try {
            declared.check(log, batch);
            return false;
        } catch (EntryTooLargeException | BatchTooLargeException e) {
            return true;
        }
    }

    /** @return the limits reported by {@link #describe()} (the delegate's, or the tighter ones when clamping) */
    @Override
    public ProviderDescriptor describe() {
        return descriptor;
    }

    /**
     * Stages through the delegate, enforcing the service's limits as described on the class.
     *
     * @throws ServiceLimitExceededError when the batch is above the service's limits and the provider would (or did)
     *     accept it
     */
    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        String violation = batch == null ? null : serviceViolation(log, batch);
        if (violation == null) {
            return super.stage(log, fence, batch);
        }
        if (!declaredForbids(delegate.describe().limits(), log, batch)) {
            throw new ServiceLimitExceededError("stage of " + batch + " on " + log + " exceeds the real service: "
                    + violation + "; the provider's declared limits " + delegate.describe().limits()
                    + " would let it reach the backend");
        }
        StagedBatch s = super.stage(log, fence, batch);
        throw new ServiceLimitExceededError("the provider accepted " + batch + " on " + log + " although it breaks "
                + "its own declared limits and the service's: " + violation + " (receipt " + s + ")");
    }

    /** Counts the bytes the provider reads from a checkpoint stream; fails past {@code hardLimit}. */
    private static final class LimitedStream extends FilterInputStream {
        private final long hardLimit;
        private final LogId log;
        private long count;

        LimitedStream(InputStream in, long hardLimit, LogId log) {
            super(in);
            this.hardLimit = hardLimit;
            this.log = log;
        }

        private void add(long n) {
            count += n;
            if (count > hardLimit) {
                throw new ServiceLimitExceededError("checkpoint publish on " + log + " read more than " + hardLimit
                        + " bytes, the real service's maxCheckpointBytes, and the provider's declared limit would let"
                        + " it reach the backend");
            }
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                add(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                add(n);
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long s = super.skip(n);
            if (s > 0) {
                add(s);
            }
            return s;
        }
    }

    /**
     * Publishes through the delegate, counting the bytes it consumes.
     *
     * @throws ServiceLimitExceededError when the provider consumed (or accepted) more bytes than the service
     *     allows although its declared limit would let them through (or forbids them)
     */
    @Override
    protected CheckpointInfo publishCheckpoint(LogId log, Fence fence, long throughOffset, int formatVersion,
                                               InputStream data) {
        if (data == null) {
            return super.publishCheckpoint(log, fence, throughOffset, formatVersion, null);
        }
        long declared = delegate.describe().limits().maxCheckpointBytes();
        long max = service.maxCheckpointBytes();
        // When the provider's own limit is at or below the service's, let it read one byte past the service
        // limit (how it notices an over-long stream) and judge by the outcome instead.
        LimitedStream counted = new LimitedStream(data, declared > max ? max : Long.MAX_VALUE, log);
        CheckpointInfo info = super.publishCheckpoint(log, fence, throughOffset, formatVersion, counted);
        if (counted.count > max || info.sizeBytes() > max) {
            throw new ServiceLimitExceededError("the provider published a checkpoint of " + info.sizeBytes()
                    + " bytes on " + log + ", more than the service's limit of " + max + " bytes");
        }
        return info;
    }
}
