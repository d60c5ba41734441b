package dev.lattice.provider.azure.blob;

import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ReplayCostModel;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The settings of an {@link AzureBlobWalStorageProvider}: where it stores (container, name prefix), the service
 * limits it enforces on itself, how it packs batches into blocks, and the figures of its replay cost model.
 * Credentials are not part of it: they live in the {@code BlobServiceClient} handed to the provider.
 *
 * <p>Immutable and thread-safe. Build with {@link #builder(String)}.
 */
public final class AzureBlobConfig {

    /** Largest append block of service versions up to 2021-12-02 (and the default here): 4 MiB. */
    public static final int SERVICE_MAX_BLOCK_BYTES_OLD = 4 << 20;
    /** Largest append block of service versions 2022-11-02 and later: 100 MiB. */
    public static final int SERVICE_MAX_BLOCK_BYTES_NEW = 100 << 20;
    /** Committed blocks an append blob can hold (a service limit). */
    public static final int SERVICE_MAX_BLOCKS_PER_APPEND_BLOB = 50_000;
    /** Default segment roll point: well before {@link #SERVICE_MAX_BLOCKS_PER_APPEND_BLOB}. */
    public static final int DEFAULT_MAX_BLOCKS_PER_SEGMENT = 40_000;
    /** Default segment size bound: 1 GiB. */
    public static final long DEFAULT_MAX_SEGMENT_BYTES = 1L << 30;
    /** Default entries per batch. */
    public static final int DEFAULT_MAX_ENTRIES_PER_BATCH = 10_000;
    /** Default checkpoint size bound: 1 GiB. */
    public static final long DEFAULT_MAX_CHECKPOINT_BYTES = 1L << 30;
    /** Default inline tail: committed frames kept in the manifest until they fill 64 KiB. */
    public static final int DEFAULT_INLINE_TAIL_BYTES = 64 << 10;
    /** Default most frames in the inline tail. */
    public static final int DEFAULT_INLINE_TAIL_BATCHES = 1024;
    /** Default download range for segment reads: 8 MiB. */
    public static final int DEFAULT_READ_CHUNK_BYTES = 8 << 20;
    /** Default segment cache budget: 64 MiB. */
    public static final long DEFAULT_CACHE_BYTES = 64L << 20;
    /**
     * Default service-side read pace per committed block, in milliseconds: measured on a real account in the
     * Orleans.Journaling report (1,006 blocks read in 5.7-5.9 s).
     */
    public static final double DEFAULT_REPLAY_MILLIS_PER_BLOCK = 5.7;
    /** Default link bandwidth for the replay model, in Mbit/s (the same report's link). */
    public static final double DEFAULT_REPLAY_MBIT_PER_SECOND = 100;

    private static final Pattern CONTAINER = Pattern.compile("[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]");

    private final String container;
    private final String prefix;
    private final boolean createContainer;
    private final int maxBlockBytes;
    private final int maxBlocksPerSegment;
    private final long maxSegmentBytes;
    private final int maxEntriesPerBatch;
    private final long maxCheckpointBytes;
    private final int inlineTailBytes;
    private final int inlineTailBatches;
    private final int readChunkBytes;
    private final long cacheBytes;
    private final double replayMillisPerBlock;
    private final double replayMbitPerSecond;

    private AzureBlobConfig(Builder b) {
        this.container = b.container;
        this.prefix = b.prefix;
        this.createContainer = b.createContainer;
        this.maxBlockBytes = b.maxBlockBytes;
        this.maxBlocksPerSegment = b.maxBlocksPerSegment;
        this.maxSegmentBytes = b.maxSegmentBytes;
        this.maxEntriesPerBatch = b.maxEntriesPerBatch;
        this.maxCheckpointBytes = b.maxCheckpointBytes;
        this.inlineTailBytes = b.inlineTailBytes;
        this.inlineTailBatches = b.inlineTailBatches;
        this.readChunkBytes = b.readChunkBytes;
        this.cacheBytes = b.cacheBytes;
        this.replayMillisPerBlock = b.replayMillisPerBlock;
        this.replayMbitPerSecond = b.replayMbitPerSecond;
    }

    /**
     * Starts a configuration.
     *
     * @param container the blob container (3-63 characters: lower-case letters, digits, single dashes, starting and
     *     ending with a letter or digit)
     * @return a builder with every default set
     * @throws NullPointerException if {@code container} is null
     * @throws IllegalArgumentException if the name breaks the service's container naming rule
     */
    public static Builder builder(String container) {
        return new Builder(validateContainer(container));
    }

    /**
     * Checks a container name against the service's rule.
     *
     * @param container the name
     * @return the name
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException if it breaks the rule (the message states it)
     */
    public static String validateContainer(String container) {
        Objects.requireNonNull(container, "container");
        if (!CONTAINER.matcher(container).matches()) {
            throw new IllegalArgumentException("container name '" + container + "' must be 3-63 characters of"
                    + " lower-case letters, digits and single dashes, starting and ending with a letter or digit");
        }
        return container;
    }

    /** @return the container */
    public String container() {
        return container;
    }

    /** @return the blob name prefix every blob of this provider starts with ("" or ending in "/") */
    public String prefix() {
        return prefix;
    }

    /** @return whether the container is created on first write when missing */
    public boolean createContainer() {
        return createContainer;
    }

    /** @return the largest append block or checkpoint block this provider sends, in bytes */
    public int maxBlockBytes() {
        return maxBlockBytes;
    }

    /** @return committed blocks after which a segment rolls to a new append blob */
    public int maxBlocksPerSegment() {
        return maxBlocksPerSegment;
    }

    /** @return committed bytes after which a segment rolls to a new append blob */
    public long maxSegmentBytes() {
        return maxSegmentBytes;
    }

    /** @return most entries per batch (declared limit) */
    public int maxEntriesPerBatch() {
        return maxEntriesPerBatch;
    }

    /** @return largest checkpoint stream, in bytes (declared limit) */
    public long maxCheckpointBytes() {
        return maxCheckpointBytes;
    }

    /** @return bytes of committed frames kept inline in the manifest before a flush to a segment; 0 = off */
    public int inlineTailBytes() {
        return inlineTailBytes;
    }

    /** @return most frames kept inline in the manifest */
    public int inlineTailBatches() {
        return inlineTailBatches;
    }

    /** @return bytes downloaded per segment range request */
    public int readChunkBytes() {
        return readChunkBytes;
    }

    /** @return memory budget of the segment cache, in bytes */
    public long cacheBytes() {
        return cacheBytes;
    }

    /** @return the replay model's service-side pace per block, in milliseconds */
    public double replayMillisPerBlock() {
        return replayMillisPerBlock;
    }

    /** @return the replay model's link bandwidth, in Mbit/s */
    public double replayMbitPerSecond() {
        return replayMbitPerSecond;
    }

    /**
     * The SPI limits that follow from the block size: a batch is one frame and must fit one append block with its
     * block header (8 bytes), frame header and checksum (48 bytes) and a 4-byte length per entry.
     *
     * @return the limits to declare
     */
    public ProviderLimits limits() {
        long batch = maxBatchBytes(maxBlockBytes, maxEntriesPerBatch);
        return new ProviderLimits((int) batch, batch, maxEntriesPerBatch, maxCheckpointBytes);
    }

    private static long maxBatchBytes(int blockBytes, int entries) {
        return blockBytes - Frames.BLOCK_HEADER_BYTES - Frames.FRAME_HEADER_BYTES - Frames.CRC_BYTES
                - (long) Frames.PER_ENTRY_BYTES * entries;
    }

    /**
     * The replay cost model to declare, derived from the service figures and how this provider packs batches:
     * transfer time per MiB at {@link #replayMbitPerSecond()}, plus {@link #replayMillisPerBlock()} per block. With
     * the inline tail on, a flushed block holds at least {@link #inlineTailBytes()} bytes or
     * {@link #inlineTailBatches()} batches, so a batch costs a block's pace divided by the batch bound and a MiB at
     * most {@code MiB / inlineTailBytes} blocks; with it off, every commit is one block (at most one per batch).
     *
     * @return the model
     */
    public ReplayCostModel replayCostModel() {
        double transferPerMiB = 8.0 * 1.048576 / replayMbitPerSecond * 1000.0;
        if (inlineTailBytes > 0) {
            return new ReplayCostModel(replayMillisPerBlock / inlineTailBatches,
                    transferPerMiB + replayMillisPerBlock * (1024.0 * 1024.0 / inlineTailBytes));
        }
        return new ReplayCostModel(replayMillisPerBlock,
                transferPerMiB + replayMillisPerBlock * (1024.0 * 1024.0 / maxBlockBytes));
    }

    @Override
    public String toString() {
        return "AzureBlobConfig[container=" + container + ", prefix='" + prefix + "', maxBlockBytes=" + maxBlockBytes
                + ", maxBlocksPerSegment=" + maxBlocksPerSegment + ", maxSegmentBytes=" + maxSegmentBytes
                + ", inlineTailBytes=" + inlineTailBytes + ", inlineTailBatches=" + inlineTailBatches + "]";
    }

    /** Builds an {@link AzureBlobConfig}; every setter validates its argument. Not thread-safe. */
    public static final class Builder {
        private final String container;
        private String prefix = "";
        private boolean createContainer = true;
        private int maxBlockBytes = SERVICE_MAX_BLOCK_BYTES_OLD;
        private int maxBlocksPerSegment = DEFAULT_MAX_BLOCKS_PER_SEGMENT;
        private long maxSegmentBytes = DEFAULT_MAX_SEGMENT_BYTES;
        private int maxEntriesPerBatch = DEFAULT_MAX_ENTRIES_PER_BATCH;
        private long maxCheckpointBytes = DEFAULT_MAX_CHECKPOINT_BYTES;
        private int inlineTailBytes = DEFAULT_INLINE_TAIL_BYTES;
        private int inlineTailBatches = DEFAULT_INLINE_TAIL_BATCHES;
        private int readChunkBytes = DEFAULT_READ_CHUNK_BYTES;
        private long cacheBytes = DEFAULT_CACHE_BYTES;
        private double replayMillisPerBlock = DEFAULT_REPLAY_MILLIS_PER_BLOCK;
        private double replayMbitPerSecond = DEFAULT_REPLAY_MBIT_PER_SECOND;

        private Builder(String container) {
            this.container = container;
        }

        /**
         * A blob name prefix, so several stores can share a container.
         *
         * @param prefix "" (default) or up to 200 characters of {@code [A-Za-z0-9._/-]}, not starting with '/';
         *     a missing trailing '/' is added
         * @return this
         * @throws IllegalArgumentException if the prefix breaks that rule
         */
        public Builder prefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            if (!prefix.isEmpty()) {
                if (prefix.length() > 200 || !prefix.matches("[A-Za-z0-9._-][A-Za-z0-9._/-]*")
                        || prefix.contains("//")) {
                    throw new IllegalArgumentException("prefix '" + prefix + "' must be up to 200 characters of"
                            + " [A-Za-z0-9._/-], not start with '/' and not contain '//'");
                }
                if (!prefix.endsWith("/")) {
                    prefix = prefix + "/";
                }
            }
            this.prefix = prefix;
            return this;
        }

        /**
         * @param create whether to create the container on first write when missing (default true)
         * @return this
         */
        public Builder createContainer(boolean create) {
            this.createContainer = create;
            return this;
        }

        /**
         * The largest block sent in one request. 4 MiB (default) fits every service version; 100 MiB needs
         * service version 2022-11-02 or later.
         *
         * @param bytes 64 KiB to 100 MiB
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder maxBlockBytes(int bytes) {
            this.maxBlockBytes = check("maxBlockBytes", bytes, 64 << 10, SERVICE_MAX_BLOCK_BYTES_NEW);
            return this;
        }

        /**
         * Committed blocks after which a segment rolls (the service caps an append blob at 50,000).
         *
         * @param blocks 1 to 50,000 (default 40,000; tests lower it to see rolls quickly)
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder maxBlocksPerSegment(int blocks) {
            this.maxBlocksPerSegment = check("maxBlocksPerSegment", blocks, 1, SERVICE_MAX_BLOCKS_PER_APPEND_BLOB);
            return this;
        }

        /**
         * Committed bytes after which a segment rolls.
         *
         * @param bytes 64 KiB to 50,000 times the block size (checked at build); default 1 GiB
         * @return this
         * @throws IllegalArgumentException if below 64 KiB
         */
        public Builder maxSegmentBytes(long bytes) {
            if (bytes < 64 << 10) {
                throw new IllegalArgumentException("maxSegmentBytes must be >= 65536, got " + bytes);
            }
            this.maxSegmentBytes = bytes;
            return this;
        }

        /**
         * @param entries most entries per batch, 1 to 100,000 (default 10,000); each costs 4 bytes of the block
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder maxEntriesPerBatch(int entries) {
            this.maxEntriesPerBatch = check("maxEntriesPerBatch", entries, 1, 100_000);
            return this;
        }

        /**
         * @param bytes largest checkpoint, 1 byte to 50,000 blocks (checked at build); default 1 GiB
         * @return this
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxCheckpointBytes(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxCheckpointBytes must be >= 1, got " + bytes);
            }
            this.maxCheckpointBytes = bytes;
            return this;
        }

        /**
         * Bytes of committed frames the manifest may carry before they are flushed to a segment as one block.
         * 0 turns the inline tail off: every commit then appends one block.
         *
         * @param bytes 0 to 1 MiB (default 64 KiB), and below the block size
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder inlineTailBytes(int bytes) {
            this.inlineTailBytes = check("inlineTailBytes", bytes, 0, 1 << 20);
            return this;
        }

        /**
         * @param batches most frames in the inline tail, 1 to 100,000 (default 1,024)
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder inlineTailBatches(int batches) {
            this.inlineTailBatches = check("inlineTailBatches", batches, 1, 100_000);
            return this;
        }

        /**
         * @param bytes bytes per segment range download, 64 KiB to 256 MiB (default 8 MiB)
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder readChunkBytes(int bytes) {
            this.readChunkBytes = check("readChunkBytes", bytes, 64 << 10, 256 << 20);
            return this;
        }

        /**
         * @param bytes memory budget of the segment cache, 0 (cache only what one read needs) to 16 GiB
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder cacheBytes(long bytes) {
            if (bytes < 0 || bytes > 16L << 30) {
                throw new IllegalArgumentException("cacheBytes must be in 0.." + (16L << 30) + ", got " + bytes);
            }
            this.cacheBytes = bytes;
            return this;
        }

        /**
         * @param millis the service's read pace per committed block, for the replay model, {@code >= 0}, finite
         *     (default 5.7)
         * @return this
         * @throws IllegalArgumentException if negative or not finite
         */
        public Builder replayMillisPerBlock(double millis) {
            if (!(millis >= 0) || Double.isInfinite(millis)) {
                throw new IllegalArgumentException("replayMillisPerBlock must be finite and >= 0, got " + millis);
            }
            this.replayMillisPerBlock = millis;
            return this;
        }

        /**
         * @param mbit the link's bandwidth for the replay model, in Mbit/s, {@code > 0}, finite (default 100)
         * @return this
         * @throws IllegalArgumentException if not positive or not finite
         */
        public Builder replayMbitPerSecond(double mbit) {
            if (!(mbit > 0) || Double.isInfinite(mbit)) {
                throw new IllegalArgumentException("replayMbitPerSecond must be finite and > 0, got " + mbit);
            }
            this.replayMbitPerSecond = mbit;
            return this;
        }

        /**
         * @return the configuration
         * @throws IllegalArgumentException if settings contradict each other (the message names them)
         */
        public AzureBlobConfig build() {
            if (maxBatchBytes(maxBlockBytes, maxEntriesPerBatch) < 1024) {
                throw new IllegalArgumentException("maxBlockBytes " + maxBlockBytes + " leaves less than 1 KiB per"
                        + " batch with maxEntriesPerBatch " + maxEntriesPerBatch);
            }
            if (maxSegmentBytes < maxBlockBytes) {
                throw new IllegalArgumentException("maxSegmentBytes (" + maxSegmentBytes + ") must be >= maxBlockBytes ("
                        + maxBlockBytes + ")");
            }
            long appendBlobMax = (long) SERVICE_MAX_BLOCKS_PER_APPEND_BLOB * maxBlockBytes;
            if (maxSegmentBytes > appendBlobMax) {
                throw new IllegalArgumentException("maxSegmentBytes (" + maxSegmentBytes + ") exceeds what an append"
                        + " blob of " + SERVICE_MAX_BLOCKS_PER_APPEND_BLOB + " blocks of " + maxBlockBytes
                        + " bytes can hold");
            }
            if (maxCheckpointBytes > appendBlobMax) {
                throw new IllegalArgumentException("maxCheckpointBytes (" + maxCheckpointBytes + ") exceeds "
                        + SERVICE_MAX_BLOCKS_PER_APPEND_BLOB + " blocks of " + maxBlockBytes + " bytes");
            }
            if (inlineTailBytes > maxBlockBytes - Frames.BLOCK_HEADER_BYTES) {
                throw new IllegalArgumentException("inlineTailBytes (" + inlineTailBytes
                        + ") must leave room for a block header within maxBlockBytes (" + maxBlockBytes + ")");
            }
            return new AzureBlobConfig(this);
        }

        private static int check(String name, int v, int min, int max) {
            if (v < min || v > max) {
                throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", got " + v);
            }
            return v;
        }
    }
}
