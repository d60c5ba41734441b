package dev.lattice.provider.chronicle;

import java.util.Arrays;

/**
 * The in-memory index of one log's committed frames, in offset order: per frame its first offset, its Chronicle
 * index, its payload bytes and its framed bytes, in parallel primitive arrays (24 bytes per frame, plus up to 50%
 * slack from growth). A frame's last offset is the next frame's first offset minus one (the log's tail for the last
 * frame). A committed range whose frame failed its checksum is kept with {@link #CORRUPT} as its Chronicle index,
 * so reads stop there with {@code CorruptLogException} instead of skipping it.
 *
 * <p>Not thread-safe: guarded by its log's lock.
 */
final class FrameIndex {

    /** Chronicle index value marking a committed range whose frame cannot be read. */
    static final long CORRUPT = -1;

    private long[] first = new long[16];
    private long[] index = new long[16];
    private int[] payload = new int[16];
    private int[] framed = new int[16];
    private int start;
    private int end;

    /** @return the number of frames */
    int size() {
        return end - start;
    }

    /**
     * Appends a frame; its first offset must be above the previous frame's.
     *
     * @param firstOffset the frame's first offset
     * @param chronicleIndex its Chronicle index, or {@link #CORRUPT}
     * @param payloadBytes its payload bytes
     * @param frameBytes its framed bytes (document length)
     */
    void add(long firstOffset, long chronicleIndex, int payloadBytes, int frameBytes) {
        if (end == first.length) {
            if (start > 0) {
                compact();
            }
            if (end == first.length) {
                int cap = first.length + (first.length >> 1) + 1;
                first = Arrays.copyOf(first, cap);
                index = Arrays.copyOf(index, cap);
                payload = Arrays.copyOf(payload, cap);
                framed = Arrays.copyOf(framed, cap);
            }
        }
        first[end] = firstOffset;
        index[end] = chronicleIndex;
        payload[end] = payloadBytes;
        framed[end] = frameBytes;
        end++;
    }

    /**
     * Finds the frame holding an offset.
     *
     * @param offset the offset
     * @return the position (0-based, in {@code 0..size()-1}) of the last frame whose first offset is at or below
     *     {@code offset}, or -1 when every frame starts above it (or there is none)
     */
    int find(long offset) {
        int i = Arrays.binarySearch(first, start, end, offset);
        if (i >= 0) {
            return i - start;
        }
        int ins = -i - 1;
        return ins - 1 - start;
    }

    /** @return the first offset of frame {@code i} */
    long first(int i) {
        return first[start + i];
    }

    /** @return the Chronicle index of frame {@code i}, or {@link #CORRUPT} */
    long chronicleIndex(int i) {
        return index[start + i];
    }

    /** @return the payload bytes of frame {@code i} */
    int payloadBytes(int i) {
        return payload[start + i];
    }

    /** @return the framed bytes of frame {@code i} */
    int frameBytes(int i) {
        return framed[start + i];
    }

    /**
     * The last offset of a frame.
     *
     * @param i the frame's position
     * @param tail the log's committed tail (the last frame ends there)
     * @return the last offset, inclusive
     */
    long last(int i, long tail) {
        return start + i + 1 < end ? first[start + i + 1] - 1 : tail;
    }

    /**
     * Drops the first {@code n} frames.
     *
     * @param n how many, {@code 0..size()}
     */
    void dropFirst(int n) {
        start += n;
        if (start == end) {
            start = 0;
            end = 0;
        } else if (start > 1024 && start > size()) {
            compact();
        }
    }

    /** Drops every frame. */
    void clear() {
        start = 0;
        end = 0;
    }

    private void compact() {
        int n = end - start;
        System.arraycopy(first, start, first, 0, n);
        System.arraycopy(index, start, index, 0, n);
        System.arraycopy(payload, start, payload, 0, n);
        System.arraycopy(framed, start, framed, 0, n);
        start = 0;
        end = n;
    }
}
