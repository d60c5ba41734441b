package dev.lattice.provider.dynamodb;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * Which epoch committed which offsets of a log, kept in the head item: segment {@code i} covers offsets from
 * {@code start[i]} up to {@code start[i+1] - 1} (the last one up to the tail) and was committed by {@code epoch[i]}.
 * A commit by another epoch than the last segment's starts a new segment at the old tail + 1; a trim drops
 * segments wholly at or below the watermark.
 *
 * <p>Readers use it to tell a committed chunk from a stale writer's leftover that landed inside a committed range:
 * a chunk is committed only when its epoch is the segment's epoch for its first offset (a stale writer's epoch is
 * always lower than the epoch that committed the range it wrote into; see docs/providers/dynamodb.md).
 *
 * <p>Encoding: varint count, then per segment varint start delta and varint epoch delta (both non-decreasing).
 * Immutable and thread-safe.
 */
final class Segments {

    static final Segments EMPTY = new Segments(new long[0], new long[0]);

    private final long[] starts;
    private final long[] epochs;

    private Segments(long[] starts, long[] epochs) {
        this.starts = starts;
        this.epochs = epochs;
    }

    /**
     * Decodes the head attribute.
     *
     * @param bytes the encoded form, empty for no segment
     * @return the segments
     * @throws IllegalArgumentException if the bytes are malformed
     */
    static Segments decode(byte[] bytes) {
        if (bytes.length == 0) {
            return EMPTY;
        }
        Varint.Reader r = new Varint.Reader(bytes);
        int count = Math.toIntExact(r.next());
        long[] s = new long[count];
        long[] e = new long[count];
        long start = 0;
        long epoch = 0;
        for (int i = 0; i < count; i++) {
            start += r.next();
            epoch += r.next();
            s[i] = start;
            e[i] = epoch;
        }
        if (r.hasMore()) {
            throw new IllegalArgumentException("trailing bytes after " + count + " segments");
        }
        return new Segments(s, e);
    }

    /** @return the encoded form (empty for no segment) */
    byte[] encode() {
        if (starts.length == 0) {
            return new byte[0];
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(2 + starts.length * 4);
        Varint.write(out, starts.length);
        long prevStart = 0;
        long prevEpoch = 0;
        for (int i = 0; i < starts.length; i++) {
            Varint.write(out, starts[i] - prevStart);
            Varint.write(out, epochs[i] - prevEpoch);
            prevStart = starts[i];
            prevEpoch = epochs[i];
        }
        return out.toByteArray();
    }

    /**
     * The epoch that committed an offset.
     *
     * @param offset an offset at or below the tail
     * @return the epoch, or {@code -1} when no segment covers it (below the first one)
     */
    long epochAt(long offset) {
        int i = Arrays.binarySearch(starts, offset);
        if (i < 0) {
            i = -i - 2;
        }
        return i < 0 ? -1 : epochs[i];
    }

    /**
     * The segments after a commit of offsets from {@code fromOffset} by {@code epoch}.
     *
     * @param fromOffset the old tail + 1
     * @param epoch the committing epoch
     * @return this when the last segment already has that epoch, else a copy with a new last segment
     */
    Segments withCommit(long fromOffset, long epoch) {
        int n = starts.length;
        if (n > 0 && epochs[n - 1] == epoch) {
            return this;
        }
        long[] s = Arrays.copyOf(starts, n + 1);
        long[] e = Arrays.copyOf(epochs, n + 1);
        s[n] = fromOffset;
        e[n] = epoch;
        return new Segments(s, e);
    }

    /**
     * The segments after a trim: drops every segment whose offsets are all at or below the watermark, keeping the
     * one that covers {@code watermark + 1} (a chunk straddling the watermark needs its epoch).
     *
     * @param watermark the new trim watermark
     * @return the pruned segments
     */
    Segments prunedThrough(long watermark) {
        int drop = 0;
        while (drop + 1 < starts.length && starts[drop + 1] <= watermark + 1) {
            drop++;
        }
        return drop == 0 ? this : new Segments(Arrays.copyOfRange(starts, drop, starts.length),
                Arrays.copyOfRange(epochs, drop, epochs.length));
    }

    /** @return the number of segments */
    int size() {
        return starts.length;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Segments[");
        for (int i = 0; i < starts.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(starts[i]).append("@").append(epochs[i]);
        }
        return sb.append(']').toString();
    }
}
