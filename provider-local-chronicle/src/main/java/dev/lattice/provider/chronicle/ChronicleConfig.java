package dev.lattice.provider.chronicle;

import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.support.ProviderOptions;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The configuration of a {@link ChronicleWalStorageProvider}: where it stores, how durably, and the Chronicle Queue
 * geometry (block size, roll cycle) from which its limits derive. Build one with {@link #builder(Path)} or from URI
 * options with {@link #fromOptions(Path, ProviderOptions)}.
 *
 * <p>Limits: Chronicle Queue bounds one document by its mapping overlap, a quarter of the block size (checked on
 * 2026.4: a document of exactly {@code blockSize / 4} bytes is written, one byte more fails with
 * {@code BufferOverflowException}). A frame carries one or more whole batches, so the largest batch is that
 * document size less the frame and per-entry overhead; see {@link #limits()}.
 *
 * <p>Immutable and thread-safe.
 */
public final class ChronicleConfig {

    /** Option name: {@code process} (default) or {@code fsync}. */
    public static final String OPT_DURABILITY = "durability";
    /** Option name: Chronicle block size in bytes, a power of two from 1 MiB to 1 GiB; suffixes k, m, g allowed. */
    public static final String OPT_BLOCK_SIZE = "blockSize";
    /** Option name: Chronicle roll cycle, see {@link #ROLL_CYCLE_NAMES}. */
    public static final String OPT_ROLL_CYCLE = "rollCycle";
    /** Option name: largest checkpoint, in bytes (default unbounded). */
    public static final String OPT_MAX_CHECKPOINT_BYTES = "maxCheckpointBytes";
    /**
     * Option name: bytes after which a log's cycle file is full and the next frame starts a new one (see
     * {@link Builder#rollBytes}); suffixes k, m, g allowed.
     */
    public static final String OPT_ROLL_BYTES = "rollBytes";
    /** Every option name the provider reads. */
    public static final Set<String> OPTIONS = Set.of(OPT_DURABILITY, OPT_BLOCK_SIZE, OPT_ROLL_CYCLE,
            OPT_MAX_CHECKPOINT_BYTES, OPT_ROLL_BYTES);

    /** Default block size: 16 MiB, so a document (and a batch) holds up to about 4 MiB. */
    public static final long DEFAULT_BLOCK_SIZE = 16L << 20;
    /** Smallest block size: 1 MiB. */
    public static final long MIN_BLOCK_SIZE = 1L << 20;
    /** Largest block size: 1 GiB (Chronicle caps the overlap, and so the document, there). */
    public static final long MAX_BLOCK_SIZE = 1L << 30;
    /** Default {@code rollBytes}: 16 MiB. */
    public static final long DEFAULT_ROLL_BYTES = 16L << 20;
    /** Smallest {@code rollBytes}: 64 KiB. */
    public static final long MIN_ROLL_BYTES = 64L << 10;
    /** Default roll cycle name: {@code hourly}. */
    public static final String DEFAULT_ROLL_CYCLE = "hourly";

    /** Roll cycle names accepted by the {@code rollCycle} option, with the Chronicle cycle each maps to. */
    static final Map<String, RollCycle> ROLL_CYCLES;

    /**
     * Roll cycle names accepted by the {@code rollCycle} option ({@code test_secondly}, a file per second, is for
     * tests only).
     */
    public static final Set<String> ROLL_CYCLE_NAMES;

    static {
        ChronicleQuiet.properties(); // before RollCycles initialises any Chronicle class
        Map<String, RollCycle> m = new LinkedHashMap<>();
        m.put("five_minutely", RollCycles.FIVE_MINUTELY);
        m.put("ten_minutely", RollCycles.TEN_MINUTELY);
        m.put("twenty_minutely", RollCycles.TWENTY_MINUTELY);
        m.put("half_hourly", RollCycles.HALF_HOURLY);
        m.put("hourly", RollCycles.FAST_HOURLY);
        m.put("two_hourly", RollCycles.TWO_HOURLY);
        m.put("four_hourly", RollCycles.FOUR_HOURLY);
        m.put("six_hourly", RollCycles.SIX_HOURLY);
        m.put("daily", RollCycles.FAST_DAILY);
        m.put("weekly", RollCycles.WEEKLY);
        m.put("test_secondly", TestRollCycles.TEST_SECONDLY);
        ROLL_CYCLES = Collections.unmodifiableMap(m);
        ROLL_CYCLE_NAMES = Collections.unmodifiableSet(new java.util.LinkedHashSet<>(m.keySet()));
    }

    private final Path root;
    private final ChronicleDurability durability;
    private final long blockSize;
    private final boolean blockSizeExplicit;
    private final String rollCycleName;
    private final long maxCheckpointBytes;
    private final long rollBytes;
    private final TimeProvider clock;
    private final boolean readOnly;

    private ChronicleConfig(Builder b) {
        this.root = b.root;
        this.durability = b.durability;
        this.blockSize = b.blockSize;
        this.blockSizeExplicit = b.blockSizeExplicit;
        this.rollCycleName = b.rollCycleName;
        this.maxCheckpointBytes = b.maxCheckpointBytes;
        this.rollBytes = b.rollBytes;
        this.clock = b.clock;
        this.readOnly = b.readOnly;
    }

    /**
     * Starts a configuration with the defaults: {@code process} durability, 16 MiB blocks, hourly roll cycle, cycle
     * files rolled at 16 MiB.
     *
     * @param root the directory the provider stores in (created if missing)
     * @return a builder
     * @throws NullPointerException if {@code root} is null
     */
    public static Builder builder(Path root) {
        return new Builder(Objects.requireNonNull(root, "root"));
    }

    /**
     * Reads a configuration from provider options ({@link #OPTIONS}); unknown options are rejected.
     *
     * @param root the directory
     * @param options the options
     * @return the configuration
     * @throws IllegalArgumentException naming the option, if one is unknown or malformed
     */
    public static ChronicleConfig fromOptions(Path root, ProviderOptions options) {
        options.requireKnown(OPTIONS);
        Builder b = builder(root);
        b.durability(options.getEnum(OPT_DURABILITY, ChronicleDurability.class, ChronicleDurability.PROCESS));
        String bs = options.get(OPT_BLOCK_SIZE);
        if (bs != null) {
            b.blockSize(parseSize(OPT_BLOCK_SIZE, bs));
        }
        String rc = options.get(OPT_ROLL_CYCLE);
        if (rc != null) {
            b.rollCycle(rc);
        }
        b.maxCheckpointBytes(options.getLong(OPT_MAX_CHECKPOINT_BYTES, Long.MAX_VALUE, 1, Long.MAX_VALUE));
        String rb = options.get(OPT_ROLL_BYTES);
        if (rb != null) {
            b.rollBytes(parseSize(OPT_ROLL_BYTES, rb));
        }
        return b.build();
    }

    /**
     * Parses a byte size: digits with an optional binary suffix {@code k}, {@code m} or {@code g} (also
     * {@code KiB}, {@code MiB}, {@code GiB}).
     *
     * @param name the option name, for the error
     * @param text the text
     * @return the size in bytes
     * @throws IllegalArgumentException if the text is not such a size
     */
    static long parseSize(String name, String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long mult = 1;
        for (String[] s : new String[][]{{"kib", "10"}, {"mib", "20"}, {"gib", "30"}, {"k", "10"}, {"m", "20"},
                {"g", "30"}}) {
            if (t.endsWith(s[0])) {
                mult = 1L << Integer.parseInt(s[1]);
                t = t.substring(0, t.length() - s[0].length()).trim();
                break;
            }
        }
        try {
            return Math.multiplyExact(Long.parseLong(t), mult);
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("option '" + name + "' must be a size in bytes like 16777216, 16m or "
                    + "16MiB, got '" + text + "'", e);
        }
    }

    /** @return the root directory */
    public Path root() {
        return root;
    }

    /** @return the durability mode */
    public ChronicleDurability durability() {
        return durability;
    }

    /** @return the Chronicle block size in bytes */
    public long blockSize() {
        return blockSize;
    }

    /** @return whether the block size was set explicitly (else the directory's recorded one is used) */
    boolean blockSizeExplicit() {
        return blockSizeExplicit;
    }

    /** @return the roll cycle's option name, e.g. {@code hourly} */
    public String rollCycleName() {
        return rollCycleName;
    }

    /** @return the Chronicle roll cycle used for new logs */
    RollCycle rollCycle() {
        return ROLL_CYCLES.get(rollCycleName);
    }

    /** @return the largest checkpoint, in bytes */
    public long maxCheckpointBytes() {
        return maxCheckpointBytes;
    }

    /**
     * @return true for a read-only instance (docs/providers/chronicle.md "Read-only instances"): no directory lock,
     *     no byte written, write calls refused
     */
    public boolean readOnly() {
        return readOnly;
    }

    /**
     * @return the bytes after which a log's cycle file is full: the next frame starts a new cycle file
     *     ({@link Long#MAX_VALUE}: cycle files roll by time only)
     */
    public long rollBytes() {
        return rollBytes;
    }

    /** @return the clock Chronicle uses to pick cycles (a test may control it) */
    TimeProvider clock() {
        return clock;
    }

    /**
     * The largest Chronicle document, and so the largest frame: a quarter of the block size.
     *
     * @return bytes
     */
    public int maxDocumentBytes() {
        return (int) (blockSize / 4);
    }

    /**
     * The limits this configuration supports: {@code maxEntriesPerBatch = min(65536, maxDocumentBytes / 256)},
     * {@code maxBatchBytes = maxEntryBytes = maxDocumentBytes - 68 - 28 - 4 * maxEntriesPerBatch} (frame header and
     * trailer, batch header, entry lengths), so one batch always fits one frame. With the default 16 MiB blocks:
     * 16,384 entries and 4,128,672 bytes per batch.
     *
     * @return the limits
     */
    public ProviderLimits limits() {
        int maxDoc = maxDocumentBytes();
        int entries = Math.min(65_536, maxDoc / 256);
        int batchBytes = maxDoc - Frames.FRAME_OVERHEAD - Frames.BATCH_OVERHEAD - Frames.ENTRY_OVERHEAD * entries;
        return new ProviderLimits(batchBytes, batchBytes, entries, maxCheckpointBytes);
    }

    /**
     * A copy with another block size (the one recorded in an existing directory).
     *
     * @param recorded the block size
     * @return the copy
     */
    ChronicleConfig withBlockSize(long recorded) {
        Builder b = toBuilder();
        b.blockSize(recorded);
        return b.build();
    }

    /** @return a read-only copy of this configuration */
    ChronicleConfig asReadOnly() {
        Builder b = toBuilder();
        b.readOnly = true;
        return b.build();
    }

    private Builder toBuilder() {
        Builder b = new Builder(root);
        b.durability = durability;
        b.blockSize = blockSize;
        b.blockSizeExplicit = blockSizeExplicit;
        b.rollCycleName = rollCycleName;
        b.maxCheckpointBytes = maxCheckpointBytes;
        b.rollBytes = rollBytes;
        b.clock = clock;
        b.readOnly = readOnly;
        return b;
    }

    @Override
    public String toString() {
        return "ChronicleConfig[root=" + root + ", durability=" + durability.name().toLowerCase(Locale.ROOT)
                + ", blockSize=" + blockSize + ", rollCycle=" + rollCycleName + ", maxCheckpointBytes="
                + maxCheckpointBytes + ", rollBytes=" + rollBytes + (readOnly ? ", readOnly" : "") + "]";
    }

    /** Builds a {@link ChronicleConfig}. Not thread-safe. */
    public static final class Builder {
        private final Path root;
        private ChronicleDurability durability = ChronicleDurability.PROCESS;
        private long blockSize = DEFAULT_BLOCK_SIZE;
        private boolean blockSizeExplicit;
        private String rollCycleName = DEFAULT_ROLL_CYCLE;
        private long maxCheckpointBytes = Long.MAX_VALUE;
        private long rollBytes = DEFAULT_ROLL_BYTES;
        private TimeProvider clock = SystemTimeProvider.INSTANCE;
        private boolean readOnly;

        private Builder(Path root) {
            this.root = root;
        }

        /**
         * @param mode the durability mode
         * @return this
         * @throws NullPointerException if {@code mode} is null
         */
        public Builder durability(ChronicleDurability mode) {
            this.durability = Objects.requireNonNull(mode, "durability");
            return this;
        }

        /**
         * @param bytes the Chronicle block size: a power of two from {@link #MIN_BLOCK_SIZE} to
         *     {@link #MAX_BLOCK_SIZE}. It bounds the largest batch (about a quarter of it) and is what each open log
         *     maps (1.25 times it); it is recorded in the directory on first use and cannot change afterwards.
         * @return this
         * @throws IllegalArgumentException if it is out of range or not a power of two
         */
        public Builder blockSize(long bytes) {
            if (bytes < MIN_BLOCK_SIZE || bytes > MAX_BLOCK_SIZE || Long.bitCount(bytes) != 1) {
                throw new IllegalArgumentException("option '" + OPT_BLOCK_SIZE + "' must be a power of two from "
                        + MIN_BLOCK_SIZE + " (1 MiB) to " + MAX_BLOCK_SIZE + " (1 GiB) bytes, got " + bytes);
            }
            this.blockSize = bytes;
            this.blockSizeExplicit = true;
            return this;
        }

        /**
         * @param name a roll cycle name from {@link #ROLL_CYCLE_NAMES} (case-insensitive, '-' accepted for '_')
         * @return this
         * @throws IllegalArgumentException if the name is unknown (the message lists the names)
         */
        public Builder rollCycle(String name) {
            String n = Objects.requireNonNull(name, "rollCycle").trim().toLowerCase(Locale.ROOT).replace('-', '_');
            if (!ROLL_CYCLES.containsKey(n)) {
                throw new IllegalArgumentException("option '" + OPT_ROLL_CYCLE + "' must be one of "
                        + ROLL_CYCLES.keySet() + ", got '" + name + "'");
            }
            this.rollCycleName = n;
            return this;
        }

        /**
         * @param bytes the largest checkpoint, in bytes, {@code >= 1}
         * @return this
         * @throws IllegalArgumentException if {@code bytes < 1}
         */
        public Builder maxCheckpointBytes(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("option '" + OPT_MAX_CHECKPOINT_BYTES + "' must be >= 1, got "
                        + bytes);
            }
            this.maxCheckpointBytes = bytes;
            return this;
        }

        /**
         * Sets when a log's cycle file is full: before a frame is written, a log whose current cycle file already
         * holds at least this many bytes rolls to a new cycle file, whatever the roll cycle's time. Trim deletes
         * whole cycle files, so this bounds the trimmed bytes a log keeps on disk to about one cycle file (this many
         * bytes plus one frame, at most a quarter of the block size). A cycle file rolled by size takes the next
         * cycle number, so the newest cycle can be ahead of the wall clock (docs/providers/chronicle.md "Trim and
         * retention").
         *
         * @param bytes at least {@link #MIN_ROLL_BYTES}; {@link Long#MAX_VALUE} rolls by time only; default
         *     {@link #DEFAULT_ROLL_BYTES}
         * @return this
         * @throws IllegalArgumentException if {@code bytes < MIN_ROLL_BYTES}
         */
        public Builder rollBytes(long bytes) {
            if (bytes < MIN_ROLL_BYTES) {
                throw new IllegalArgumentException("option '" + OPT_ROLL_BYTES + "' must be at least "
                        + MIN_ROLL_BYTES + " (64 KiB) bytes, got " + bytes);
            }
            this.rollBytes = bytes;
            return this;
        }

        /**
         * Sets the clock Chronicle picks cycles with (tests use it to cross cycle boundaries deterministically).
         *
         * @param clock the clock
         * @return this
         */
        Builder clock(TimeProvider clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Makes the instance read-only (docs/providers/chronicle.md "Read-only instances"): it takes no directory
         * lock, so it opens beside a writer instance (this or another process), never creates or changes a file,
         * reads what the writer has committed at the time of each call, and refuses write calls with
         * {@link dev.lattice.spi.ReadOnlyProviderException}. The durability option is then only reported.
         *
         * @param readOnly true for a read-only instance; default false
         * @return this
         */
        public Builder readOnly(boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /** @return the configuration */
        public ChronicleConfig build() {
            return new ChronicleConfig(this);
        }
    }
}
