package dev.lattice.engine.feed;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * Where a change feed stands: per partition, the offset of the last log entry the consumer has processed
 * ({@code -1} = nothing yet). A feed resumed from a position delivers, per partition, exactly the changes of the
 * entries after it: no gap, no duplicate.
 *
 * <p>Two markers stand for positions resolved when a cursor opens: {@link #beginning()} (every partition at
 * {@code -1}: the whole log, which must not have been trimmed) and {@link #now()} (the committed tails at that
 * moment: only changes committed later).
 *
 * <p>Serialisable: {@link #toString()} gives {@code "v1:o0,o1,..."} (or {@code "v1:beginning"}, {@code "v1:now"}),
 * {@link #parse(String)} reads it back; {@link #toBytes()}/{@link #fromBytes(byte[])} are its UTF-8 form. Immutable and
 * thread-safe.
 */
public final class ChangePosition {

    private static final String PREFIX = "v1:";
    private static final ChangePosition BEGINNING = new ChangePosition(new long[0], false);
    private static final ChangePosition NOW = new ChangePosition(new long[0], true);

    private final long[] offsets;
    private final boolean now;

    private ChangePosition(long[] offsets, boolean now) {
        this.offsets = offsets;
        this.now = now;
    }

    /** {@return the marker for "from the first entry of every partition's log"} */
    public static ChangePosition beginning() {
        return BEGINNING;
    }

    /** {@return the marker for "from the committed tails when the cursor opens"} */
    public static ChangePosition now() {
        return NOW;
    }

    /**
     * A concrete position.
     *
     * @param offsets per partition (index = partition) the last processed offset, {@code -1} for none
     * @return the position
     * @throws NullPointerException if {@code offsets} is null
     * @throws IllegalArgumentException if empty or an offset is below {@code -1}
     */
    public static ChangePosition of(long... offsets) {
        Objects.requireNonNull(offsets, "offsets");
        if (offsets.length == 0) {
            throw new IllegalArgumentException("a position names at least one partition");
        }
        for (int p = 0; p < offsets.length; p++) {
            if (offsets[p] < -1) {
                throw new IllegalArgumentException("offset of partition " + p + " must be >= -1, got " + offsets[p]);
            }
        }
        return new ChangePosition(offsets.clone(), false);
    }

    /** {@return true for the {@link #beginning()} marker} */
    public boolean isBeginning() {
        return offsets.length == 0 && !now;
    }

    /** {@return true for the {@link #now()} marker} */
    public boolean isNow() {
        return now;
    }

    /** {@return the number of partitions of a concrete position (0 for a marker)} */
    public int partitions() {
        return offsets.length;
    }

    /**
     * The log offset this position has reached in one partition.
     *
     * @param partition a partition
     * @return the last processed offset of that partition ({@code -1} for every partition of {@link #beginning()})
     * @throws IllegalStateException for the {@link #now()} marker
     * @throws IndexOutOfBoundsException if a concrete position has no such partition
     */
    public long offset(int partition) {
        if (now) {
            throw new IllegalStateException("the 'now' marker has no offsets until a cursor resolves it");
        }
        if (offsets.length == 0) {
            if (partition < 0) {
                throw new IndexOutOfBoundsException("partition " + partition);
            }
            return -1;
        }
        return offsets[partition];
    }

    /**
     * A copy with one partition's offset changed.
     *
     * @param partition a partition of this concrete position
     * @param offset its new last processed offset
     * @return a copy with that partition moved
     * @throws IllegalStateException for a marker
     * @throws IllegalArgumentException if {@code offset < -1}
     */
    public ChangePosition with(int partition, long offset) {
        if (offsets.length == 0) {
            throw new IllegalStateException("a marker position cannot be changed; resolve it first");
        }
        long[] o = offsets.clone();
        o[partition] = offset;
        return of(o);
    }

    /** @return {@code "v1:"} followed by the comma-separated offsets, or by {@code beginning} / {@code now} */
    @Override
    public String toString() {
        if (now) {
            return PREFIX + "now";
        }
        if (offsets.length == 0) {
            return PREFIX + "beginning";
        }
        StringBuilder b = new StringBuilder(PREFIX);
        for (int p = 0; p < offsets.length; p++) {
            if (p > 0) {
                b.append(',');
            }
            b.append(offsets[p]);
        }
        return b.toString();
    }

    /**
     * Reads a position written by {@link #toString()}.
     *
     * @param text the text
     * @return the position
     * @throws NullPointerException if {@code text} is null
     * @throws IllegalArgumentException if it is not a position of this format
     */
    public static ChangePosition parse(String text) {
        Objects.requireNonNull(text, "text");
        if (!text.startsWith(PREFIX)) {
            throw new IllegalArgumentException("not a change position (expected prefix " + PREFIX + "): " + text);
        }
        String body = text.substring(PREFIX.length());
        if (body.equals("beginning")) {
            return BEGINNING;
        }
        if (body.equals("now")) {
            return NOW;
        }
        String[] parts = body.split(",", -1);
        long[] o = new long[parts.length];
        try {
            for (int i = 0; i < parts.length; i++) {
                o[i] = Long.parseLong(parts[i]);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a change position: " + text, e);
        }
        return of(o);
    }

    /** {@return the UTF-8 bytes of {@link #toString()}} */
    public byte[] toBytes() {
        return toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reads a position back from its bytes.
     *
     * @param bytes bytes written by {@link #toBytes()}
     * @return the position
     * @throws NullPointerException if {@code bytes} is null
     * @throws IllegalArgumentException if they are not a position
     */
    public static ChangePosition fromBytes(byte[] bytes) {
        return parse(new String(Objects.requireNonNull(bytes, "bytes"), StandardCharsets.UTF_8));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChangePosition c && c.now == now && Arrays.equals(c.offsets, offsets);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(offsets) * 31 + (now ? 1 : 0);
    }
}
